import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { referencePlan } from '../../apps/kalgebra/reference';
import { isTerminal } from '../../core/episode';
import { daemonState, startDaemon, stopDaemon, waitUntilHealthy } from '../../infra/daemon';
import { temporalHealthy, temporalServerSpec } from '../../infra/temporal-server';
import { workerSpec } from '../../infra/worker-process';
import { TaskLibrary } from '../../activities/tasks/library';
import { processesOf } from '../../io/process';
import { batchProgress, type BatchResult } from '../../workflows/rollout/batch';
import { rolloutProgress } from '../../workflows/rollout/rollout';
import type { RolloutResult } from '../../core/rollout-types';
import { startHarness, type Harness } from '../support/harness';
import { startPrivateStack } from '../stack';
import { eventually, manifestOf, startRollout, waitForPoller } from '../support/rollouts';
import { batchWorkflowId, rolloutWorkflowId } from '../../workflows/names';

const TASKS = ['C-05', 'C-08', 'C-09', 'B-07', 'A-01'];
const screen = { width: 1920, height: 1080 };
const library = new TaskLibrary();

/** The actions a clean run of the task performs (the reference plan without its final stop). */
function expectedActions(taskId: string) {
  const plan = referencePlan(library.load('KAlgebra', [taskId])[0]!, screen);
  assert.ok(plan.replayable);
  return plan.actions.filter((a) => !isTerminal(a));
}

/** Starts the harness's vm-host as a real process (its own process group) and waits until it polls. */
async function spawnVmHost(h: Harness, name: string): Promise<number> {
  const state = startDaemon(h.config.dataDir, workerSpec(h.config, 'vm-host', ['--host', h.hostId], h.env, name));
  await waitForPoller(h, state, h.config.hosts[0]!.taskQueue);
  return state.pid!;
}

async function startBatch(h: Harness, run: string, taskIds: readonly string[], attempts = 1) {
  return h.stack.client.workflow.start('rolloutBatch', {
    taskQueue: h.config.taskQueues.orchestrator,
    workflowId: batchWorkflowId(run, 'KAlgebra'),
    args: [{ run, stage: 'test', software: 'KAlgebra', attempts, taskIds }],
  });
}

