import assert from 'node:assert/strict';
import type { TaskSetSummary } from '../../activities/tasks/generation';
import { stageTasks, TaskLibrary } from '../../activities/tasks/library';
import { parseTrajectoryManifest, taskSetManifestSchema } from '../../apps/manifests';
import { readTask } from '../../doubles/scripted-models/generated-tasks';
import type { BatchResult } from '../../workflows/rollout/batch';
import { OsworldDesktop } from '../../activities/desktop/osworld/osworld-desktop';
import type { Task } from '../../core/task';
import type { RolloutResult } from '../../core/rollout-types';
import type { RolloutInput } from '../../workflows/rollout/contract';
import { createVmHost, type VmHost } from '../../workers/vm-host';
import { startHarness, type Harness } from '../support/harness';
import { startDoubledVm, STATES, type DoubledVm, type Variant } from './scienceboard-vm';
import { rolloutWorkflowId, taskGenerationWorkflowId } from '../../workflows/names';

/**
 * Every task of Celestia, ChimeraX, GRASS GIS and Lean in data/scienceboard, run by the rollout
 * workflow on the real Temporal and MinIO through the OSWorld adapter, on a ScienceBoard VM made of
 * TEST DOUBLES (the OSWorld server double and the app-server doubles), with the scripted planner
 * replaying the apps' reference policy: the task's stop at once (ANS with its answer, FAIL, or DONE).
 * Each task runs twice: on a deployment whose planner follows the reference and whose VM holds
 * the task's state, it passes; on one whose planner takes the perturbed plan and whose VM holds
 * the state with one value off, it fails, on that value or on its answer.
 */

const SOFTWARE = ['Celestia', 'ChimeraX', 'GrassGIS', 'Lean'];

interface Deployment {
  readonly h: Harness;
  readonly vm: DoubledVm;
  readonly host: VmHost;
  readonly running: Promise<void>;
}

async function deploy(name: string, errorRate: number): Promise<Deployment> {
  const vm = await startDoubledVm();
  const h = await startHarness({
    name,
    desktops: 1,
    displayFrom: 360,
    errorRate,
    edit: (doc) => {
      doc.hosts = [
        {
          id: `${name}-host`,
          kind: 'osworld',
          taskQueue: `${name}-vm`,
          vms: [vm.vm],
          resetTimeoutSeconds: 30,
          readyTimeoutSeconds: 10,
          initializePauseSeconds: 0,
          initializeWaitScale: 0,
        },
      ];
    },
  });
  // The host's one VM, as hosts.ts builds it, but fetching downloads from the test's stand-in web.
  const host = await createVmHost({ config: h.config, connection: h.stack.connection, hostId: h.hostId, env: h.env, createDesktop: () => new OsworldDesktop(vm.desktopOptions(`${h.hostId}/0`)) });
  return { h, vm, host, running: host.run() };
}

async function rollout(d: Deployment, run: string, task: Task, variant: Variant): Promise<RolloutResult> {
  const [entry] = await stageTasks(d.h.stack.store, d.h.config.storage.prefix, [task]);
  await d.vm.prepare(task, variant);
  const input: RolloutInput = { run, stage: 'test', task: entry!, attempt: 0, settings: d.h.settings };
  const ref = { run, software: task.type, task: task.id, attempt: 0 };
  return d.h.stack.client.workflow.execute('rollout', { taskQueue: d.h.config.taskQueues.orchestrator, workflowId: rolloutWorkflowId(ref), args: [input] }) as Promise<RolloutResult>;
}

