import assert from 'node:assert/strict';
import { TRAJECTORY_SCHEMA, type StepRecord, type TrajectoryManifest } from '../../core/trajectory';
import { variantKey } from '../../core/images';
import { datasetImagePath, grpoRows, parseGrpoLabel, plannerMessagesAt, sftRows, SFT_IMAGE_TOKEN } from '../../core/training';
import { applyChatTemplate, renderSharegptRow } from '../../doubles/trainers/qwen2-vl';

const shot = (i: number): string => `coda/runs/r1/KAlgebra/A-01/0/steps/${String(i).padStart(4, '0')}/screenshot.png`;

const step = (index: number, action: StepRecord['action'], thought: string): StepRecord => ({
  index,
  screenshotKey: shot(index - 1),
  planner: { thought, actionText: thought.toLowerCase(), raw: `Thought: ${thought}\nAction: ${thought.toLowerCase()}`, model: 'coda-planner', latencyMs: 5 },
  action,
  timings: { plannerMs: 5 },
  startedAt: '2026-11-01T10:00:00.000Z',
});

/** Three steps: a click, a malformed turn (no action), an answer. */
const manifest: TrajectoryManifest = {
  schema: TRAJECTORY_SCHEMA,
  run: 'r1',
  software: 'KAlgebra',
  taskId: 'A-01',
  attempt: 0,
  stage: 'specialization',
  task: { instruction: 'Store the conjugate of (1 + i) in p.', maxSteps: 5, source: 'coda/tasks/KAlgebra/A-01.json' },
  models: { planner: { model: 'coda-planner', baseUrl: 'http://gpu:8000/v1' }, executor: { model: 'ui-tars-1.5-7b', baseUrl: 'http://gpu:8001/v1' } },
  desktop: { host: 'local-1', id: 'local-1/0' },
  steps: [step(1, { type: 'click', x: 640, y: 778 }, 'Click the input field.'), step(2, null, 'Look around.'), step(3, { type: 'answer', text: '1+-i' }, 'Answer 1+-i.')],
  initialScreenshotKey: shot(0),
  finalScreenshotKey: shot(3),
  stop: { reason: 'ANS', answer: '1+-i' },
  resumes: 0,
  startedAt: '2026-11-01T10:00:00.000Z',
  endedAt: '2026-11-01T10:00:09.000Z',
};
const key = 'coda/runs/r1/KAlgebra/A-01/0/manifest.json';
const screen = { width: 1920, height: 1080 };
/** The planner's box (temporal.yaml models.planner.image). */
const box = { width: 1280, height: 720 };
const view = { screen, box };

describe('training rows from a judged trajectory', () => {
  it('GRPO: one row per positive step with an action, the planner prompt as it was, images in order, a label the reward service can read', () => {
    const rows = grpoRows(manifest, key, [1, 2, 3], view);
    assert.deepEqual(rows.map((r) => r.step), [1, 3], 'the malformed step 2 has no action to reward');
    const third = rows[1]!;
    const messages = plannerMessagesAt(manifest, 3);
    assert.equal(third.row.prompt.length, messages.length);
    const imageItems = third.row.prompt.flatMap((m) => (typeof m.content === 'string' ? [] : m.content.filter((p) => p.type === 'image')));
    assert.equal(imageItems.length, third.images.length);
    assert.deepEqual(third.row.images, third.images.map((i) => i.path));
    assert.deepEqual(third.images.map((i) => i.key), [shot(1), shot(2)].map((k) => variantKey(k, box)), "the screens as the planner is served them: their variant for its box");
    assert.ok(third.row.images.every((p) => p.endsWith('/screenshot@1280x720.png')));
    assert.ok(third.images.every((i) => i.path === datasetImagePath(i.key) && i.path.startsWith('images/r1/KAlgebra/')));
    const label = parseGrpoLabel(third.row.label);
    assert.deepEqual(label, { schema: 'coda.grpo-label/v1', software: 'KAlgebra', manifestKey: key, step: 3, screenshotKey: shot(2), screen, action: { type: 'answer', text: '1+-i' } });
  });

  it('SFT: the same conversation in alternating ShareGPT turns, one <image> per image, the planner reply as the answer', () => {
    const rows = sftRows(manifest, [3], view);
    assert.equal(rows.length, 1);
    const { row, images } = rows[0]!;
    assert.equal(row.messages.at(-1)?.role, 'assistant');
    assert.equal(row.messages.at(-1)?.content, manifest.steps[2]!.planner.raw);
    for (let i = 1; i < row.messages.length; i++) assert.notEqual(row.messages[i]!.role, row.messages[i - 1]!.role, `turn ${i} alternates`);
    const tokens = row.messages.map((m) => m.content.split(SFT_IMAGE_TOKEN).length - 1).reduce((a, b) => a + b, 0);
    assert.equal(tokens, images.length);
    assert.equal(row.images.length, images.length);
    assert.deepEqual(images.map((i) => i.key), [shot(1), shot(2)].map((k) => variantKey(k, box)), 'the screens as the planner is served them');
  });

  it("SFT: a row renders through LLaMA-Factory's qwen2_vl template to the prompt the planner is served and its reply", () => {
    for (const at of [1, 3]) {
      const { row } = sftRows(manifest, [at], view)[0]!;
      // The planner's messages as the gateway sends them: image keys become image_url items.
      const sent = plannerMessagesAt(manifest, at).map((m) => ({ role: m.role, content: typeof m.content === 'string' ? m.content : m.content.map((p) => (p.type === 'text' ? p : { type: 'image_url' })) }));
      const served = applyChatTemplate(sent);
      assert.equal(renderSharegptRow(row.messages), `${served}${manifest.steps[at - 1]!.planner.raw}<|im_end|>\n`, `step ${at}`);
    }
  });

  it('SFT and GRPO without a box (a planner served the original screens): the originals', () => {
    assert.deepEqual(sftRows(manifest, [3], { screen })[0]!.images.map((i) => i.key), [shot(1), shot(2)]);
    assert.deepEqual(grpoRows(manifest, key, [3], { screen: box, box })[0]!.images.map((i) => i.key), [shot(1), shot(2)], 'a screen that fits the box is served as it is');
  });

  it('no rows without positive steps; a step the trajectory does not have is an error', () => {
    assert.deepEqual(grpoRows(manifest, key, [], view), []);
    assert.deepEqual(sftRows(manifest, [2], view), []);
    assert.throws(() => plannerMessagesAt(manifest, 9), /A-01\/0 has no step 9/);
  });
});
