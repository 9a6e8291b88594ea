import { WorkflowFailedError, type Client } from '@temporalio/client';
import { loadConfig, type LoadedConfig } from '../config/load';
import type { RoundRecord } from '../workflows/training/contract';
import { APP_NOT_RUNNING } from '../core/evaluation';
import { COMPARISON_NOTE, formatDifference, formatPoints } from '../core/report';
import { POLICY_SOFTWARE } from '../apps/policies';
import { createObjectStore, type ObjectStore } from '../activities/storage/object-store';
import { devEnv, formatStack, stackUp } from '../infra/stack';
import {
  GENERALIZATION_STAGES,
  SPECIALIZATION_STAGES,
  type GeneralizationResult,
  type SpecializationResult,
} from '../workflows/training/progress';
import { connectClient, workflowUrl } from '../client/connection';
import { DemoUsageError, parseDemoOptions, type DemoOptions } from './demo-options';
import { printDemoEnd } from './demo-end';
import { prepareSmallPlanner } from './demo-small';
import { followStages, type StageTime } from './follow';
import { ProgressLine } from './progress-line';
import { forTerminal } from './terminal';
import { recordStageTime } from './stage-times';
import { baseEvaluationRun, generalizationWorkflowId, specializationWorkflowId } from '../workflows/names';

/**
 * The main command (`npm run demo`, after infra/demo.sh installs and builds): CODA end to end on
 * embedded defaults. It brings the dev stack up (real Temporal, MinIO, real desktops running
 * KAlgebra and TeXstudio, the scripted models and trainers that stand in for the GPU side), then
 * runs a specialization round for each local application (generated tasks → rollouts → judging →
 * GRPO on the gpu queue → the specialist served and evaluated), a generalization (the specialists'
 * judged trajectories pooled → SFT → one generalist) and the evaluation of the base planner, each
 * specialist and the generalist; it prints each stage's progress, the report and where everything is.
 *
 * The default is a first look (cli/demo-options.ts FIRST_LOOK: every stage, minutes); --full is
 * the scale whose differences can leave the noise. Every evaluation compares every row with the
 * base planner's, whose rollouts are made once and shared by every evaluation. --planner small runs
 * the real small planner with the real trainers and server instead (cli/demo-small.ts).
 */

async function main(argv: readonly string[]): Promise<void> {
  const repo = loadConfig();
  const localSoftware = [...new Set(repo.localApps.map((a) => a.software))].filter((s) => POLICY_SOFTWARE.includes(s));
  const options = parseDemoOptions(argv, localSoftware);
  console.log(`CODA demo ${options.run}: ${options.software.join(' and ')}, ${options.tasks} generated tasks per round, k = ${options.k}${options.crossEvaluation ? ', every specialist on every software' : ', each specialist on its own software'}${options.planner === 'small' ? ', the real small planner' : ''}\n`);
  // The small planner's server demands a key made for this start: the stack's workers get it in their environment.
  const small = options.planner === 'small' ? await prepareSmallPlanner(repo, devEnv(repo)) : undefined;
  const config = small?.deployment ?? repo;
  const env = devEnv(config, small?.env);

  await startStack(config, env);
  const client = await connectClient(config);
  const store = createObjectStore(config.storage, env);
  try {
    await checkStack(config, client, store);
    const specialists = await specialize(config, client, options);
    const trained = specialists.filter((s) => s.specialist.checkpointKey !== undefined);
    if (trained.length === 0) throw new Error('no specialist was trained (the judge approved no step): nothing to generalize');
    const general = await generalize(config, client, options, trained);
    await printDemoEnd({ config, store, options, specialists, general, generalizationId: generalizationWorkflowId(options.run) });
  } finally {
    await client.connection.close();
  }
}

async function startStack(config: LoadedConfig, env: Record<string, string>): Promise<void> {
  const line = new ProgressLine();
  let started = 0;
  const info = await stackUp(config, {
    env,
    onStarting: (name, index, total) => {
      started = total;
      line.update(`stack: ${name} (${index + 1}/${total})`);
    },
  });
  line.end(`✓ stack: ${started} processes up`);
  recordStageTime('demo', 'stack', line.elapsedSeconds());
  console.log(formatStack(info));
}

async function checkStack(config: LoadedConfig, client: Client, store: ObjectStore): Promise<void> {
  const line = new ProgressLine();
  line.update('stack check: a workflow writes and reads S3');
  const check = (await client.workflow.execute('stackCheck', { taskQueue: config.taskQueues.orchestrator, workflowId: `stack-check-${Date.now()}`, args: [] })) as { key: string };
  line.end(`✓ stack check: a worker wrote and read ${store.uri(check.key)}`);
  recordStageTime('demo', 'stack-check', line.elapsedSeconds());
}

const recordStages = (label: string, stages: readonly StageTime[]): void => {
  for (const s of stages) recordStageTime('demo', `${label} ${s.stage}`, s.seconds, s.seen ? 'ok' : 'unseen');
};

