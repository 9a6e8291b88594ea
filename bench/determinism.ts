import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import type { Client } from '@temporalio/client';
import { loadConfig } from '../config/load';
import { parseTrajectoryManifest } from '../apps/manifests';
import { hashText } from '../core/prng';
import { createObjectStore, type ObjectStore } from '../activities/storage/object-store';
import { connectClient } from '../client/connection';
import { freeDisplay, isolatedEnv } from '../infra/ephemeral';
import { devEnv, stackDown, stackUp } from '../infra/stack';
import type { SpecializationResult } from '../workflows/training/progress';
import { roundOptions, ROUND_OPTIONS, withScriptedModels, type RoundOptions } from './config-copy';
import { printTable } from './stats';
import { specializationWorkflowId } from '../workflows/names';
import { LEARNABLE_TASKS } from '../apps/kalgebra/seeds';

/**
 * Same seed, same run, whatever the concurrency (issue 26): the learning loop's KAlgebra
 * specialization — task generation, rollouts on real desktops, judging, GRPO by the OpenRLHF
 * double, serving, and every round's evaluation against one base run — run once per desktop count
 * on a fresh isolated dev stack, with the same run names and the same seed, then every rollout
 * each run left in S3 compared: its evaluators' verdict, its actions and its judge's verdict.
 * Identical outcomes at 1 and 3 desktops mean no draw depends on the order activities happen to
 * run in.
 *
 *   node build/bench/determinism.js [--desktops 1,3] [--seed 1] [--error-rate 0.5] [--rounds 2] [--k 2] [--attempts 2] [--tasks 6]
 */
const EVALUATION_TASKS = LEARNABLE_TASKS;
const RUN = 'same-k';
const BASE_RUN = 'same-base';

/** What one rollout ended as: the evaluators' verdict, a digest of its actions and the judge's verdict. */
type Outcomes = Map<string, string>;

interface Measured {
  readonly desktops: number;
  readonly outcomes: Outcomes;
  readonly averages: readonly string[];
  readonly seconds: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { ...ROUND_OPTIONS, rounds: { type: 'string', default: '2' }, desktops: { type: 'string', default: '1,3' }, seed: { type: 'string', default: '1' }, 'error-rate': { type: 'string', default: '0.5' } } });
  const options = roundOptions(values);
  const counts = values.desktops.split(',').map(Number);
  const measured: Measured[] = [];
  for (const desktops of counts) measured.push(await runOnce(desktops, Number(values.seed), Number(values['error-rate']), options));
  report(measured, Number(values.seed));
}

async function runOnce(desktops: number, seed: number, errorRate: number, o: RoundOptions): Promise<Measured> {
  const started = Date.now();
  const dataDir = mkdtempSync(path.join(tmpdir(), `coda-determinism-${desktops}-`));
  const base = { ...(await isolatedEnv(dataDir, 'coda-determinism')), CODA_DISPLAY_BASE: String(freeDisplay(Number(process.env.CODA_DISPLAY_BASE ?? 940))), CODA_LOCAL_DESKTOPS: String(desktops) };
  const file = withScriptedModels(dataDir, { errorRate, seed });
  const config = loadConfig(file, { ...base, CODA_CONFIG: file });
  const env = devEnv(config, { ...base, CODA_CONFIG: file });
  let client: Client | undefined;
  try {
    console.log(`\n${desktops} desktop(s), seed ${seed}, base planner error rate ${errorRate}: starting an isolated dev stack...`);
    await stackUp(config, { headless: true, env });
    client = await connectClient(config);
    const result = (await client.workflow.execute('specialization', {
      taskQueue: config.taskQueues.orchestrator,
      workflowId: specializationWorkflowId('KAlgebra', RUN),
      args: [{ software: 'KAlgebra', run: RUN, rounds: o.rounds, tasksPerRound: o.tasks, attempts: o.attempts, evaluationAttempts: o.k, evaluationTaskIds: EVALUATION_TASKS, baseEvaluationRun: BASE_RUN }],
    })) as SpecializationResult;
    const averages = result.history.map((r) => `round ${r.round}: ${r.averageAtK.toFixed(1)} (base ${r.baseAverageAtK?.toFixed(1) ?? '?'})`);
    for (const line of averages) console.log(`  ${line}`);
    const outcomes = await outcomesOf(createObjectStore(config.storage, env), config.storage.prefix);
    return { desktops, outcomes, averages, seconds: (Date.now() - started) / 1000 };
  } finally {
    await client?.connection.close();
    await stackDown(config, { env });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Every rollout of every run in the bucket, by its key under runs/. */
async function outcomesOf(store: ObjectStore, prefix: string): Promise<Outcomes> {
  const outcomes: Outcomes = new Map();
  const keys = await store.list(`${prefix}/runs/`);
  for (const key of keys.filter((k) => k.endsWith('/manifest.json'))) {
    const manifest = parseTrajectoryManifest(await store.getJson(key), key);
    const attempt = key.slice(0, -'/manifest.json'.length);
    const verdict = keys.includes(`${attempt}/verdict.json`) ? (await store.getJson<{ success: boolean }>(`${attempt}/verdict.json`)).success : undefined;
    const actions = hashText(JSON.stringify(manifest.steps.map((s) => s.action)));
    outcomes.set(attempt.slice(prefix.length + '/runs/'.length), `passed ${manifest.evaluation?.passed ?? '-'}, actions ${actions.toString(16)}, judged ${verdict ?? '-'}`);
  }
  return outcomes;
}

function report(measured: readonly Measured[], seed: number): void {
  const [first, ...others] = measured;
  if (first === undefined) return;
  const rows: string[][] = [['desktops', 'wall time s', 'rollouts', `same as at ${first.desktops}`, 'different', 'Average@k by round']];
  for (const m of measured) {
    const same = [...m.outcomes].filter(([key, outcome]) => first.outcomes.get(key) === outcome).length;
    const keys = new Set([...m.outcomes.keys(), ...first.outcomes.keys()]);
    rows.push([String(m.desktops), m.seconds.toFixed(0), String(m.outcomes.size), String(same), String(keys.size - same), m.averages.join('; ')]);
  }
  printTable(`one seed (${seed}), the same runs at each desktop count: every rollout's verdict, actions and judge verdict`, rows);
  for (const m of others) {
    const differing = [...new Set([...m.outcomes.keys(), ...first.outcomes.keys()])].filter((key) => m.outcomes.get(key) !== first.outcomes.get(key));
    for (const key of differing.slice(0, 10)) console.log(`  ${key}: ${first.desktops} desktop(s) ${first.outcomes.get(key) ?? 'none'}; ${m.desktops} desktop(s) ${m.outcomes.get(key) ?? 'none'}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
