import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { isTerminal } from '../../core/episode';
import { referencePlan } from '../../apps/kalgebra/reference';
import { TaskLibrary } from '../../activities/tasks/library';
import { startDaemon, stopDaemon, waitUntilHealthy } from '../../infra/daemon';
import { minioHealthy, minioServerSpec } from '../../infra/minio-server';
import { rolloutProgress } from '../../workflows/rollout/rollout';
import type { RolloutResult } from '../../core/rollout-types';
import { startHarness, type Harness } from '../support/harness';
import { eventually, manifestOf, startRollout } from '../support/rollouts';

describe('an S3 outage in the middle of a rollout', function () {
  this.timeout(300_000);
  let h: Harness | undefined;
  after(async () => h?.stop());

  it('is waited out: writes are retried, every step and screenshot is kept, the rollout passes', async () => {
    h = await startHarness({ name: 's3down', desktops: 1, displayFrom: 190 });
    const harness = h;
    await harness.startVmHost();
    const handle = await startRollout(harness, `s3down${Date.now()}`, 'C-08');
    await eventually('step 1', async () => ((await handle.query(rolloutProgress)).step >= 1 ? true : undefined));

    const { config, env } = harness.stack;
    assert.ok(await stopDaemon(config.dataDir, 'minio'));
    await sleep(8_000);
    const during = await handle.query(rolloutProgress);
    assert.notEqual(during.status, 'finished', 'the rollout waits for storage instead of finishing without it');
    startDaemon(config.dataDir, minioServerSpec(config, env));
    await waitUntilHealthy(config.dataDir, 'minio', () => minioHealthy(config), 60_000);

    const result = (await handle.result()) as RolloutResult;
    assert.equal(result.stop.reason, 'DONE');
    assert.equal(result.passed, true);
    assert.equal(result.resumes, 0, 'storage trouble is waited out, not mistaken for a lost desktop');
    const manifest = await manifestOf(harness, result);
    const plan = referencePlan(new TaskLibrary().load('KAlgebra', ['C-08'])[0]!, { width: 1920, height: 1080 });
    assert.ok(plan.replayable);
    assert.deepEqual(
      manifest.steps.filter((s) => s.action !== null && !isTerminal(s.action)).map((s) => s.action),
      plan.actions.filter((a) => !isTerminal(a)),
    );
    for (const step of manifest.steps) assert.ok(await harness.stack.store.exists(step.screenshotKey), `${step.screenshotKey} is stored`);
  });
});
