import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { loadConfig, type LoadedConfig } from '../config/load';
import type { RoundRecord } from '../workflows/training/contract';
import { BASE_ROW, formatComparison, formatDifference, formatInterval, formatPoints, type EvaluationReport } from '../core/report';
import { createObjectStore, type ObjectStore } from '../activities/storage/object-store';
import { connectClient } from '../client/connection';
import { freeDisplay, isolatedEnv, REPO_CONFIG } from '../infra/ephemeral';
import { devEnv, stackDown, stackUp } from '../infra/stack';
import type { GeneralizationResult, SpecializationProgress, SpecializationResult } from '../workflows/training/progress';
import { roundOptions, ROUND_OPTIONS, withScriptedModels, type RoundOptions } from './config-copy';
import { printTable } from './stats';
import { generalizationWorkflowId, specializationWorkflowId } from '../workflows/names';
import { LEARNABLE_TASKS } from '../apps/kalgebra/seeds';

/**
 * The learning curve (issue 18) on the whole dev stack (Temporal, MinIO, the scripted models with
 * the learning planner double, the orchestrator, a vm-host with two real KAlgebra/TeXstudio
 * desktops, the GPU worker with the trainer doubles), isolated on free ports and displays:
 *
 * 1. A KAlgebra and a TeXstudio specialization of `--rounds` GRPO rounds each (6 generated tasks ×
 *    `--attempts` per round), every round evaluated with k = `--k` on the real tasks whose plan
 *    shape the generator double's templates share, against one base run shared by every report.
 * 2. A generalization from the two specialists (SFT on their pooled judged successes), evaluated
 *    on the same tasks with the same k and the same base run.
 *
 * Printed: the curve (per round and software, Average@k with its 95% interval and the paired
 * difference with the base, base row first); the generalization report's rows per software; each
 * stage of one round per software, from the workflow's `progress` query polled every 200 ms; the
 * total wall time. The base planner errs at dev.scriptedModels.errorRate (0.25 in temporal.yaml);
 * `--error-rate` runs the stack on a copy of temporal.yaml with another one.
 *
 *   node build/bench/learning-curve.js [--rounds 3] [--k 2] [--attempts 2] [--tasks 6] [--error-rate 0.25] [--timed-round 2] [--keep]
 */
const EVALUATION_TASKS: Readonly<Record<string, readonly string[]>> = {
  KAlgebra: LEARNABLE_TASKS,
  TeXstudio: ['B-01', 'C-02', 'C-03', 'C-05', 'C-06', 'D-01'],
};
const SOFTWARE = Object.keys(EVALUATION_TASKS);

interface Options extends RoundOptions {
  readonly timedRound: number;
}

/** One stage as the progress query showed it: when it began and the round's counts when it was last seen. */
interface SeenStage {
  readonly round: number;
  readonly stage: string;
  readonly at: number;
  counts?: SpecializationProgress['counts'];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      ...ROUND_OPTIONS,
      'error-rate': { type: 'string' },
      'timed-round': { type: 'string', default: '2' },
      keep: { type: 'boolean', default: false },
    },
  });
  const options: Options = { ...roundOptions(values), timedRound: Math.min(Number(values['timed-round']), Number(values.rounds)) };
  const started = Date.now();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'coda-learning-curve-'));
  const base: Record<string, string> = { ...(await isolatedEnv(dataDir, 'coda-learning-curve')), CODA_DISPLAY_BASE: String(freeDisplay(Number(process.env.CODA_DISPLAY_BASE ?? 900))) };
  const file = values['error-rate'] === undefined ? REPO_CONFIG : withScriptedModels(dataDir, { errorRate: Number(values['error-rate']) });
  if (file !== REPO_CONFIG) base.CODA_CONFIG = file;
  const config = loadConfig(file, base);
  const env = devEnv(config, base);
  const errorRate = config.dev.scriptedModels?.errorRate ?? 0;
  let client: Client | undefined;
  try {
    console.log(`starting an isolated dev stack (base planner error rate ${errorRate}, displays from :${base.CODA_DISPLAY_BASE})...`);
    await stackUp(config, { headless: true, env });
    const store = createObjectStore(config.storage, env);
    client = await connectClient(config);
    const stamp = Date.now().toString(36);
    const baseRun = `curve-${stamp}-base`;
    const specialists: SpecializationResult[] = [];
    for (const software of SOFTWARE) {
      const { result, stages, end } = await specialize(client, config, software, `curve-${stamp}-${software.toLowerCase()}`, baseRun, options);
      specialists.push(result);
      await printCurve(store, result, options.k);
      printStages(result, stages, end, options.timedRound);
    }
    const generalization = await generalize(client, config, `curve-${stamp}-general`, baseRun, specialists, options);
    printGeneralization(await store.getJson<EvaluationReport>(generalization.report.key));
  } finally {
    await client?.connection.close();
    await stackDown(config, { env });
    // --keep leaves the stack's data (MinIO's objects, the workers' logs, the served adapters) to look into.
    if (values.keep) console.log(`\nthe stack's data is kept in ${dataDir}`);
    else rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(`\ntotal wall time (stack up to stack down): ${((Date.now() - started) / 60_000).toFixed(1)} min`);
}