describe('crashes: rollouts resume by themselves', function () {
  this.timeout(600_000);
  let h: Harness | undefined;
  let privateStack: Awaited<ReturnType<typeof startPrivateStack>> | undefined;
  afterEach(async () => {
    for (const name of ['vm-host-a', 'vm-host-b']) if (h) await stopDaemon(h.config.dataDir, name, 5_000);
    await h?.stop();
    h = undefined;
    await privateStack?.stop();
    privateStack = undefined;
  });

  it('SIGKILL of the vm-host mid-rollout: 5 of 5 rollouts complete, every step exactly once', async () => {
    h = await startHarness({ name: 'crash', desktops: 2, displayFrom: 160 });
    const harness = h;
    const firstHost = await spawnVmHost(harness, 'vm-host-a');
    const run = `crash${Date.now()}`;
    const batch = await startBatch(harness, run, TASKS);

    // Kill the host while a rollout is between its first and last action.
    await eventually('a rollout in the middle of its steps', async () => {
      for (const task of TASKS) {
        const id = rolloutWorkflowId({ run, software: 'KAlgebra', task, attempt: 0 });
        const progress = await harness.stack.client.workflow.getHandle(id).query(rolloutProgress).catch(() => undefined);
        if (progress !== undefined && progress.step >= 2 && progress.status !== 'finished') return true;
      }
      return undefined;
    });
    process.kill(firstHost, 'SIGKILL');
    await spawnVmHost(harness, 'vm-host-b');

    const result = (await batch.result()) as BatchResult;
    assert.deepEqual({ completed: result.completed, passed: result.passed, errors: result.errors }, { completed: 5, passed: 5, errors: 0 });
    let resumed = 0;
    for (const task of TASKS) {
      const id = rolloutWorkflowId({ run, software: 'KAlgebra', task, attempt: 0 });
      const rollout = (await harness.stack.client.workflow.getHandle(id).result()) as RolloutResult;
      const manifest = await manifestOf(harness, rollout);
      assert.deepEqual(manifest.steps.map((s) => s.index), manifest.steps.map((_, i) => i + 1), `${task}: steps numbered once each`);
      const performed = manifest.steps.filter((s) => s.action !== null && !isTerminal(s.action)).map((s) => s.action);
      assert.deepEqual(performed, expectedActions(task), `${task}: no step lost or repeated`);
      assert.equal(manifest.evaluation?.passed, true, `${task} passes its checks after the crash`);
      resumed += manifest.resumes;
    }
    assert.ok(resumed >= 1, 'at least one rollout was resumed on a fresh desktop');
    // Leftovers of the killed host (its display, app) were cleared by the new host's resets or are killed here.
    try {
      process.kill(-firstHost, 'SIGKILL');
    } catch {
      /* group already gone */
    }
  });

  it('SIGTERM of the vm-host: it finishes its work, closes its desktops and exits; the rollout moves on', async () => {
    h = await startHarness({ name: 'graceful', desktops: 1, displayFrom: 160 });
    const harness = h;
    const pid = await spawnVmHost(harness, 'vm-host-a');
    const handle = await startRollout(harness, `graceful${Date.now()}`, 'C-05');
    await eventually('an action in flight', async () => {
      const p = await handle.query(rolloutProgress);
      return p.status === 'acting' && p.step >= 1 ? true : undefined;
    });
    process.kill(pid, 'SIGTERM');
    await eventually('the host to exit', async () => (daemonState(harness.config.dataDir, 'vm-host-a').running ? undefined : true), 60_000);
    assert.deepEqual(processesOf(`${harness.hostId}/0`), [], 'no desktop process outlives its host');
    assert.match(readFileSync(daemonState(harness.config.dataDir, 'vm-host-a').log, 'utf8'), /vm-host graceful-host stopped/);

    await spawnVmHost(harness, 'vm-host-b');
    const result = (await handle.result()) as RolloutResult;
    assert.equal(result.passed, true);
    assert.equal(result.resumes, 1, 'the rollout left the stopped host for a fresh lease once');
    const manifest = await manifestOf(harness, result);
    assert.deepEqual(manifest.steps.filter((s) => s.action !== null && !isTerminal(s.action)).map((s) => s.action), expectedActions('C-05'));
  });

  it('restart of the Temporal dev server mid-batch loses nothing', async () => {
    // A server of its own: the shared one serves the files running beside this one.
    privateStack = await startPrivateStack('coda-tsrv');
    h = await startHarness({ name: 'tsrv', desktops: 2, displayFrom: 160, stack: privateStack });
    const harness = h;
    await harness.startVmHost();
    const run = `tsrv${Date.now()}`;
    const tasks = ['A-01', 'C-01', 'C-04', 'B-01'];
    const batch = await startBatch(harness, run, tasks);
    const before = await eventually('the first rollout to finish', async () => {
      const progress = await batch.query(batchProgress);
      return progress.completed >= 1 ? progress : undefined;
    });
    // The restart must hit a batch with work left, or the test would prove nothing.
    assert.ok(before.completed < tasks.length, `the batch had ${before.completed} of ${tasks.length} done when the server stopped`);

    const { config } = harness.stack;
    assert.ok(await stopDaemon(config.dataDir, 'temporal'));
    assert.equal(daemonState(config.dataDir, 'temporal').running, false);
    await sleep(2_000);
    startDaemon(config.dataDir, temporalServerSpec(config, { headless: true }));
    await waitUntilHealthy(config.dataDir, 'temporal', () => temporalHealthy(config), 60_000);

    const result = (await batch.result()) as BatchResult;
    assert.deepEqual({ completed: result.completed, passed: result.passed, errors: result.errors }, { completed: 4, passed: 4, errors: 0 });
    for (const task of tasks) {
      const rollout = (await harness.stack.client.workflow.getHandle(rolloutWorkflowId({ run, software: 'KAlgebra', task, attempt: 0 })).result()) as RolloutResult;
      const manifest = await manifestOf(harness, rollout);
      assert.deepEqual(manifest.steps.filter((s) => s.action !== null && !isTerminal(s.action)).map((s) => s.action), expectedActions(task));
    }
  });

  it('restart of the orchestrator worker mid-rollout: the rollout finishes on the new one', async () => {
    h = await startHarness({ name: 'orch', desktops: 1, displayFrom: 160 });
    const harness = h;
    await harness.startVmHost();
    const run = `orch${Date.now()}`;
    const handle = await startRollout(harness, run, 'C-08');
    const before = await eventually('step 2', async () => {
      const progress = await handle.query(rolloutProgress);
      return progress.step >= 2 ? progress : undefined;
    });
    await harness.stopOrchestrator();
    await harness.startOrchestrator();
    const result = (await handle.result()) as RolloutResult;
    assert.equal(result.passed, true);
    // Steps were decided after the restart: the new worker carried the rollout on.
    assert.ok(before.status !== 'finished' && result.steps > before.step, `stopped at step ${before.step} (${before.status}); the rollout ended at ${result.steps}`);
    const manifest = await manifestOf(harness, result);
    assert.deepEqual(manifest.steps.filter((s) => s.action !== null && !isTerminal(s.action)).map((s) => s.action), expectedActions('C-08'));
  });

  it('resume "restart" starts the task over on a fresh desktop instead of replaying', async () => {
    h = await startHarness({ name: 'restart', desktops: 1, displayFrom: 160, edit: (doc) => (doc.rollouts.resume = 'restart') });
    const harness = h;
    const pid = await spawnVmHost(harness, 'vm-host-a');
    const run = `restart${Date.now()}`;
    const handle = await startRollout(harness, run, 'C-05');
    await eventually('step 2', async () => ((await handle.query(rolloutProgress)).step >= 2 ? true : undefined));
    process.kill(pid, 'SIGKILL');
    await spawnVmHost(harness, 'vm-host-b');
    const result = (await handle.result()) as RolloutResult;
    assert.equal(result.passed, true);
    assert.equal(result.resumes, 1);
    const manifest = await manifestOf(harness, result);
    assert.deepEqual(manifest.steps.filter((s) => s.action !== null && !isTerminal(s.action)).map((s) => s.action), expectedActions('C-05'));
    assert.ok(manifest.steps.every((s) => !s.resumed), 'steps after a restart are fresh, not resumed');
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  });
});

