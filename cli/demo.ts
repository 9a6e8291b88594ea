import { parseArgs } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import { loadConfig } from '../config/load';
import type { RoundRecord } from '../config/workflow-inputs';
import { checkpointPrefix, runPrefix } from '../core/keys';
import { APP_NOT_RUNNING } from '../core/evaluation';
import { COMPARISON_NOTE, formatDifference, formatPoints, noiseSummary, type EvaluationReport } from '../core/report';
import { POLICY_SOFTWARE } from '../core/policies';
import { createObjectStore } from '../activities/storage/object-store';
import { devEnv, formatStack, stackUp } from '../infra/stack';
import { generalizationWorkflowId, specializationWorkflowId, type GeneralizationResult, type SpecializationResult } from '../workflows/training';
import { runPageUrl } from '../viewer/urls';
import { connectClient, workflowUrl } from './client';
import { forTerminal } from './terminal';

/**
 * The main command (`npm run demo`): CODA end to end at small scale, on embedded defaults. It
 * brings the dev stack up (real Temporal, MinIO, real desktops running KAlgebra and TeXstudio, the
 * scripted models and trainers that stand in for the GPU side), then runs a specialization round
 * for each local application (generated tasks → rollouts → judging → GRPO on the gpu queue → the
 * specialist served and evaluated), a generalization (the specialists' judged trajectories pooled →
 * SFT → one generalist) and the evaluation of the base planner, each specialist and the
 * generalist on every application; it prints the report, and where everything is.
 *
 * Every evaluation makes k attempts of each real task (--k, default DEMO_K) and compares every
 * row with the base planner's, whose rollouts are made once and shared by every evaluation.
 *
 *   npm run demo -- --software KAlgebra --tasks 3 --k 2 --run my-demo
 */

/**
 * The demo's k: simulated on the 24 local tasks a local host runs (20 KAlgebra, 4 TeXstudio) with
 * the base planner double's error rate (bench/evaluation-noise.ts, docs/evaluation-uncertainty.md),
 * a planner 15 points better is outside the noise in 80% of evaluations at k = 8 (53% at k = 4,
 * 93% at k = 12). It costs desktop time: 24 x k rollouts per row and software set.
 */
