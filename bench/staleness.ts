import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { loadConfig, type LoadedConfig } from '../config/load';
import { BASE_ROW, formatDifference, formatInterval, formatPoints, type EvaluationReport } from '../core/report';
import { compareWithBase, DEFAULT_BOOTSTRAP, pairTasks } from '../core/uncertainty';
import { createObjectStore, type ObjectStore } from '../activities/storage/object-store';
import { connectClient } from '../client/connection';
import { freeDisplay, isolatedEnv } from '../infra/ephemeral';
import { devEnv, stackDown, stackUp } from '../infra/stack';
import type { SpecializationProgress, SpecializationResult } from '../workflows/training/progress';
import { roundOptions, ROUND_OPTIONS, withScriptedModels, type RoundOptions } from './config-copy';
import { printTable } from './stats';
import { specializationWorkflowId } from '../workflows/names';
import { LEARNABLE_TASKS } from '../apps/kalgebra/seeds';

/**
 * Overlapped specialization rounds (issue 20): the same KAlgebra specialization of `--rounds` GRPO
 * rounds at specialization.maxStaleness 0 (each round's stages one after another) and then at 1
 * (round n+1 generates, rolls out and judges while round n trains, serves and is evaluated), in one
 * run, on an isolated dev stack (Temporal, MinIO, the scripted models with the learning planner
 * double, the orchestrator, a vm-host with two real desktops, the GPU worker with the trainer
 * doubles). So that rollouts and training take comparable time, the OpenRLHF double sleeps
 * `--step-ms` per training step (CODA_TRAINER_DOUBLE_STEP_MS) and every model call takes
 * `--latency-ms` (dev.scriptedModels.latencyMs).
 *
 * Per staleness: wall time from start to result; the share of that time the desktops were leased
 * (the vm-host's coda_desktops_leased / coda_desktops, scraped every 250 ms) and the share the GPU
 * worker ran a trainer (coda_trainers_running > 0); the final round's Average@k with its 95%
 * interval, and the difference of the two final checkpoints, paired per task (staleness 1 minus 0).
 * Each staleness has its own base evaluation run, so both pay for rolling out the base once.
 *
 *   node build/bench/staleness.js [--rounds 3] [--k 2] [--attempts 2] [--tasks 6] [--step-ms 6000] [--latency-ms 200] [--error-rate 0.5] [--keep]
 */
const EVALUATION_TASKS = LEARNABLE_TASKS;

type Options = RoundOptions;

/** One specialization's figures. */
interface Measured {
  readonly staleness: number;
  readonly result: SpecializationResult;
  readonly seconds: number;
  readonly desktopShare: number;
  readonly gpuShare: number;
  /** Seconds during which two rounds were in flight together. */
  readonly overlapSeconds: number;
  readonly final: EvaluationReport;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      ...ROUND_OPTIONS,
      'step-ms': { type: 'string', default: '6000' },
      'latency-ms': { type: 'string', default: '200' },
      'error-rate': { type: 'string', default: '0.5' },
      keep: { type: 'boolean', default: false },
    },
  });
  const options = roundOptions(values);
  const started = Date.now();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'coda-staleness-'));
  const base: Record<string, string> = {
    ...(await isolatedEnv(dataDir, 'coda-staleness')),
    CODA_DISPLAY_BASE: String(freeDisplay(Number(process.env.CODA_DISPLAY_BASE ?? 900))),
    CODA_TRAINER_DOUBLE_STEP_MS: values['step-ms'],
  };
  base.CODA_CONFIG = withScriptedModels(dataDir, { errorRate: Number(values['error-rate']), latencyMs: Number(values['latency-ms']) });
  const config = loadConfig(base.CODA_CONFIG, base);
  const env = devEnv(config, base);
  let client: Client | undefined;
  try {
    console.log(`starting an isolated dev stack (base planner error rate ${values['error-rate']}, model latency ${values['latency-ms']} ms, trainer step ${values['step-ms']} ms, displays from :${base.CODA_DISPLAY_BASE})...`);
    await stackUp(config, { headless: true, env });
    const store = createObjectStore(config.storage, env);
    client = await connectClient(config);
    const stamp = Date.now().toString(36);
    const measured: Measured[] = [];
    for (const staleness of [0, 1]) measured.push(await specialize(client, config, store, staleness, `stale${staleness}-${stamp}`, options));
    printResults(measured, options);
  } finally {
    await client?.connection.close();
    await stackDown(config, { env });
    if (values.keep) console.log(`\nthe stack's data is kept in ${dataDir}`);
    else rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(`\ntotal wall time (stack up to stack down): ${((Date.now() - started) / 60_000).toFixed(1)} min`);
}

