import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { MockActivityEnvironment } from '@temporalio/testing';
import { loadConfig } from '../config/load';
import { totalCost, VERDICT_SCHEMA, type VerdictFile } from '../core/judge/verdict-file';
import { attemptOfManifest, datasetPrefix, verdictKey } from '../core/keys';
import { createDatasetActivities, type DatasetSummary } from '../activities/datasets/activities';
import { createObjectStore, type ObjectStore } from '../activities/storage/object-store';
import { connectClient } from '../client/connection';
import { recordTrajectory } from '../doubles/scripted-models/recorded-trajectory';
import { freeDisplay, isolatedEnv, REPO_CONFIG } from '../infra/ephemeral';
import { devEnv, stackDown, stackUp } from '../infra/stack';
import type { SpecializationProgress, SpecializationResult } from '../workflows/training/progress';
import { printTable } from './stats';
import { specializationWorkflowId } from '../workflows/names';

/**
 * Training-side figures on the whole dev stack (Temporal, MinIO, the scripted models, the
 * orchestrator, a vm-host with two real KAlgebra/TeXstudio desktops, the GPU worker with the
 * trainer doubles), isolated on free ports and displays:
 *
 * 1. Dataset build: `--trajectories` judged KAlgebra trajectories (recorded with the scripted models
 *    on a real 1920x1080 KAlgebra screenshot, every step judged positive, the judge's success for
 *    all: the most rows they can give) → the GRPO and the SFT dataset, built by the dataset
 *    activity as the workflows run it; its time, its rows and the bytes it writes to S3 (the
 *    screenshots are referenced by key, not copied).
 * 2. One specialization round with the doubles (`--tasks` generated tasks, one attempt each, the
 *    evaluation on the real tasks): the time of each stage, from the workflow's `progress` query
 *    polled every 200 ms.
 *
 *   node build/bench/training.js [--trajectories 100] [--tasks 4] [--software KAlgebra]
 */