const DEMO_K = 8;
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      software: { type: 'string' },
      tasks: { type: 'string', default: '4' },
      k: { type: 'string', default: String(DEMO_K) },
      run: { type: 'string' },
    },
  });
  const config = loadConfig();
  const env = devEnv(config);
  const localSoftware = [...new Set(config.localApps.map((a) => a.software))].filter((s) => POLICY_SOFTWARE.includes(s));
  const software = values.software?.split(',').map((s) => s.trim()) ?? localSoftware;
  const tasks = Number(values.tasks);
  const k = Number(values.k);
  if (!Number.isInteger(k) || k < 1) throw new Error(`--k: expected an integer >= 1, got ${values.k}`);
  const run = values.run ?? `demo-${new Date().toISOString().slice(0, 19).replace(/[-:T]/g, '')}`;

  console.log('Starting the dev stack...');
  console.log(formatStack(await stackUp(config, { env })));
  const client = await connectClient(config);
  const store = createObjectStore(config.storage, env);
  const check = (await client.workflow.execute('stackCheck', { taskQueue: config.taskQueues.orchestrator, workflowId: `stack-check-${Date.now()}`, args: [] })) as { key: string };
  console.log(`\nstack check: a worker wrote and read ${store.uri(check.key)}`);

  /** Prints a workflow's progress line whenever it changes, until it ends. */
  const follow = async <T>(handle: WorkflowHandle, line: (p: Record<string, any>) => string): Promise<T> => {
    let last = '';
    const timer = setInterval(() => {
      handle
        .query('progress')
        .then((p) => {
          const text = line(p as Record<string, any>);
          if (text !== last) console.log(`  ${text}`);
          last = text;
        })
        .catch(() => undefined);
    }, 2_000);
    try {
      return (await handle.result()) as T;
    } finally {
      clearInterval(timer);
    }
  };

  // The base planner's evaluation rollouts, made by the first specialization and reused by every later evaluation.
  const baseEvaluationRun = `${run}-base-eval`;
  const specialists: Array<{ software: string; checkpoint: string; result: SpecializationResult }> = [];
  for (const name of software) {
    const workflowId = specializationWorkflowId(name, `${run}-${name}`);
    const handle = await client.workflow.start('specialization', {
      taskQueue: config.taskQueues.orchestrator,
      workflowId,
      args: [{ software: name, run: `${run}-${name}`, rounds: 1, tasksPerRound: tasks, attempts: 1, includeSeeds: false, evaluationAttempts: k, baseEvaluationRun }],
    });
    console.log(`\nspecialization of ${name}: ${workflowId}\n  ${workflowUrl(config, workflowId)}`);
    const result = await follow<SpecializationResult>(
      handle,
      (p) => `round ${p.round}/${p.rounds} ${p.stage}: ${p.counts.tasks} tasks, ${p.counts.rollouts} rollouts, ${p.counts.judged} judged, ${p.counts.samples} GRPO samples`,
    );
    const round = result.history.at(-1);
    console.log(`  specialist ${result.specialist.name}: ${roundLine(round, k)} on the real ${name} tasks${round?.skipped ? ` (${round.skipped})` : ''}`);
    if (round?.vsBase !== undefined) console.log(`  (${COMPARISON_NOTE})`);
    specialists.push({ software: name, checkpoint: result.specialist.name, result });
  }

  const trained = specialists.filter((s) => s.result.specialist.checkpointKey !== undefined);
  if (trained.length === 0) throw new Error('no specialist was trained (the judge approved no step): nothing to generalize');
  const generalizationId = generalizationWorkflowId(run);
  const handle = await client.workflow.start('generalization', {
    taskQueue: config.taskQueues.orchestrator,
    workflowId: generalizationId,
    args: [{ run, specialists: trained.map((s) => ({ software: s.software, checkpoint: s.checkpoint })), tasksPerSoftware: tasks, attempts: 1, evaluationAttempts: k, baseEvaluationRun }],
  });
  console.log(`\ngeneralization: ${generalizationId}\n  ${workflowUrl(config, generalizationId)}`);
  const general = await follow<GeneralizationResult>(handle, (p) => `${p.stage}${p.software ? ` ${p.software}` : ''}: ${p.counts.rollouts} rollouts, ${p.counts.judged} judged, ${p.counts.trajectories} trajectories, ${p.counts.samples} SFT samples`);

  // The report holds task ids and planner names: text others wrote (cli/terminal.ts).
  console.log(forTerminal(`\n${(await store.get(general.report.markdownKey)).toString('utf8')}`));
  console.log(forTerminal(noiseSummary(await store.getJson<EvaluationReport>(general.report.key)) ?? 'The report has no base row: nothing is compared.'));
  console.log('The planner and the trainers here are test doubles: the trainers run the real command lines,');
  console.log('reward service and checkpoints, and train the learning planner double (doubles/learning-planner/),');
  console.log('a preference between the right and the wrong step per situation, not a real planner.');
  console.log(`\nreport        ${store.uri(general.report.key)}`);
  for (const s of specialists) {
    console.log(`trajectories  ${store.uri(`${runPrefix(config.storage.prefix, `${s.result.run}-r1-gen`, s.software)}/`)}`);
  }
  console.log(`checkpoints   ${store.uri(`${checkpointPrefix(config.storage.prefix, general.generalist.name)}/manifest.json`)} (lineage: parent, dataset, trajectories)`);
  for (const s of trained) console.log(`              ${store.uri(`${checkpointPrefix(config.storage.prefix, s.checkpoint)}/manifest.json`)}`);
  console.log(`history       ${workflowUrl(config, generalizationId)}`);
  console.log(`viewer        ${runPageUrl(config, generalizationId)}`);
  await client.connection.close();
}

/** A round's evaluation in one line: `Average@4 72.50% [61.3, 83.8], base 57.50%, vs base (points) +15.0 [4.2, 25.1]` (`within noise` when it is). */
function roundLine(round: RoundRecord | undefined, k: number): string {
  if (round === undefined) return 'no round finished';
  const interval = round.averageInterval === undefined ? '' : ` [${formatPoints(round.averageInterval.lower)}, ${formatPoints(round.averageInterval.upper)}]`;
  const base = round.baseAverageAtK === undefined ? '' : `, base ${round.baseAverageAtK.toFixed(2)}%`;
  const vs = round.vsBase === undefined ? '' : `, vs base (points) ${formatDifference(round.vsBase)}`;
  const gone = round.appNotRunning === undefined || round.appNotRunning === 0 ? '' : `; ${APP_NOT_RUNNING} in ${round.appNotRunning} attempts (not solved)`;
  return `Average@${k} ${round.averageAtK.toFixed(2)}%${interval}${base}${vs}${gone}`;
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
