import assert from 'node:assert/strict';
import { stepRecordSchema, TRAJECTORY_SCHEMA, type StepRecord, type TrajectoryManifest } from '../../core/trajectory';
import { ValidationError } from '../../core/validation';
import { parseTrajectoryManifest } from '../../apps/manifests';

const step = (index: number, overrides: Partial<StepRecord> = {}): StepRecord => ({
  index,
  screenshotKey: `coda/runs/r1/KAlgebra/A-01/0/steps/${String(index - 1).padStart(4, '0')}/screenshot.png`,
  planner: {
    thought: 'Click the input field.',
    actionText: 'click the input field',
    raw: 'Thought: Click the input field.\nAction: click the input field',
    model: 'coda-planner',
    latencyMs: 812,
    usage: { promptTokens: 2048, completionTokens: 40 },
  },
  executor: { raw: "Thought: ok\nAction: click(start_box='(644,790)')", model: 'ui-tars-1.5-7b', latencyMs: 450 },
  action: { type: 'click', x: 640, y: 778 },
  timings: { screenshotMs: 150, plannerMs: 812, executorMs: 450, actMs: 170 },
  startedAt: '2025-09-01T10:00:00.000Z',
  ...overrides,
});

const manifest = (): TrajectoryManifest => ({
  schema: TRAJECTORY_SCHEMA,
  run: 'r1',
  software: 'KAlgebra',
  taskId: 'A-01',
  attempt: 0,
  stage: 'evaluation',
  task: { instruction: 'Calculate the conjugate of (1 + i) and store it in p.', maxSteps: 5, source: 'scienceboard/KAlgebra/A-01.json' },
  models: {
    planner: { model: 'coda-planner', baseUrl: 'http://gpu:8000/v1' },
    executor: { model: 'ui-tars-1.5-7b', baseUrl: 'http://gpu:8001/v1' },
  },
  desktop: { host: 'local-1', id: 'local-1/0' },
  steps: [
    step(1),
    step(2, { action: null, executor: undefined, error: 'no "Action:" line in the planner output', timings: { plannerMs: 700 } }),
    step(3, { action: { type: 'answer', text: '1+-i' }, executor: undefined, resumed: true }),
  ],
  initialScreenshotKey: 'coda/runs/r1/KAlgebra/A-01/0/steps/0000/screenshot.png',
  finalScreenshotKey: 'coda/runs/r1/KAlgebra/A-01/0/steps/0003/screenshot.png',
  stop: { reason: 'ANS', answer: '1+-i' },
  evaluation: { passed: true, checks: [{ index: 0, type: 'var', passed: true, detail: 'expected 1+-i, found 1+-i' }] },
  resumes: 1,
  startedAt: '2025-09-01T10:00:00.000Z',
  endedAt: '2025-09-01T10:00:09.500+02:00',
});

describe('trajectory records', () => {
  it('reads back a manifest written as JSON', () => {
    const original = manifest();
    const stored = JSON.parse(JSON.stringify(original)) as unknown;
    assert.deepEqual(parseTrajectoryManifest(stored, 'manifest.json'), JSON.parse(JSON.stringify(original)));
  });

  it('accepts a minimal manifest: no steps, no evaluation', () => {
    const minimal = { ...manifest(), steps: [], finalScreenshotKey: undefined, evaluation: undefined, stop: { reason: 'ERROR', detail: 'desktop died' } };
    const parsed = parseTrajectoryManifest(JSON.parse(JSON.stringify(minimal)), 'm');
    assert.deepEqual(parsed.steps, []);
    assert.equal(parsed.stop.reason, 'ERROR');
  });

  it('names every bad field', () => {
    const bad = { ...manifest(), schema: 'coda.trajectory/v0', attempt: -1, stop: { reason: 'BORED' } };
    assert.throws(() => parseTrajectoryManifest(bad, 'runs/r1/manifest.json'), (error: unknown) => {
      assert.ok(error instanceof ValidationError);
      assert.equal(error.source, 'runs/r1/manifest.json');
      assert.deepEqual(error.problems.map((p) => p.split(':')[0]), ['schema', 'attempt', 'stop.reason']);
      return true;
    });
  });

  it('requires steps numbered 1..n and no more than maxSteps', () => {
    const gap = { ...manifest(), steps: [step(1), step(3)] };
    assert.throws(() => parseTrajectoryManifest(gap, 'm'), /steps\[1\]\.index: expected step 2, found 3/);
    const long = { ...manifest(), task: { instruction: 'x', maxSteps: 2 } };
    assert.throws(() => parseTrajectoryManifest(long, 'm'), /3 steps exceed maxSteps 2/);
  });

  it('validates a step on its own, with its action', () => {
    assert.equal(stepRecordSchema.safeParse(step(1)).success, true);
    assert.equal(stepRecordSchema.safeParse(step(0)).success, false);
    assert.equal(stepRecordSchema.safeParse(step(1, { action: { type: 'click', x: -1, y: 0 } })).success, false);
    assert.equal(stepRecordSchema.safeParse(step(1, { startedAt: 'yesterday' })).success, false);
  });
});