const REPLAYABLE = ['A-01', 'A-03', 'B-01', 'B-07', 'C-01', 'C-04', 'C-05', 'C-08', 'C-09', 'D-02'];

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { trajectories: { type: 'string', default: '100' }, tasks: { type: 'string', default: '4' }, software: { type: 'string', default: 'KAlgebra' } } });
  const dataDir = mkdtempSync(path.join(tmpdir(), 'coda-training-bench-'));
  const base = { ...(await isolatedEnv(dataDir, 'coda-training-bench')), CODA_DISPLAY_BASE: String(freeDisplay(700)) };
  const config = loadConfig(REPO_CONFIG, base);
  const env = devEnv(config, base);
  try {
    console.log('starting an isolated dev stack (Temporal, MinIO, scripted models, orchestrator, vm-host, gpu worker, viewer)...');
    await stackUp(config, { headless: true, env });
    const store = createObjectStore(config.storage, env);
    await datasetBuild(store, config, env, Number(values.trajectories));
    await specializationRound(config, values.software, Number(values.tasks));
  } finally {
    await stackDown(config, { env });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function datasetBuild(store: ObjectStore, config: ReturnType<typeof loadConfig>, env: Record<string, string>, count: number): Promise<void> {
  const prefix = config.storage.prefix;
  const fixture = readFileSync(path.resolve(__dirname, '..', '..', 'bench', 'fixtures', 'kalgebra-1920x1080.png'));
  const stamp = Date.now();
  const runs = new Set<string>();
  for (let i = 0; i < count; i++) {
    // recordTrajectory writes attempt 0: one run per ten trajectories keeps every key distinct.
    const run = `dsbench${stamp}-${Math.floor(i / REPLAYABLE.length)}`;
    runs.add(run);
    const recorded = await recordTrajectory(store, config, env, run, REPLAYABLE[i % REPLAYABLE.length]!, async () => fixture);
    const verdict: VerdictFile = {
      schema: VERDICT_SCHEMA,
      manifestKey: recorded.manifestKey,
      label: 'default',
      plan: { lowResolutionVotes: 1, highResolutionVotes: 0, judges: [{ name: 'bench', model: 'bench' }], temperatures: { first: 0, repeat: 1, repeatTopP: 0.6 } },
      images: { low: { width: 640, height: 360 }, high: { width: 1280, height: 720 } },
      success: true,
      stoppedBecause: 'written by bench/training.ts: every step positive',
      positiveSteps: recorded.manifest.steps.map((s) => s.index),
      stepCount: recorded.manifest.steps.length,
      votes: [],
      cost: totalCost([]),
      judgedAt: new Date().toISOString(),
    };
    await store.putJson(verdictKey(prefix, attemptOfManifest(prefix, recorded.manifestKey)), verdict);
  }
  const activities = createDatasetActivities({ store, prefix, defaultScreen: { width: 1920, height: 1080 } });
  const rows: string[][] = [['dataset', 'trajectories', 'rows', 'build time', 'S3 bytes written', 'objects written', 'screenshots referenced']];
  for (const kind of ['grpo', 'sft'] as const) {
    const id = `dsbench${stamp}-${kind}`;
    const started = Date.now();
    const summary = (await new MockActivityEnvironment().run(activities.buildDataset, { id, kind, sources: [...runs].map((run) => ({ run, software: 'KAlgebra' })) })) as DatasetSummary;
    const ms = Date.now() - started;
    const written = await store.list(`${datasetPrefix(prefix, id)}/`);
    const bytes = (await Promise.all(written.map((key) => store.size(key)))).reduce((a, b) => a + b, 0);
    rows.push([kind.toUpperCase(), String(summary.trajectories), String(summary.rows), `${(ms / 1000).toFixed(2)} s`, `${(bytes / 1024).toFixed(0)} KiB`, String(written.length), `${(summary.bytes.images / 1024 / 1024).toFixed(1)} MiB`]);
  }
  printTable(`dataset build from ${count} judged trajectories (dataset activity, S3 on MinIO)`, rows);
}

async function specializationRound(config: ReturnType<typeof loadConfig>, software: string, tasks: number): Promise<void> {
  const client = await connectClient(config);
  const run = `bench-${Date.now()}`;
  const handle = await client.workflow.start('specialization', {
    taskQueue: config.taskQueues.orchestrator,
    workflowId: specializationWorkflowId(software, run),
    args: [{ software, run, rounds: 1, tasksPerRound: tasks, attempts: 1, includeSeeds: false, evaluationAttempts: 1 }],
  });
  const started = Date.now();
  const seen: Array<{ stage: string; at: number; progress?: SpecializationProgress }> = [];
  let finished = false;
  const result = handle.result().finally(() => (finished = true)) as Promise<SpecializationResult>;
  while (!finished) {
    const progress = await handle.query<SpecializationProgress>('progress').catch(() => undefined);
    if (progress !== undefined && seen.at(-1)?.stage !== progress.stage) seen.push({ stage: progress.stage, at: Date.now(), progress });
    else if (progress !== undefined && seen.length > 0) seen[seen.length - 1]!.progress = progress;
    await sleep(200);
  }
  const done = await result;
  const end = Date.now();
  const round = done.history.at(-1);
  const rows: string[][] = [['stage', 'seconds', 'counts when it ended']];
  for (let i = 0; i < seen.length; i++) {
    const s = seen[i]!;
    const next = seen[i + 1]?.at ?? end;
    const c = s.progress?.counts;
    rows.push([s.stage, ((next - s.at) / 1000).toFixed(1), c === undefined ? '' : `${c.tasks} tasks, ${c.rollouts} rollouts, ${c.judged} judged, ${c.positiveSteps} positive steps, ${c.samples} samples`]);
  }
  rows.push(['whole round', ((end - started) / 1000).toFixed(1), round === undefined ? '' : `checkpoint ${round.checkpoint}${round.skipped ? ` (${round.skipped})` : ''}, Average@1 ${round.averageAtK.toFixed(1)}%`]);
  printTable(`one specialization round of ${software} with the doubles (${tasks} generated tasks x 1 attempt, evaluation on the real tasks x 1), stages from the progress query`, rows);
  await client.connection.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
