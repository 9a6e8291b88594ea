import assert from 'node:assert/strict';
import { MAX_MANIFEST_BYTES, s3RewardScorer } from '../../activities/training/reward';
import type { ObjectStore } from '../../activities/storage/object-store';
import { manifestKey, screenshotKey } from '../../core/keys';
import { formatPlannerOutput } from '../../core/planner-parser';
import { GRPO_LABEL_SCHEMA } from '../../core/training';
import { TRAJECTORY_SCHEMA } from '../../core/trajectory';
import { freePort, testStack, type TestStack } from '../stack';

/**
 * What a reward request's label may make the service read (issue 29, item 3): a rollout's manifest
 * under the deployment's prefix, of bounded size, and the screenshot of its step; nothing else in
 * the bucket, and no object's text in the answer. Every sample here is refused before the
 * executor, which points at a closed port.
 */
describe('reward service: what a label may make it read', function () {
  this.timeout(120_000);
  let stack: TestStack;
  let prefix: string;
  let reads: string[];
  let score: ReturnType<typeof s3RewardScorer>;
  const run = `labels${Date.now()}`;
  const ref = { run, software: 'KAlgebra', task: 'A-01', attempt: 0 };
  const secret = () => `${prefix}/checkpoints/${run}/files/adapter_model.safetensors`;

  /** A planner reply that needs the executor, for a label naming `manifest` (and `screenshot`). */
  const sample = (manifest: string, screenshot = screenshotKey(prefix, ref, 1)) => {
    const prompt = '<|im_start|>user\nWhat next?<|im_end|>\n<|im_start|>assistant\n';
    const label = { schema: GRPO_LABEL_SCHEMA, software: 'KAlgebra', manifestKey: manifest, step: 1, screenshotKey: screenshot, screen: { width: 1920, height: 1080 }, action: { type: 'click', x: 10, y: 20 } };
    return { query: `${prompt}${formatPlannerOutput('Click the input field.', { kind: 'instruction', text: 'click the input field' })}<|im_end|>`, prompt, label: JSON.stringify(label) };
  };

  before(async () => {
    stack = await testStack();
    prefix = stack.config.storage.prefix;
    reads = [];
    // Every key the scorer asks the store for.
    const spy = Object.create(stack.store) as ObjectStore;
    spy.get = (key: string, maxBytes?: number) => {
      reads.push(key);
      return stack.store.get(key, maxBytes);
    };
    const executor = { ...stack.config.models.executor, baseUrl: `http://127.0.0.1:${await freePort()}/v1`, maxRetries: 0 };
    score = s3RewardScorer({ ...stack.config, models: { ...stack.config.models, executor } }, spy, stack.config.training.rewardService, stack.env);
    const step = { index: 1, screenshotKey: screenshotKey(prefix, ref, 1), planner: { thought: 't', actionText: 'a', raw: 'r', model: 'p', latencyMs: 1 }, action: null, timings: { plannerMs: 1 }, startedAt: new Date().toISOString() };
    const manifest = {
      schema: TRAJECTORY_SCHEMA, run, software: 'KAlgebra', taskId: 'A-01', attempt: 0, stage: 'test', task: { instruction: 'Plot x', maxSteps: 5 },
      models: { planner: { model: 'p', baseUrl: 'http://127.0.0.1:1/v1' }, executor: { model: 'e', baseUrl: 'http://127.0.0.1:1/v1' } },
      desktop: { host: 'h', id: 'h/0' }, steps: [step], initialScreenshotKey: screenshotKey(prefix, ref, 0), stop: { reason: 'FAIL' }, resumes: 0, startedAt: step.startedAt, endedAt: step.startedAt,
    };
    await stack.store.putJson(manifestKey(prefix, ref), manifest);
    await stack.store.put(secret(), 'SECRET-WEIGHTS 0123456789');
  });

  it('reads only a rollout manifest key under the deployment\'s prefix: a checkpoint, another prefix, a path with .. are refused unread', async () => {
    const keys = [secret(), `elsewhere/runs/${run}/KAlgebra/A-01/0/manifest.json`, `${prefix}/runs/${run}/KAlgebra/A-01/0/../../../../checkpoints/${run}/manifest.json`, `${prefix}/training-jobs/${run}/checkpoints/latest.json`];
    for (const key of keys) {
      const scored = await score(sample(key));
      assert.deepEqual({ reward: scored.reward, logs: scored.logs }, { reward: 0, logs: { bad_label: 1 } }, key);
      assert.equal(scored.error, `label.manifestKey ${key}: not a trajectory manifest key (${prefix}/runs/{run}/{software}/{task}/{attempt}/manifest.json)`);
    }
    assert.deepEqual(reads, []);
  });

  it('keeps an object\'s bytes and JSON keys out of the answer', async () => {
    const notJson = manifestKey(prefix, { ...ref, task: 'A-02' });
    const notManifest = manifestKey(prefix, { ...ref, task: 'A-03' });
    await stack.store.put(notJson, 'SECRET-TEXT that is not JSON');
    await stack.store.putJson(notManifest, { secretFieldName: 'SECRET-VALUE' });
    const answers = [];
    for (const key of [notJson, notManifest]) answers.push(await score(sample(key)));
    assert.deepEqual(answers.map((a) => [a.logs, a.error]), [
      [{ bad_label: 1 }, `label.manifestKey ${notJson}: not JSON`],
      [{ bad_label: 1 }, `label.manifestKey ${notManifest}: not a trajectory manifest`],
    ]);
  });

  it('refuses a manifest larger than it reads by its length', async () => {
    const huge = manifestKey(prefix, { ...ref, task: 'A-04' });
    await stack.store.put(huge, Buffer.alloc(MAX_MANIFEST_BYTES + 1, 0x20));
    const scored = await score(sample(huge));
    assert.deepEqual(scored.logs, { bad_label: 1 });
    assert.equal(scored.error, `label.manifestKey ${huge}: ${stack.store.uri(huge)} is ${MAX_MANIFEST_BYTES + 1} bytes, more than the ${MAX_MANIFEST_BYTES} read here`);
  });

  it('sends the executor only the screenshot of the labelled step of that trajectory', async () => {
    reads.length = 0;
    const scored = await score(sample(manifestKey(prefix, ref), secret()));
    assert.deepEqual(scored.logs, { bad_label: 1 });
    assert.equal(scored.error, `label.screenshotKey ${secret()}: not the screenshot of step 1 of ${manifestKey(prefix, ref)}`);
    assert.deepEqual(reads, [manifestKey(prefix, ref)], 'the manifest, not the object named as the screenshot');
  });
});
