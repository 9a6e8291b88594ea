import assert from 'node:assert/strict';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createDatasetActivities, type DatasetRequest, type DatasetSummary } from '../../activities/datasets/activities';
import { totalCost, VERDICT_SCHEMA, type VerdictFile } from '../../core/judge/verdict-file';
import { variantKey } from '../../core/images';
import { attemptPrefix, datasetManifestKey, manifestKey, verdictKey, type AttemptRef } from '../../core/keys';
import { datasetManifestSchema, grpoLabelSchema, SFT_IMAGE_TOKEN, type GrpoRow, type SftRow } from '../../core/training';
import { TRAJECTORY_SCHEMA, type TrajectoryManifest } from '../../core/trajectory';
import { testStack, type TestStack } from '../stack';

const PREFIX = 'coda';

/** A judged trajectory of `steps` click steps and a DONE, stored with its screenshots and verdict. */
async function storeJudged(stack: TestStack, ref: AttemptRef, steps: number, verdict: { success: boolean; positiveSteps: number[] }): Promise<void> {
  const shot = (i: number) => `${attemptPrefix(PREFIX, ref)}/steps/${String(i).padStart(4, '0')}/screenshot.png`;
  for (let i = 0; i <= steps; i++) await stack.store.put(shot(i), Buffer.alloc(100 + i, 1), 'image/png');
  const step = (index: number, last: boolean) => ({
    index,
    screenshotKey: shot(index - 1),
    planner: { thought: `thought ${index}`, actionText: last ? 'DONE' : `click ${index}`, raw: `Thought: thought ${index}\nAction: ${last ? 'DONE' : `click ${index}`}`, model: 'coda-planner', latencyMs: 5 },
    action: last ? { type: 'done' as const } : { type: 'click' as const, x: 10 * index, y: 20 },
    timings: { plannerMs: 5 },
    startedAt: '2026-11-23T10:00:00.000Z',
  });
  const manifest: TrajectoryManifest = {
    schema: TRAJECTORY_SCHEMA,
    run: ref.run,
    software: ref.software,
    taskId: ref.task,
    attempt: ref.attempt,
    stage: 'specialization',
    task: { instruction: `Do ${ref.task}.`, maxSteps: 10, evaluated: false },
    models: { planner: { model: 'coda-planner', baseUrl: 'x' }, executor: { model: 'ui-tars', baseUrl: 'x' } },
    desktop: { host: 'h', id: 'h/0', screen: { width: 1280, height: 800 } },
    steps: Array.from({ length: steps + 1 }, (_, i) => step(i + 1, i === steps)),
    initialScreenshotKey: shot(0),
    finalScreenshotKey: shot(steps),
    stop: { reason: 'DONE' },
    resumes: 0,
    startedAt: '2026-11-23T10:00:00.000Z',
    endedAt: '2026-11-23T10:00:09.000Z',
  };
  await stack.store.putJson(manifestKey(PREFIX, ref), manifest);
  const file: VerdictFile = {
    schema: VERDICT_SCHEMA,
    manifestKey: manifestKey(PREFIX, ref),
    label: 'default',
    plan: { lowResolutionVotes: 1, highResolutionVotes: 0, judges: [{ name: 'j', model: 'j' }], temperatures: { first: 0, repeat: 1, repeatTopP: 0.6 } },
    images: { low: { width: 640, height: 360 }, high: { width: 1280, height: 720 } },
    success: verdict.success,
    stoppedBecause: 'test',
    positiveSteps: verdict.positiveSteps,
    stepCount: steps + 1,
    votes: [],
    cost: totalCost([]),
    judgedAt: '2026-11-23T10:00:10.000Z',
  };
  await stack.store.putJson(verdictKey(PREFIX, ref), file);
}