async function specialize(client: Client, config: LoadedConfig, software: string, run: string, baseRun: string, o: Options) {
  console.log(`\n${software}: ${o.rounds} rounds (run ${run})...`);
  const handle = await client.workflow.start('specialization', {
    taskQueue: config.taskQueues.orchestrator,
    workflowId: specializationWorkflowId(software, run),
    args: [{ software, run, rounds: o.rounds, tasksPerRound: o.tasks, attempts: o.attempts, evaluationAttempts: o.k, evaluationTaskIds: [...EVALUATION_TASKS[software]!], baseEvaluationRun: baseRun }],
  });
  const stages: SeenStage[] = [];
  let finished = false;
  const result = handle.result().finally(() => (finished = true)) as Promise<SpecializationResult>;
  while (!finished) {
    // Without a run id the query reaches the latest run: one round per run (continue-as-new).
    const progress = await handle.query<SpecializationProgress>('progress').catch(() => undefined);
    const last = stages.at(-1);
    if (progress !== undefined && (last?.stage !== progress.stage || last.round !== progress.round)) {
      stages.push({ round: progress.round, stage: progress.stage, at: Date.now(), counts: progress.counts });
      if (progress.stage !== 'starting') console.log(`  ${new Date().toISOString().slice(11, 19)} round ${progress.round}: ${progress.stage}`);
    } else if (progress !== undefined && last !== undefined) last.counts = progress.counts;
    await sleep(200);
  }
  const done = await result;
  return { result: done, stages, end: Date.now() };
}

async function generalize(client: Client, config: LoadedConfig, run: string, baseRun: string, specialists: readonly SpecializationResult[], o: Options): Promise<GeneralizationResult> {
  console.log(`\ngeneralization from ${specialists.map((s) => `${s.software} (${s.specialist.name})`).join(' and ')} (run ${run})...`);
  const started = Date.now();
  const result = (await client.workflow.execute('generalization', {
    taskQueue: config.taskQueues.orchestrator,
    workflowId: generalizationWorkflowId(run),
    args: [
      {
        run,
        specialists: specialists.map((s) => ({ software: s.software, checkpoint: s.specialist.name })),
        tasksPerSoftware: o.tasks,
        attempts: o.attempts,
        evaluationAttempts: o.k,
        evaluationTaskIds: EVALUATION_TASKS,
        baseEvaluationRun: baseRun,
      },
    ],
  })) as GeneralizationResult;
  console.log(`  ${((Date.now() - started) / 1000).toFixed(0)} s; SFT dataset: ${result.dataset.rows} rows from ${result.dataset.trajectories} trajectories (${Object.entries(result.dataset.bySoftware).map(([s, d]) => `${s} ${d.trajectories}`).join(', ')})`);
  return result;
}

const percentInterval = (i: { lower: number; upper: number } | undefined): string => (i === undefined ? '' : `[${formatPoints(i.lower)}, ${formatPoints(i.upper)}]`);