/** One specialization round per software, one after the other (they share the two desktops). */
async function specialize(config: LoadedConfig, client: Client, options: DemoOptions): Promise<SpecializationResult[]> {
  const results: SpecializationResult[] = [];
  for (const software of options.software) {
    const run = `${options.run}-${software}`;
    const workflowId = specializationWorkflowId(software, run);
    const handle = await client.workflow.start('specialization', {
      taskQueue: config.taskQueues.orchestrator,
      workflowId,
      args: [
        {
          software,
          run,
          rounds: options.rounds,
          tasksPerRound: options.tasks,
          attempts: 1,
          includeSeeds: options.includeSeeds,
          evaluationAttempts: options.k,
          baseEvaluationRun: baseEvaluationRunOf(options),
          ...(options.evaluationTaskIds?.[software] === undefined ? {} : { evaluationTaskIds: options.evaluationTaskIds[software] }),
          ...(options.judgePrecisionFloor === undefined ? {} : { judgePrecisionFloor: options.judgePrecisionFloor }),
        },
      ],
    });
    console.log(`\nspecialization of ${software}: ${workflowUrl(config, workflowId)}`);
    const { result, stages } = await followStages<SpecializationResult>(client, handle, {
      label: `${software} specialization`,
      stages: SPECIALIZATION_STAGES,
      read: (p) => ({ stage: String(p.stage), counts: `${p.counts.tasks} tasks, ${p.counts.rollouts} rollouts, ${p.counts.judged} judged, ${p.counts.samples} GRPO samples` }),
    });
    recordStages(`specialization ${software}`, stages);
    const round = result.history.at(-1);
    // Checkpoint names and skip reasons come from the workflow's result (Temporal): escaped for the terminal.
    if (result.history.length > 1) for (const r of result.history.slice(0, -1)) console.log(forTerminal(`  round ${r.round} (${r.checkpoint}): ${roundLine(r, options.k)}${r.skipped ? ` (${r.skipped})` : ''}`));
    console.log(forTerminal(`  specialist ${result.specialist.name}: ${roundLine(round, options.k)} on the real ${software} tasks${round?.skipped ? ` (${round.skipped})` : ''}`));
    if (round?.vsBase !== undefined) console.log(`  (${COMPARISON_NOTE})`);
    results.push(result);
  }
  return results;
}

async function generalize(config: LoadedConfig, client: Client, options: DemoOptions, trained: readonly SpecializationResult[]): Promise<GeneralizationResult> {
  const workflowId = generalizationWorkflowId(options.run);
  const handle = await client.workflow.start('generalization', {
    taskQueue: config.taskQueues.orchestrator,
    workflowId,
    args: [
      {
        run: options.run,
        specialists: trained.map((s) => ({ software: s.software, checkpoint: s.specialist.name })),
        tasksPerSoftware: options.tasks,
        attempts: 1,
        evaluationAttempts: options.k,
        baseEvaluationRun: baseEvaluationRunOf(options),
        crossEvaluation: options.crossEvaluation,
        ...(options.includeSeeds ? { includeSeeds: true } : {}),
        ...evaluationTasksOf(options, trained.map((s) => s.software)),
      },
    ],
  });
  console.log(`\ngeneralization: ${workflowUrl(config, workflowId)}`);
  const { result, stages } = await followStages<GeneralizationResult>(client, handle, {
    label: 'generalization',
    stages: GENERALIZATION_STAGES,
    read: (p) => ({ stage: String(p.stage), counts: `${p.software ? `${p.software}: ` : ''}${p.counts.rollouts} rollouts, ${p.counts.judged} judged, ${p.counts.trajectories} trajectories, ${p.counts.samples} SFT samples` }),
  });
  recordStages('generalization', stages);
  return result;
}

/** The generalization's evaluation tasks: the demo's, for the software it generalizes. */
function evaluationTasksOf(options: DemoOptions, software: readonly string[]): { evaluationTaskIds?: Record<string, string[]> } {
  const chosen = software.filter((s) => options.evaluationTaskIds?.[s] !== undefined).map((s) => [s, [...options.evaluationTaskIds![s]!]]);
  return chosen.length === 0 ? {} : { evaluationTaskIds: Object.fromEntries(chosen) };
}

/** The base planner's evaluation rollouts: made by the first specialization, reused by every later evaluation. */
const baseEvaluationRunOf = (options: DemoOptions): string => baseEvaluationRun(options.run);

/** A round's evaluation in one line: `Average@4 72.50% [61.3, 83.8], base 57.50%, vs base (points) +15.0 [4.2, 25.1]` (`within noise` when it is). */
function roundLine(round: RoundRecord | undefined, k: number): string {
  if (round === undefined) return 'no round finished';
  const interval = round.averageInterval === undefined ? '' : ` [${formatPoints(round.averageInterval.lower)}, ${formatPoints(round.averageInterval.upper)}]`;
  const base = round.baseAverageAtK === undefined ? '' : `, base ${round.baseAverageAtK.toFixed(2)}%`;
  const vs = round.vsBase === undefined ? '' : `, vs base (points) ${formatDifference(round.vsBase)}`;
  const gone = round.appNotRunning === undefined || round.appNotRunning === 0 ? '' : `; ${APP_NOT_RUNNING} in ${round.appNotRunning} attempts (not solved)`;
  return `Average@${k} ${round.averageAtK.toFixed(2)}%${interval}${base}${vs}${gone}`;
}

main(process.argv.slice(2)).then(
  () => setTimeout(() => process.exit(0), 50).unref(),
  (err: unknown) => {
    if (err instanceof DemoUsageError) {
      console.error(err.message);
      process.exit(2);
    }
    // A failed workflow's own reason is its cause (WorkflowFailedError's message is only "Workflow execution failed").
    console.error(forTerminal(err instanceof WorkflowFailedError ? `the workflow failed: ${err.cause?.message ?? err.message}` : err instanceof Error ? err.message : String(err)));
    process.exit(1);
  },
);