describe('training datasets from judged trajectories (real MinIO)', function () {
  this.timeout(60_000);
  let stack: TestStack;
  const run = `ds${Date.now()}`;
  const activities = () => createDatasetActivities({ store: stack.store, prefix: PREFIX, defaultScreen: { width: 1920, height: 1080 } });
  const env = new MockActivityEnvironment();
  const build = (request: DatasetRequest): Promise<DatasetSummary> => env.run(activities().buildDataset, request) as Promise<DatasetSummary>;

  before(async () => {
    stack = await testStack();
    await storeJudged(stack, { run, software: 'KAlgebra', task: 'G-001', attempt: 0 }, 2, { success: true, positiveSteps: [1, 2, 3] });
    await storeJudged(stack, { run, software: 'KAlgebra', task: 'G-002', attempt: 0 }, 3, { success: false, positiveSteps: [1, 2] });
    await storeJudged(stack, { run, software: 'KAlgebra', task: 'G-003', attempt: 0 }, 1, { success: false, positiveSteps: [] });
    await storeJudged(stack, { run, software: 'KAlgebra', task: 'G-001', attempt: 1 }, 2, { success: true, positiveSteps: [1, 2, 3] });
    await storeJudged(stack, { run, software: 'TeXstudio', task: 'G-001', attempt: 0 }, 1, { success: true, positiveSteps: [1, 2] });
    // Rolled out but never judged: left out.
    await stack.store.putJson(manifestKey(PREFIX, { run, software: 'KAlgebra', task: 'G-009', attempt: 0 }), await stack.store.getJson(manifestKey(PREFIX, { run, software: 'KAlgebra', task: 'G-001', attempt: 0 })));
  });

  it('GRPO: one row per positive step, the planner prompt as it was, the label carrying what the reward needs', async () => {
    const id = `${run}-grpo`;
    const request: DatasetRequest = { id, kind: 'grpo', sources: [{ run, software: 'KAlgebra' }] };
    const summary = await build(request);
    assert.equal(summary.existed, false);
    assert.equal(summary.rows, 3 + 2 + 3, 'every positive step of every judged trajectory, failed ones included');
    assert.deepEqual(summary.bySoftware, { KAlgebra: { trajectories: 3, rows: 8 } });
    const manifest = datasetManifestSchema.parse(await stack.store.getJson(datasetManifestKey(PREFIX, id)));
    assert.equal(manifest.kind, 'grpo');
    assert.deepEqual(manifest.sources.map((s) => [s.manifestKey.split('/').slice(-3).join('/'), s.steps]), [
      ['G-001/0/manifest.json', [1, 2, 3]],
      ['G-001/1/manifest.json', [1, 2, 3]],
      ['G-002/0/manifest.json', [1, 2]],
    ]);
    const rows = (await stack.store.get(manifest.dataKey)).toString('utf8').trim().split('\n').map((l) => JSON.parse(l) as GrpoRow);
    assert.equal(rows.length, 8);
    const third = rows[2]!;
    // The planner saw: the system prompt, the task with the earlier steps and the previous screen, its turn, the screen now.
    assert.deepEqual(third.prompt.map((m) => m.role), ['system', 'user', 'assistant', 'user']);
    assert.equal(third.prompt.flatMap((m) => (typeof m.content === 'string' ? [] : m.content.filter((p) => p.type === 'image'))).length, third.images.length);
    assert.equal(third.images.length, 2);
    assert.ok(third.images.every((p) => p.startsWith(`images/${run}/KAlgebra/G-001/0/steps/`)));
    const label = grpoLabelSchema.parse(JSON.parse(third.label));
    assert.equal(label.step, 3);
    assert.deepEqual(label.action, { type: 'done' });
    assert.deepEqual(label.screen, { width: 1280, height: 800 });
    assert.equal(label.screenshotKey, `${PREFIX}/runs/${run}/KAlgebra/G-001/0/steps/0002/screenshot.png`);
    assert.equal(new Set(manifest.images.map((i) => i.key)).size, manifest.images.length, 'each image listed once');
    assert.ok(manifest.images.every((i) => rows.some((r) => r.images.includes(i.path))));
    assert.equal(manifest.bytes.data, (await stack.store.get(manifest.dataKey)).length);
    assert.equal(manifest.bytes.images, manifest.images.reduce((sum, i) => sum + 100 + Number(i.key.slice(-19, -15)), 0));

    const again = await build(request);
    assert.equal(again.existed, true);
    assert.equal(again.rows, 8);

    // The same id asked of another software's run (a second specialization under the same run name) or as SFT is refused.
    await assert.rejects(build({ id, kind: 'grpo', sources: [{ run, software: 'TeXstudio' }] }), (err: Error) => {
      assert.match(err.message, new RegExp(`id: dataset "${id}" exists \\(.*\\) with trajectories of ${run}/KAlgebra, which this request \\(${run}/TeXstudio\\) does not name`));
      return true;
    });
    await assert.rejects(build({ ...request, kind: 'sft' }), /kind: dataset ".*" exists as grpo .*, not sft/);
  });

  it('SFT: the successful trajectories, pooled across software with a per-software cap, in ShareGPT rows', async () => {
    const id = `${run}-sft`;
    const request: DatasetRequest = { id, kind: 'sft', sources: [{ run, software: 'KAlgebra' }, { run, software: 'TeXstudio' }], perSoftwareCap: 1 };
    const summary = await build(request);
    assert.deepEqual(summary.bySoftware, { KAlgebra: { trajectories: 1, rows: 3 }, TeXstudio: { trajectories: 1, rows: 2 } });
    const manifest = datasetManifestSchema.parse(await stack.store.getJson(datasetManifestKey(PREFIX, id)));
    assert.deepEqual(manifest.software, ['KAlgebra', 'TeXstudio']);
    assert.ok(manifest.sources[0]!.manifestKey.endsWith('/G-001/0/manifest.json'), 'first attempts first');
    const rows = JSON.parse((await stack.store.get(manifest.dataKey)).toString('utf8')) as SftRow[];
    assert.equal(rows.length, 5);
    for (const row of rows) {
      const roles = row.messages.map((m) => m.role);
      assert.equal(roles.at(-1), 'assistant');
      for (let i = 1; i < roles.length; i++) assert.notEqual(roles[i], roles[i - 1], 'turns alternate');
      const tokens = row.messages.reduce((n, m) => n + m.content.split(SFT_IMAGE_TOKEN).length - 1, 0);
      assert.equal(tokens, row.images.length, 'one <image> per image');
    }
    assert.match(rows[0]!.messages.at(-1)!.content, /^Thought: thought 1\nAction: click 1$/);
  });

  it("rows use the screenshots as the planner is served them: their variant for its box (models.planner.image); a missing variant fails the build", async () => {
    const box = { width: 1280, height: 720 };
    const withBox = createDatasetActivities({ store: stack.store, prefix: PREFIX, defaultScreen: { width: 1920, height: 1080 }, plannerImage: box });
    const request: DatasetRequest = { id: `${run}-sft-variants`, kind: 'sft', sources: [{ run, software: 'TeXstudio' }] };
    await assert.rejects(env.run(withBox.buildDataset, request), /screenshot@1280x720\.png does not exist/);
    const shots = (await stack.store.list(`${PREFIX}/runs/${run}/TeXstudio/`)).filter((k) => k.endsWith('/screenshot.png'));
    for (const key of shots) await stack.store.put(variantKey(key, box), Buffer.alloc(10, 2), 'image/png');
    const summary = (await env.run(withBox.buildDataset, request)) as DatasetSummary;
    const manifest = datasetManifestSchema.parse(await stack.store.getJson(summary.key));
    assert.ok(manifest.images.length > 0 && manifest.images.every((i) => i.key.endsWith('/screenshot@1280x720.png') && i.path.endsWith('/screenshot@1280x720.png')), JSON.stringify(manifest.images));
    assert.equal(manifest.bytes.images, 10 * manifest.images.length);
  });
});
