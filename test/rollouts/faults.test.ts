import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { RolloutResult } from '../../core/rollout-types';
import { parseTask } from '../../core/task';
import { stageTasks } from '../../activities/tasks/library';
import { startHarness, type Harness } from '../support/harness';
import { manifestOf, startRollout } from '../support/rollouts';
import { rolloutWorkflowId } from '../../workflows/names';
import { APPS } from '../../apps/index';

describe('rollout faults: bad model output, unreachable and refusing endpoints, unrunnable tasks, duplicate starts', function () {
  this.timeout(300_000);
  const run = `faults${Date.now()}`;
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it('records malformed replies as failed steps with their raw text, then ends with a clear reason', async () => {
    h = await startHarness({ name: 'malformed', desktops: 1, displayFrom: 150, malformedRate: 1 });
    await h.startVmHost();
    const handle = await startRollout(h, run, 'A-01');
    const result = (await handle.result()) as RolloutResult;
    assert.equal(result.stop.reason, 'ERROR');
    assert.match(result.stop.detail ?? '', /^model output malformed 3 times in a row; last: planner output malformed: /);
    const manifest = await manifestOf(h, result);
    assert.equal(manifest.steps.length, 3);
    for (const step of manifest.steps) {
      assert.equal(step.action, null);
      assert.equal(step.planner.raw, 'I think the next step is to look around the window.');
      assert.match(step.error ?? '', /planner output malformed/);
    }
    assert.equal(manifest.evaluation, undefined);
  });

  it('ends with ERROR naming an unreachable planner endpoint after bounded retries', async () => {
    // An endpoint that accepts connections and drops them at once, counting every try.
    let connections = 0;
    const broken = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
    const port = (broken.address() as AddressInfo).port;
    try {
      h = await startHarness({
        name: 'unreachable',
        desktops: 1,
        displayFrom: 150,
        edit: (doc) => {
          doc.models.planner = { ...doc.models.planner, baseUrl: `http://127.0.0.1:${port}/v1`, maxRetries: 1, timeoutSeconds: 5 };
          doc.rollouts.modelAttempts = 2;
        },
      });
      await h.startVmHost();
      const handle = await startRollout(h, run, 'C-01');
      const result = (await handle.result()) as RolloutResult;
      assert.equal(result.stop.reason, 'ERROR');
      assert.match(result.stop.detail ?? '', new RegExp(`planner \\(coda-planner at http://127\\.0\\.0\\.1:${port}/v1\\) is unreachable`));
      assert.equal(result.steps, 0);
      assert.equal(connections, 4, '2 decision attempts, each a request and one client retry');
      // The second attempt waited on a workflow timer of the retry's backoff (2 s), not inside the
      // worker's core, whose leftover timer panics once the worker has shut down (workflows/inputs.ts).
      const events = (await handle.fetchHistory()).events ?? [];
      const backoffs = events.filter((e) => Number(e.timerStartedEventAttributes?.startToFireTimeout?.seconds ?? 0) === 2);
      const markers = events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
      assert.equal(backoffs.length, 1, 'one retry, through a 2 s workflow timer');
      assert.equal(markers.length, 3, "the input check's marker and one per decision attempt");
    } finally {
      broken.close();
    }
  });

  it('does not retry a request the endpoint refuses (unknown model: 404)', async () => {
    h = await startHarness({
      name: 'refused',
      desktops: 1,
      displayFrom: 150,
      edit: (doc) => (doc.models.planner = { ...doc.models.planner, model: 'no-such-model' }),
    });
    await h.startVmHost();
    const handle = await startRollout(h, run, 'C-04');
    const result = (await handle.result()) as RolloutResult;
    assert.equal(result.stop.reason, 'ERROR');
    assert.match(result.stop.detail ?? '', /planner \(no-such-model at .*\) answered 404/);
    assert.equal(h.models.served.get('no-such-model'), 1, 'one request, no retries');
  });

  it('ends at once, naming the software, when no host of the deployment runs the task (no app for it)', async () => {
    h = await startHarness({ name: 'noapp', desktops: 1, displayFrom: 150 });
    await h.startVmHost();
    const celestia = parseTask(APPS, 
      {
        type: 'Celestia',
        sort: 'VM',
        steps: 5,
        instruction: 'Go to Mars in Celestia.',
        version: '0.1',
        snapshot: 'sci_bench',
        initialize: [{ func: 'launch', command: '/app/bin/celestia', shell: true }],
        evaluate: [{ type: 'stop', value: 'DONE' }],
      },
      'X-01',
    );
    const [entry] = await stageTasks(h.stack.store, h.config.storage.prefix, [celestia]);
    const ref = { run, software: 'Celestia', task: 'X-01', attempt: 0 };
    const result = (await h.stack.client.workflow.execute('rollout', {
      taskQueue: h.config.taskQueues.orchestrator,
      workflowId: rolloutWorkflowId(ref),
      args: [{ run, stage: 'test', task: entry!, attempt: 0, settings: h.settings }],
    })) as RolloutResult;
    assert.equal(result.stop.reason, 'ERROR');
    assert.match(result.stop.detail ?? '', /no host of the deployment runs Celestia desktops \(host noapp-host serves KAlgebra, TeXstudio\)/);
    assert.equal(result.resumes, 0, 'a task no desktop can run is not retried on other desktops');
  });

  it('never runs the same attempt twice: a second start of its id is refused', async () => {
    h = await startHarness({ name: 'twice', desktops: 1, displayFrom: 150 });
    await h.startVmHost();
    const first = await startRollout(h, run, 'C-03');
    await assert.rejects(startRollout(h, run, 'C-03'), WorkflowExecutionAlreadyStartedError);
    const result = (await first.result()) as RolloutResult;
    assert.equal(result.stop.reason, 'ANS');
    assert.equal(result.stop.answer, '46368');
    assert.equal(result.passed, true);
  });
});
