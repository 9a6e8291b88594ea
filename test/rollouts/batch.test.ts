import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { WorkflowFailedError } from '@temporalio/client';
import { toolPath } from '../../infra/tools';
import { runSummaryKey } from '../../core/keys';
import { batchProgress, type BatchProgress, type BatchResult } from '../../workflows/rollout/batch';
import { startHarness, type Harness } from '../support/harness';
import { eventually } from '../support/rollouts';
import { batchWorkflowId } from '../../workflows/names';

const TEMPORAL = toolPath('temporal');
const execFileAsync = promisify(execFile);

describe('rollout batches: fan-out, progress, continue-as-new, idempotent re-runs, bad input', function () {
  this.timeout(600_000);
  let h: Harness;
  before(async () => {
    h = await startHarness({ name: 'batch', desktops: 2, displayFrom: 180, edit: (doc) => (doc.limits.rolloutsPerBatchRun = 2) });
    await h.startVmHost();
  });
  after(async () => h?.stop());

  const start = (run: string, taskIds: readonly string[], attempts: number, workflowId = batchWorkflowId(run, 'KAlgebra'), software = 'KAlgebra') =>
    h.stack.client.workflow.start('rolloutBatch', {
      taskQueue: h.config.taskQueues.orchestrator,
      workflowId,
      args: [{ run, stage: 'evaluation', software, attempts, taskIds }],
    });

  it('runs tasks x attempts two at a time, continuing as new every 2 rollouts, and reports Average@k and Pass@k', async () => {
    const run = `batch${Date.now()}`;
    const handle = await start(run, ['A-01', 'C-03', 'C-01'], 2);
    const seen: BatchProgress[] = [];
    const result = await eventually('the batch result', async () => {
      const progress = await handle.query(batchProgress).catch(() => undefined);
      if (progress !== undefined) seen.push(progress);
      const status = (await handle.describe()).status.name;
      return status === 'COMPLETED' ? ((await handle.result()) as BatchResult) : undefined;
    }, 300_000);

    assert.deepEqual(
      { total: result.total, started: result.started, completed: result.completed, passed: result.passed, errors: result.errors },
      { total: 6, started: 6, completed: 6, passed: 6, errors: 0 },
    );
    assert.equal(result.averageAtK, 1);
    assert.equal(result.passAtK, 1);
    assert.ok(seen.every((p) => p.inFlight.length <= 2), 'never more rollouts than desktops');
    assert.ok(seen.some((p) => p.continuedAsNew >= 1), 'progress survives continue-as-new');
    const runs = [];
    for await (const execution of h.stack.client.workflow.list({ query: `WorkflowId = "${batchWorkflowId(run, 'KAlgebra')}"` })) runs.push(execution);
    assert.equal(runs.length, 3, '6 rollouts, 2 per run: the batch continued as new twice');

    const summary = await h.stack.store.getJson<{ k: number; bySoftware: Record<string, { taskCount: number; runs: number }> }>(
      runSummaryKey(h.config.storage.prefix, run, 'KAlgebra'),
    );
    assert.equal(summary.k, 2);
    assert.deepEqual(summary.bySoftware.KAlgebra, { ...summary.bySoftware.KAlgebra, taskCount: 3, runs: 6 });

    const rollouts = await eventually('the rollouts in visibility', async () => {
      const found = [];
      for await (const e of h.stack.client.workflow.list({ query: `CodaRun = "${run}" AND WorkflowType = "rollout"` })) found.push(e);
      return found.length === 6 ? found : undefined;
    });
    assert.ok(rollouts.every((r) => r.status.name === 'COMPLETED'));

    // The same run started again finds every attempt done: it awaits them instead of running them twice.
    const again = (await (await start(run, ['A-01', 'C-03', 'C-01'], 2, `${batchWorkflowId(run, 'KAlgebra')}-again`)).result()) as BatchResult;
    assert.equal(again.completed, 6);
    assert.equal(again.passed, 6);
    const after = [];
    for await (const e of h.stack.client.workflow.list({ query: `CodaRun = "${run}" AND WorkflowType = "rollout"` })) after.push(e);
    assert.equal(after.length, 6, 'no rollout ran twice');
  });

  it('starts from the Temporal CLI with only run, stage, software and attempts, and answers its progress query', async () => {
    const run = `cli${Date.now()}`;
    const workflowId = batchWorkflowId(run, 'KAlgebra');
    // Asynchronous: the workers answering the CLI run in this very process.
    const cli = async (...args: string[]) =>
      (await execFileAsync(TEMPORAL, [...args, '--address', h.config.temporal.address, '--namespace', h.config.temporal.namespace, '-o', 'json'])).stdout;
    await cli(
      'workflow', 'start', '--type', 'rolloutBatch', '--task-queue', h.config.taskQueues.orchestrator, '--workflow-id', workflowId,
      '--input', JSON.stringify({ run, stage: 'evaluation', software: 'KAlgebra', attempts: 1, taskIds: ['C-03'] }),
    );
    const result = (await h.stack.client.workflow.getHandle(workflowId).result()) as BatchResult;
    assert.deepEqual({ total: result.total, passed: result.passed }, { total: 1, passed: 1 });
    const progress = JSON.parse(await cli('workflow', 'query', '--workflow-id', workflowId, '--name', 'progress')) as { queryResult: BatchProgress[] };
    assert.deepEqual(progress.queryResult[0]?.run, run);
    assert.equal(progress.queryResult[0]?.completed, 1);
    // The batch and its rollout, found by the search attribute they set themselves (visibility lags a little).
    await eventually('both workflows listed', async () => {
      const listed = JSON.parse(await cli('workflow', 'list', '--query', `CodaRun = "${run}"`)) as unknown[];
      return listed.length === 2 ? true : undefined;
    }, 30_000);
  });

  it('fails at once, naming the problem, for unknown software or unknown tasks', async () => {
    const run = `bad${Date.now()}`;
    await assert.rejects((await start(run, ['A-01'], 1, `${run}-sw`, 'Excel')).result(), (err: unknown) => {
      assert.ok(err instanceof WorkflowFailedError);
      assert.match(String(err.cause?.message), /^task set is invalid:\n {2}- unknown software "Excel": expected one of Celestia, ChimeraX, GrassGIS, KAlgebra, Lean, TeXstudio/);
      return true;
    });
    await assert.rejects((await start(run, ['A-01', 'Z-99'], 1, `${run}-task`)).result(), (err: unknown) => {
      assert.ok(err instanceof WorkflowFailedError);
      assert.match(String(err.cause?.message), /^task set KAlgebra is invalid:\n {2}- unknown KAlgebra task "Z-99"$/);
      return true;
    });
  });
});
