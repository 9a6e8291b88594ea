import assert from 'node:assert/strict';
import sharp from 'sharp';
import type { JudgeOutcome } from '../../activities/judge/activities';
import { readOnlyImages, ImagePreparer } from '../../activities/models/images';
import { pngSize, variantKey } from '../../core/images';
import { verdictFileSchema } from '../../core/judge/verdict-file';
import { attemptOfManifest } from '../../core/keys';
import type { RolloutResult } from '../../core/rollout-types';
import { startHarness, type Harness } from '../support/harness';
import { manifestOf, startRollout } from '../support/rollouts';

const EXACT = { high: { falsePositive: 0, falseNegative: 0 }, low: { falsePositive: 0, falseNegative: 0 }, unreadable: 0 };

describe('screenshots prepared where they are captured, sent inline or by reference (real desktop, MinIO, Temporal)', function () {
  this.timeout(300_000);
  let h: Harness;

  before(async () => {
    h = await startHarness({
      name: 'images',
      desktops: 1,
      displayFrom: 340,
      models: (doc) => {
        // The planner and the judge fetch their images by presigned URL, the executor gets them inline.
        doc.models.planner.imageTransport = 'url';
        doc.models.executor.imageTransport = 'data';
        doc.models.judges = [{ name: 'judge-url', baseUrl: '${CODA_JUDGE_A_URL}', model: 'judge-url', imageTransport: 'url' }];
        doc.judging.plan = { lowResolutionVotes: 1, highResolutionVotes: 1, judges: ['judge-url'] };
        delete doc.judging.strategies;
        doc.dev.scriptedModels.judges = { 'judge-url': EXACT };
      },
    });
    await h.startVmHost();
  });
  after(async () => h?.stop());

  it('stores the variants beside each screenshot, sends them by URL and inline, and resizes nothing on the orchestrator', async () => {
    const result = (await (await startRollout(h, `img${Date.now()}`, 'A-01')).result()) as RolloutResult;
    assert.equal(result.passed, true, JSON.stringify(result.stop));
    const manifest = await manifestOf(h, result);
    for (const key of [manifest.initialScreenshotKey, ...manifest.steps.map((s) => s.screenshotKey)]) {
      assert.deepEqual(pngSize(await h.stack.store.get(key)), { width: 1920, height: 1080 });
      assert.deepEqual(pngSize(await h.stack.store.get(variantKey(key, { width: 1280, height: 720 }))), { width: 1280, height: 720 }, 'the planner\'s and the high-resolution judge\'s box');
      assert.deepEqual(pngSize(await h.stack.store.get(variantKey(key, { width: 640, height: 360 }))), { width: 640, height: 360 }, 'the low-resolution judge\'s box');
    }
    const planner = h.models.images.get('coda-planner');
    const executor = h.models.images.get('ui-tars-1.5-7b');
    assert.ok(planner !== undefined && planner.url > 0 && planner.data === 0, `planner images ${JSON.stringify(planner)}`);
    assert.ok(executor !== undefined && executor.data > 0 && executor.url === 0, `executor images ${JSON.stringify(executor)}`);

    const manifestKey = result.manifestKey;
    const outcome = await h.execute<JudgeOutcome>('judgeTrajectory', `judge-images-${Date.now()}`, { manifestKey });
    assert.equal(outcome.success, true);
    const verdict = verdictFileSchema.parse(await h.stack.store.getJson(outcome.verdictKey));
    const screens = manifest.steps.length + 1;
    assert.deepEqual(verdict.votes.map((v) => v.cost.pixels), [screens * 640 * 360, screens * 1280 * 720]);
    assert.ok((h.models.images.get('judge-url')?.url ?? 0) === 2 * screens && (h.models.images.get('judge-url')?.data ?? 0) === 0);
    assert.equal(attemptOfManifest(h.config.storage.prefix, manifestKey).task, 'A-01');

    assert.equal(h.images.preparedHere, 0, 'no image was decoded or resized on the orchestrator');
  });

  it('resizes on the orchestrator only what has no variant, and says so', async () => {
    const png = await sharp({ create: { width: 1920, height: 1080, channels: 3, background: { r: 10, g: 20, b: 30 } } }).png().toBuffer();
    const preparer = new ImagePreparer([{ width: 1280, height: 720 }]);
    const source = readOnlyImages(async (key) => {
      if (key === 'shot.png') return png;
      throw new Error(`no ${key}`);
    });
    const sent = await preparer.image(source, { key: 'shot.png', box: { width: 1280, height: 720 }, transport: 'data', sourceSize: { width: 1920, height: 1080 } });
    assert.deepEqual([sent.width, sent.height, preparer.preparedHere], [1280, 720, 1]);
    const native = await preparer.image(source, { key: 'shot.png', transport: 'data', sourceSize: { width: 1920, height: 1080 } });
    assert.deepEqual([native.width, native.height, preparer.preparedHere], [1920, 1080, 1], 'a role without a box gets the original as it is');
  });
});