/** The sum of a metric's samples in a Prometheus text answer (every label set). */
function metricSum(text: string, name: string): number {
  let sum = 0;
  const sample = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`);
  for (const line of text.split('\n')) {
    const match = sample.exec(line);
    if (match) sum += Number(match[1]);
  }
  return sum;
}

const scrape = (url: string): Promise<string | undefined> =>
  fetch(url, { signal: AbortSignal.timeout(2_000) }).then(
    (r) => r.text(),
    () => undefined,
  );

async function specialize(client: Client, config: LoadedConfig, store: ObjectStore, staleness: number, run: string, o: Options): Promise<Measured> {
  console.log(`\nKAlgebra at maxStaleness ${staleness}: ${o.rounds} rounds (run ${run})...`);
  const metricsUrl = (port: number | undefined) => `http://${config.metrics.host}:${port}/metrics`;
  const vmHostUrl = metricsUrl(config.hosts[0]?.metricsPort ?? config.metrics.ports.vmHost);
  const gpuUrl = metricsUrl(config.metrics.ports.gpu);
  const began = Date.now();
  const handle = await client.workflow.start('specialization', {
    taskQueue: config.taskQueues.orchestrator,
    workflowId: specializationWorkflowId('KAlgebra', run),
    args: [{ software: 'KAlgebra', run, rounds: o.rounds, tasksPerRound: o.tasks, attempts: o.attempts, evaluationAttempts: o.k, evaluationTaskIds: EVALUATION_TASKS, baseEvaluationRun: `${run}-base`, maxStaleness: staleness }],
  });
  let finished = false;
  const result = handle.result().finally(() => (finished = true)) as Promise<SpecializationResult>;
  // Integrals over the run of the leased share of the desktops, of the GPU running a trainer and of two rounds in flight.
  let desktop = 0;
  let gpu = 0;
  let overlap = 0;
  let last = Date.now();
  let seen = '';
  while (!finished) {
    const [host, trainer, progress] = await Promise.all([scrape(vmHostUrl), scrape(gpuUrl), handle.query<SpecializationProgress>('progress').catch(() => undefined)]);
    const now = Date.now();
    const dt = (now - last) / 1000;
    last = now;
    if (host !== undefined) desktop += (dt * metricSum(host, 'coda_desktops_leased')) / Math.max(1, metricSum(host, 'coda_desktops'));
    if (trainer !== undefined && metricSum(trainer, 'coda_trainers_running') > 0) gpu += dt;
    if (progress !== undefined) {
      if (progress.inFlight.length > 1) overlap += dt;
      const state = progress.inFlight.map((f) => `round ${f.round}: ${f.stage}`).join(', ');
      if (state !== seen && state !== '') console.log(`  ${((now - began) / 1000).toFixed(0).padStart(4)} s  ${state}`);
      seen = state;
    }
    await sleep(250);
  }
  const done = await result;
  const seconds = (Date.now() - began) / 1000;
  const final = await store.getJson<EvaluationReport>(done.history.at(-1)!.reportKey);
  return { staleness, result: done, seconds, desktopShare: desktop / seconds, gpuShare: gpu / seconds, overlapSeconds: overlap, final };
}

/** The final round's row of its report (the specialist's, not the base's). */
const finalRow = (m: Measured) => m.final.rows.find((r) => r.planner !== BASE_ROW)!;

function printResults(measured: readonly Measured[], o: Options): void {
  const pct = (x: number): string => `${(100 * x).toFixed(0)}%`;
  const rows: string[][] = [['maxStaleness', 'wall time (s)', 'desktops leased', 'GPU running a trainer', 'two rounds in flight (s)', `final Average@${o.k} %`, '95% interval', 'final vs its base (points)', 'rollout planners']];
  for (const m of measured) {
    const row = finalRow(m);
    const record = m.result.history.at(-1)!;
    const interval = row.averageInterval?.bySoftware.KAlgebra;
    rows.push([
      String(m.staleness),
      m.seconds.toFixed(0),
      pct(m.desktopShare),
      pct(m.gpuShare),
      m.overlapSeconds.toFixed(0),
      formatPoints(record.averageAtK),
      interval === undefined ? '' : formatInterval(interval),
      record.vsBase === undefined ? '–' : `${formatDifference(record.vsBase)}, p ${record.vsBase.pValue.toFixed(3)}`,
      m.result.history.map((r) => r.rolloutPlanner ?? '?').join(' → '),
    ]);
  }
  printTable(`${o.rounds} KAlgebra rounds (${o.tasks} generated tasks × ${o.attempts} a round, evaluated on ${EVALUATION_TASKS.length} real tasks × ${o.k}), maxStaleness 0 and 1 in one run`, rows);
  const [zero, one] = measured;
  if (zero === undefined || one === undefined) return;
  const c = compareWithBase([pairTasks(finalRow(one).metrics.tasks, finalRow(zero).metrics.tasks)], DEFAULT_BOOTSTRAP);
  const points = (x: number): string => formatPoints(100 * x);
  console.log(`\nwall time, staleness 1 / staleness 0: ${(one.seconds / zero.seconds).toFixed(2)} (${zero.seconds.toFixed(0)} s → ${one.seconds.toFixed(0)} s)`);
  console.log(`final checkpoints, staleness 1 minus staleness 0, paired over ${c.tasks} tasks: ${points(c.difference)} points [${points(c.interval.lower)}, ${points(c.interval.upper)}], p ${c.pValue.toFixed(3)}: ${c.withinNoise ? 'within noise' : 'beyond the noise'}`);
  for (const m of measured) {
    const perRound = m.result.history.map((r) => `r${r.round} ${formatPoints(r.averageAtK)}`).join(', ');
    console.log(`  maxStaleness ${m.staleness}: Average@${o.k} by round ${perRound}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
