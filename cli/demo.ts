import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load';
import { runPrefix } from '../core/keys';
import { percent, type MetricsReport } from '../core/metrics';
import { createObjectStore } from '../activities/storage/object-store';
import { devEnv, formatStack, stackUp } from '../infra/stack';
import { batchProgress, batchWorkflowId, type BatchResult } from '../workflows/batch';
import { rolloutIdPrefix } from '../workflows/rollout';
import { connectClient, workflowUrl } from './client';

/**
 * The main command (`npm run demo`): brings the dev stack up on embedded defaults, checks it end
 * to end, then runs rollouts of the KAlgebra tasks on local desktops (real Xvfb + KAlgebra) with
 * the scripted models (the test double of the GPU model servers), and prints where the
 * trajectories are.
 *
 *   npm run demo -- --tasks A-01,C-03 --attempts 2 --run my-run
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      tasks: { type: 'string' },
      attempts: { type: 'string', default: '1' },
      run: { type: 'string' },
      software: { type: 'string', default: 'KAlgebra' },
    },
  });
  const config = loadConfig();
  const env = devEnv(config);
  console.log('Starting the dev stack...');
  console.log(formatStack(await stackUp(config, { env })));

  const client = await connectClient(config);
  const check = await client.workflow.execute('stackCheck', {
    taskQueue: config.taskQueues.orchestrator,
    workflowId: `stack-check-${Date.now()}`,
    args: [],
  });
  const store = createObjectStore(config.storage, env);
  console.log(`\nstack check: a worker wrote and read ${store.uri((check as { key: string }).key)}`);

  const run = values.run ?? `demo-${new Date().toISOString().slice(0, 19).replace(/[-:T]/g, '')}`;
  const software = values.software;
  const attempts = Number(values.attempts);
  const taskIds = values.tasks?.split(',').map((t) => t.trim());
  const workflowId = batchWorkflowId(run, software);
  const handle = await client.workflow.start('rolloutBatch', {
    taskQueue: config.taskQueues.orchestrator,
    workflowId,
    args: [{ run, stage: 'demo', software, attempts, ...(taskIds ? { taskIds } : {}) }],
  });
  console.log(`\nbatch ${workflowId}: ${taskIds?.join(', ') ?? `all ${software} tasks`} x ${attempts} attempt(s)`);
  console.log(`  watch it  ${workflowUrl(config, workflowId)}`);

  let last = '';
  const timer = setInterval(() => {
    handle
      .query(batchProgress)
      .then((p) => {
        const line = `  [${p.completed}/${p.total}] passed ${p.passed}, failed ${p.failed}, errors ${p.errors}; in flight: ${p.inFlight.map((id) => id.replace(rolloutIdPrefix(run, software), '')).join(' ') || '-'}`;
        if (line !== last) console.log(line);
        last = line;
      })
      .catch(() => undefined);
  }, 2_000);
  const result = (await handle.result()) as BatchResult;
  clearInterval(timer);

  const summary = await store.getJson<MetricsReport>(result.summaryKey);
  console.log(`\n${result.completed} rollouts: ${result.passed} passed, ${result.failed} failed, ${result.errors} ended in error`);
  for (const task of summary.tasks) console.log(`  ${task.taskId.padEnd(6)} ${task.successes}/${task.runs} passed`);
  console.log(`Average@${attempts} ${percent(result.averageAtK).toFixed(2)}%   Pass@${attempts} ${percent(result.passAtK).toFixed(2)}%`);
  console.log(`\ntrajectories  ${store.uri(`${runPrefix(config.storage.prefix, run, software)}/`)}<task>/<attempt>/manifest.json`);
  console.log(`summary       ${store.uri(result.summaryKey)}`);
  console.log(`browse        http://${config.dev.minioConsole}/browser/${config.storage.bucket}/${encodeURIComponent(`${runPrefix(config.storage.prefix, run, software)}/`)}`);
  console.log(`history       ${workflowUrl(config, workflowId)}`);
  await client.connection.close();
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
