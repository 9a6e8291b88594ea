import assert from 'node:assert/strict';
import { parseTrajectoryManifest } from '../../apps/manifests';
import { stageTasks, TaskLibrary } from '../../activities/tasks/library';
import { rolloutProgress } from '../../workflows/rollout/rollout';
import type { RolloutResult } from '../../core/rollout-types';
import type { RolloutInput } from '../../workflows/rollout/contract';
import { pngSize } from '../support/desktop';
import { CODA_RUN, CODA_SOFTWARE, CODA_STAGE } from '../../workflows/search-attributes';
import { startHarness, type Harness } from '../support/harness';
import { eventually } from '../support/rollouts';
import { rolloutWorkflowId } from '../../workflows/names';

describe('rollout workflow on a real desktop with the scripted models', function () {
  this.timeout(300_000);
  let h: Harness;
  const run = `r${Date.now()}`;

  before(async () => {
    h = await startHarness({ name: 'rollout', desktops: 1, displayFrom: 140 });
    await h.startVmHost();
  });
  after(async () => h?.stop());

  it('solves A-01: planner, executor, real input, evaluation, manifest and screenshots in S3', async () => {
    const [entry] = await stageTasks(h.stack.store, h.config.storage.prefix, new TaskLibrary().load('KAlgebra', ['A-01']));
    const input: RolloutInput = { run, stage: 'test', task: entry!, attempt: 0, settings: h.settings };
    const ref = { run, software: 'KAlgebra', task: 'A-01', attempt: 0 };
    const handle = await h.stack.client.workflow.start('rollout', {
      taskQueue: h.config.taskQueues.orchestrator,
      workflowId: rolloutWorkflowId(ref),
      args: [input],
    });
    // Answered at once (status "starting" while the input is checked), then with the task's budget.
    assert.ok(['starting', 'leasing', 'resetting', 'deciding', 'acting'].includes((await handle.query(rolloutProgress)).status));
    const progress = await eventually('the input checked', async () => {
      const p = await handle.query(rolloutProgress);
      return p.status === 'starting' ? undefined : p;
    });
    assert.equal(progress.maxSteps, 5);
    const result = (await handle.result()) as RolloutResult;
    assert.equal(result.stop.reason, 'DONE');
    assert.equal(result.passed, true, JSON.stringify(result.evaluation));

    const manifest = parseTrajectoryManifest(await h.stack.store.getJson(result.manifestKey), result.manifestKey);
    assert.equal(manifest.taskId, 'A-01');
    assert.equal(manifest.steps.length, result.steps);
    assert.deepEqual(manifest.steps.map((s) => s.index), manifest.steps.map((_, i) => i + 1));
    assert.equal(manifest.steps.at(-1)?.action?.type, 'done');
    assert.match(manifest.steps[0]?.planner.raw ?? '', /^Thought: /);
    assert.ok(manifest.steps.some((s) => s.executor !== undefined && /^Thought: .*\nAction: /s.test(s.executor.raw)));
    // The planner's words are plain, as a real planner's: the executor grounded them, no tag told it the action.
    assert.ok(manifest.steps.some((s) => s.executor !== undefined && s.action?.type === 'type'), 'the executor grounded the typing step');
    assert.ok(!JSON.stringify(manifest).includes('[action'), 'no [action: …] tag in the stored trajectory');
    const shot = await h.stack.store.get(manifest.initialScreenshotKey);
    assert.deepEqual(pngSize(shot), { width: 1920, height: 1080 });
    const after = await handle.query(rolloutProgress);
    assert.equal(after.status, 'finished');

    // The rollout tags itself, so list views find it by software, stage and run.
    const described = await handle.describe();
    assert.deepEqual(described.typedSearchAttributes.get(CODA_RUN), run);
    assert.deepEqual(described.typedSearchAttributes.get(CODA_SOFTWARE), 'KAlgebra');
    assert.deepEqual(described.typedSearchAttributes.get(CODA_STAGE), 'test');

    // History stays small: keys and short texts only, never screenshots or raw model replies.
    const history = await handle.fetchHistory();
    const largest = Math.max(...(history.events ?? []).map((e) => JSON.stringify(e).length));
    assert.ok(largest < 8_000, `largest history event is ${largest} bytes`);
    assert.ok(!JSON.stringify(history).includes('iVBORw0KGgo'), 'no PNG bytes in history');
  });

  it('solves TeXstudio C-06 on the same host: leased for TeXstudio, edited through the GUI, compiled', async () => {
    const [entry] = await stageTasks(h.stack.store, h.config.storage.prefix, new TaskLibrary().load('TeXstudio', ['C-06']));
    const input: RolloutInput = { run, stage: 'test', task: entry!, attempt: 0, settings: h.settings };
    const handle = await h.stack.client.workflow.start('rollout', {
      taskQueue: h.config.taskQueues.orchestrator,
      workflowId: rolloutWorkflowId({ run, software: 'TeXstudio', task: 'C-06', attempt: 0 }),
      args: [input],
    });
    const result = (await handle.result()) as RolloutResult;
    assert.equal(result.passed, true, JSON.stringify(result.evaluation));
    assert.equal(result.stop.reason, 'DONE');
    const manifest = parseTrajectoryManifest(await h.stack.store.getJson(result.manifestKey), result.manifestKey);
    assert.deepEqual(
      manifest.steps.map((s) => s.action?.type),
      ['hotkey', 'type', 'hotkey', 'hotkey', 'done'],
    );
    assert.deepEqual(manifest.steps[1]?.action, { type: 'type', text: '\\or\t\\vee', submit: true });
    assert.match(result.evaluation?.checks[0]?.detail ?? '', /^pdflatex: main\.pdf/);
  });
});