/** The curve of one software: the base row (from round 1's report), then every round against it. */
async function printCurve(store: ObjectStore, result: SpecializationResult, k: number): Promise<void> {
  const first = result.history[0];
  const rows: string[][] = [['round', 'checkpoint', `Average@${k} %`, '95% interval', 'vs base (points, 95% interval)', 'judge precision / recall', 'positive steps', 'samples']];
  if (first !== undefined) {
    const report = await store.getJson<EvaluationReport>(first.reportKey);
    const baseRow = report.rows.find((r) => r.planner === BASE_ROW);
    const summary = baseRow?.metrics.bySoftware[result.software];
    const interval = baseRow?.averageInterval?.bySoftware[result.software];
    rows.push(['base', baseRow?.model ?? '?', summary === undefined ? '?' : formatPoints(summary.averageAtK * 100), interval === undefined ? '' : formatInterval(interval), '(the base)', '', '', '']);
  }
  for (const r of result.history) rows.push(roundRow(r));
  printTable(`learning curve, ${result.software} (${result.history.length} GRPO rounds; every round evaluated on ${EVALUATION_TASKS[result.software]!.length} real tasks × ${k})`, rows);
}

function roundRow(r: RoundRecord): string[] {
  const judge = r.judge?.final;
  const ratio = (x: number | null | undefined): string => (x === null || x === undefined ? '–' : x.toFixed(2));
  return [
    String(r.round),
    `${r.checkpoint}${r.skipped === undefined ? '' : ` (skipped: ${r.skipped})`}`,
    formatPoints(r.averageAtK),
    percentInterval(r.averageInterval),
    r.vsBase === undefined ? '–' : `${formatDifference(r.vsBase)}, p ${r.vsBase.pValue.toFixed(3)}`,
    judge === undefined ? '–' : `${ratio(judge.precision)} / ${ratio(judge.recall)}`,
    String(r.positiveSteps),
    String(r.samples),
  ];
}

/** Every stage of one round, from its first sighting to the next stage's (or the workflow's end). */
function printStages(result: SpecializationResult, stages: readonly SeenStage[], end: number, round: number): void {
  const rows: string[][] = [['stage', 'seconds', 'round counts when it ended']];
  const at = stages.findIndex((s) => s.round === round && s.stage !== 'starting');
  if (at === -1) {
    console.log(`\nno progress seen for ${result.software} round ${round}`);
    return;
  }
  let i = at;
  for (; i < stages.length && stages[i]!.round === round; i++) {
    const s = stages[i]!;
    const next = stages[i + 1]?.at ?? end;
    const c = s.counts;
    rows.push([s.stage, ((next - s.at) / 1000).toFixed(1), c === undefined ? '' : `${c.tasks} tasks, ${c.rollouts} rollouts, ${c.judged} judged, ${c.positiveSteps} positive steps, ${c.samples} samples`]);
  }
  const until = stages[i]?.at ?? end;
  rows.push(['whole round', ((until - stages[at]!.at) / 1000).toFixed(1), '']);
  printTable(`one round of ${result.software} by stage (round ${round}; stages from the progress query, polled every 200 ms)`, rows);
}

/** The generalization report: per software, every row's Average@k with its interval and its difference with the base. */
function printGeneralization(report: EvaluationReport): void {
  const rows: string[][] = [['planner', ...report.softwares.flatMap((s) => [`${s} Average@${report.k} % [95%]`, `${s} vs base (points)`]), 'Overall', 'Overall vs base']];
  for (const row of report.rows) {
    const cells = report.softwares.flatMap((s) => {
      const summary = row.metrics.bySoftware[s];
      const interval = row.averageInterval?.bySoftware[s];
      const vs = row.vsBase?.bySoftware[s];
      return [summary === undefined ? '–' : `${formatPoints(summary.averageAtK * 100)} ${interval === undefined ? '' : formatInterval(interval)}`, row.planner === BASE_ROW ? '(the base)' : vs === undefined ? '–' : formatComparison(vs)];
    });
    const overall = row.averageInterval?.overall;
    rows.push([row.planner, ...cells, `${formatPoints(row.metrics.overall.averageAtK * 100)} ${overall === undefined ? '' : formatInterval(overall)}`, row.vsBase === undefined ? '' : formatComparison(row.vsBase.overall)]);
  }
  printTable(`generalization report (${report.run}): base, specialists and generalist on the same real tasks × ${report.k}`, rows);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