describe('rollout workflow on a ScienceBoard VM of doubles: every Celestia, ChimeraX, GRASS GIS and Lean task', function () {
  this.timeout(900_000);
  const library = new TaskLibrary();
  const tasks = SOFTWARE.flatMap((software) => library.load(software));
  const run = `sbvm${Date.now()}`;
  let good: Deployment;
  let off: Deployment;
  const results = new Map<string, { pass: RolloutResult; off: RolloutResult }>();
  let revertsOfTasks = 0;

  before(async () => {
    [good, off] = await Promise.all([deploy('sbvm-ok', 0), deploy('sbvm-off', 1)]);
    // One VM per deployment: the rollouts of each run one after another, both deployments at once.
    const runAll = async (d: Deployment, variant: Variant) => {
      const out = new Map<string, RolloutResult>();
      for (const task of tasks) out.set(`${task.type}/${task.id}`, await rollout(d, `${run}-${variant}`, task, variant));
      return out;
    };
    const [passed, failed] = await Promise.all([runAll(good, 'pass'), runAll(off, 'off')]);
    for (const [key, result] of passed) results.set(key, { pass: result, off: failed.get(key) as RolloutResult });
    revertsOfTasks = good.vm.reverts();
  });

  after(async () => {
    for (const d of [good, off]) {
      if (d === undefined) continue;
      d.host.shutdown();
      await d.running;
      await d.h.stop();
      await d.vm.close();
    }
  });

  it('runs all the tasks of the four apps (every one has a test state)', () => {
    assert.ok(tasks.length >= 80, `${tasks.length} tasks`);
    assert.equal(results.size, tasks.length);
    for (const task of tasks) assert.ok(STATES[task.type]?.[task.id] !== undefined, `${task.type} ${task.id} has a state`);
  });

  for (const software of SOFTWARE) {
    it(`passes every ${software} task whose VM holds its state, stopping as its reference says`, () => {
      const failures = tasks
        .filter((t) => t.type === software)
        .flatMap((t) => {
          const r = results.get(`${t.type}/${t.id}`)?.pass;
          return r?.passed === true ? [] : [`${t.id}: ${r?.stop.reason} ${JSON.stringify(r?.evaluation?.checks ?? r?.stop)}`];
        });
      assert.deepEqual(failures, []);
    });

    it(`fails every ${software} task when one value of its state, or its answer, is off`, () => {
      const wrong = tasks
        .filter((t) => t.type === software)
        .flatMap((t) => {
          const r = results.get(`${t.type}/${t.id}`)?.off;
          const entry = STATES[t.type]?.[t.id];
          if (r?.passed !== false) return [`${t.id}: passed (${JSON.stringify(r?.evaluation)})`];
          const failedChecks = (r.evaluation?.checks ?? []).filter((c) => !c.passed);
          // The state's off value fails one of the app's own checks; a task checked by its stop fails on the answer.
          const expected = entry?.off !== undefined ? failedChecks.some((c) => c.type !== 'stop') : failedChecks.some((c) => c.type === 'stop');
          return expected ? [] : [`${t.id}: failed, but not on ${entry?.off !== undefined ? 'its state' : 'its stop'}: ${JSON.stringify(r.evaluation)}`];
        });
      assert.deepEqual(wrong, []);
    });
  }

  it('specializes on each app: the generator double writes a task set, a batch runs it on the VM, each rollout stops as the task\'s plan says', async () => {
    const version = `g${Date.now()}`;
    for (const software of SOFTWARE) {
      const summary = await good.h.execute<TaskSetSummary>('taskGeneration', taskGenerationWorkflowId(software, version), { software, version, count: 4 });
      const manifest = taskSetManifestSchema.parse(await good.h.stack.store.getJson(summary.manifestKey));
      assert.equal(manifest.tasks.length, 4, software);
      const batchRun = `${run}-spec-${software}`;
      const batch = await good.h.execute<BatchResult>('rolloutBatch', `batch-${batchRun}`, { run: batchRun, software, taskSet: version, attempts: 1, stage: 'specialization' });
      assert.deepEqual({ completed: batch.completed, unevaluated: batch.unevaluated, errors: batch.errors }, { completed: 4, unevaluated: 4, errors: 0 }, software);
      const keys = (await good.h.stack.store.list(`${good.h.config.storage.prefix}/runs/${batchRun}/${software}/`)).filter((k) => k.endsWith('/manifest.json'));
      assert.equal(keys.length, 4, software);
      for (const key of keys) {
        const trajectory = parseTrajectoryManifest(await good.h.stack.store.getJson(key), key);
        const entry = manifest.tasks.find((t) => t.id === trajectory.taskId);
        const plan = readTask(software, entry?.instruction ?? '')?.ans;
        const last = trajectory.steps.at(-1)?.action;
        const expected = plan === undefined ? { type: 'fail' } : plan.startsWith('ANS ') ? { type: 'answer', text: plan.slice(4) } : { type: 'done' };
        assert.deepEqual(last, expected, `${software} ${entry?.instruction}`);
      }
    }
  });

  it('reverted the VM for every rollout and ran the apps\' funcs on the doubles', () => {
    assert.equal(revertsOfTasks, tasks.length);
    assert.ok(good.vm.grass.requests.some((r) => r.path === '/init/layer'));
    assert.ok(good.vm.chimerax.commands.includes('alphafold match A8Z1J3'));
    assert.ok(good.vm.server.requests.some((r) => r.path === '/lean/check'));
    assert.ok(good.vm.celestia.queries.length > 0);
  });
});
