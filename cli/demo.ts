import { parseArgs } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import { loadConfig } from '../config/load';
import { checkpointPrefix, runPrefix } from '../core/keys';
import { POLICY_SOFTWARE } from '../core/policies';
import { createObjectStore } from '../activities/storage/object-store';
import { devEnv, formatStack, stackUp } from '../infra/stack';
import { generalizationWorkflowId, specializationWorkflowId, type GeneralizationResult, type SpecializationResult } from '../workflows/training';
import { runPageUrl } from '../viewer/urls';
import { connectClient, workflowUrl } from './client';

/**
 * The main command (`npm run demo`): CODA end to end at small scale, on embedded defaults. It
 * brings the dev stack up (real Temporal, MinIO, real desktops running KAlgebra and TeXstudio, the
 * scripted models and trainers that stand in for the GPU side), then runs a specialization round
 * for each local application (generated tasks → rollouts → judging → GRPO on the gpu queue → the
 * specialist served and evaluated), a generalization (the specialists' judged trajectories pooled →
 * SFT → one generalist) and the evaluation of the base planner, each specialist and the
 * generalist on every application; it prints the report, and where everything is.
 *
 *   npm run demo -- --software KAlgebra --tasks 3 --run my-demo
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      software: { type: 'string' },
      tasks: { type: 'string', default: '4' },
      run: { type: 'string' },
    },
  });
  const config = loadConfig();
  const env = devEnv(config);
  const localSoftware = [...new Set(config.localApps.map((a) => a.software))].filter((s) => POLICY_SOFTWARE.includes(s));
  const software = values.software?.split(',').map((s) => s.trim()) ?? localSoftware;
  const tasks = Number(values.tasks);
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

  const specialists: Array<{ software: string; checkpoint: string; result: SpecializationResult }> = [];
  for (const name of software) {
    const workflowId = specializationWorkflowId(name, `${run}-${name}`);
    const handle = await client.workflow.start('specialization', {
      taskQueue: config.taskQueues.orchestrator,
      workflowId,
      args: [{ software: name, run: `${run}-${name}`, rounds: 1, tasksPerRound: tasks, attempts: 1, includeSeeds: false, evaluationAttempts: 1 }],
    });
    console.log(`\nspecialization of ${name}: ${workflowId}\n  ${workflowUrl(config, workflowId)}`);
    const result = await follow<SpecializationResult>(
      handle,
      (p) => `round ${p.round}/${p.rounds} ${p.stage}: ${p.counts.tasks} tasks, ${p.counts.rollouts} rollouts, ${p.counts.judged} judged, ${p.counts.samples} GRPO samples`,
    );
    const round = result.history.at(-1);
    console.log(`  specialist ${result.specialist.name}: Average@1 ${round?.averageAtK.toFixed(2)}% on the real ${name} tasks${round?.skipped ? ` (${round.skipped})` : ''}`);
    specialists.push({ software: name, checkpoint: result.specialist.name, result });
  }

  const trained = specialists.filter((s) => s.result.specialist.checkpointKey !== undefined);
  if (trained.length === 0) throw new Error('no specialist was trained (the judge approved no step): nothing to generalize');
  const generalizationId = generalizationWorkflowId(run);
  const handle = await client.workflow.start('generalization', {
    taskQueue: config.taskQueues.orchestrator,
    workflowId: generalizationId,
    args: [{ run, specialists: trained.map((s) => ({ software: s.software, checkpoint: s.checkpoint })), tasksPerSoftware: tasks, attempts: 1, evaluationAttempts: 1 }],
  });
  console.log(`\ngeneralization: ${generalizationId}\n  ${workflowUrl(config, generalizationId)}`);
  const general = await follow<GeneralizationResult>(handle, (p) => `${p.stage}${p.software ? ` ${p.software}` : ''}: ${p.counts.rollouts} rollouts, ${p.counts.judged} judged, ${p.counts.trajectories} trajectories, ${p.counts.samples} SFT samples`);

  console.log(`\n${(await store.get(general.report.markdownKey)).toString('utf8')}`);
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

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
