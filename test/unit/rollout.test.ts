import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { GuiAction } from '../../core/actions';
import { FAILURES } from '../../core/failures';
import type { Decision, RolloutResult } from '../../core/rollout-types';
import type { ResetInput, StepInput, StepOutcome } from '../../activities/desktop/activities';
import type { LeaseRequest } from '../../activities/desktop/pool';
import type { ManifestInput } from '../../activities/storage/trajectory';
import { rolloutSettings } from '../../workflows/rollout/contract';
import { unitConfig, unitWorkerForTests } from './workflow-env';

/**
 * The rollout workflow's own logic on stub activities (the real-desktop runs of the same paths are
 * test/rollouts/faults.test.ts and crash.test.ts): a host lost mid-step and the episode resumed by
 * replay or restarted, malformed model replies, a model that refuses, a desktop lost too often.
 */

const QUEUE = 'unit-rollout';

/** A scripted rollout: what the planner decides at each step, and which steps lose their host the first time. */
interface Scenario {
  readonly decide: (step: number) => GuiAction | null;
  readonly loseHostAt?: readonly number[];
  /** The step whose decision the model refuses (a non-retryable model request error). */
  readonly refuseAt?: number;
  /** Every call, in order, as the stubs saw it. */
  readonly seen: { leases: string[]; resets: ResetInput[]; decided: number[]; performed: number[]; released: string[]; evaluated: number; manifest?: ManifestInput };
}

const scenarios = new Map<string, Scenario>();
const runOf = (id: string): string => id.slice(0, id.indexOf('/'));
const scenarioOf = (run: string): Scenario => {
  const scenario = scenarios.get(run);
  if (scenario === undefined) throw new Error(`no scenario for run ${run}`);
  return scenario;
};

const decision = (step: number, action: GuiAction | null): Decision => ({
  thought: `step ${step}`,
  actionText: action === null ? 'garbled' : action.type,
  action,
  ...(action === null ? { error: 'no action line in the reply' } : {}),
  decisionKey: `decisions/${step}`,
  plannerMs: 1,
});

const stubs = {
  async leaseDesktop(request: LeaseRequest) {
    const run = request.requestId.slice(0, request.requestId.indexOf('#'));
    const seen = scenarioOf(run).seen;
    const leaseId = `${run}/lease-${seen.leases.length + 1}`;
    seen.leases.push(leaseId);
    return { leaseId, hostId: 'host', hostQueue: QUEUE, desktopId: leaseId, screen: { width: 1280, height: 720 }, software: request.software };
  },
  async resetDesktop(input: ResetInput) {
    scenarioOf(runOf(input.leaseId)).seen.resets.push(input);
    return { screenshotKey: `${input.leaseId}/reset`, ms: 1 };
  },
  async performStep(input: StepInput): Promise<StepOutcome> {
    const scenario = scenarioOf(runOf(input.leaseId));
    const lost = scenario.loseHostAt?.includes(input.step) === true && !scenario.seen.performed.includes(input.step);
    scenario.seen.performed.push(input.step);
    if (lost) throw ApplicationFailure.create({ message: `${input.leaseId} is gone`, type: FAILURES.leaseLost, nonRetryable: true });
    return { performed: true, screenshotKey: `${input.leaseId}/after-${input.step}`, actMs: 1, screenshotMs: 1 };
  },
  async evaluateDesktop(input: { leaseId: string }) {
    scenarioOf(runOf(input.leaseId)).seen.evaluated += 1;
    return { passed: true, checks: [] };
  },
  async releaseDesktop(leaseId: string) {
    scenarioOf(runOf(leaseId)).seen.released.push(leaseId);
    return true;
  },
  async decideStep(input: { ref: { run: string }; step: number }): Promise<Decision> {
    const scenario = scenarioOf(input.ref.run);
    scenario.seen.decided.push(input.step);
    if (input.step === scenario.refuseAt) throw ApplicationFailure.create({ message: 'the planner refused: context too long', type: FAILURES.modelRequest, nonRetryable: true });
    return decision(input.step, scenario.decide(input.step));
  },
  async writeManifest(input: ManifestInput) {
    scenarioOf(input.ref.run).seen.manifest = input;
    return `runs/${input.ref.run}/manifest.json`;
  },
};

const click = (x: number): GuiAction => ({ type: 'click', x, y: 10 });
/** Two clicks then DONE. */
const twoClicksThenDone = (step: number): GuiAction => (step <= 2 ? click(step * 10) : { type: 'done' });

let client: () => Client;

async function roll(run: string, scenario: Omit<Scenario, 'seen'>, settings: Record<string, unknown> = {}): Promise<{ result: RolloutResult; seen: Scenario['seen'] }> {
  const seen: Scenario['seen'] = { leases: [], resets: [], decided: [], performed: [], released: [], evaluated: 0 };
  scenarios.set(run, { ...scenario, seen });
  const result = (await client().workflow.execute('rollout', {
    taskQueue: QUEUE,
    workflowId: run,
    args: [
      {
        run,
        stage: 'unit',
        task: { id: 'A-01', software: 'KAlgebra', key: 'tasks/A-01.json', maxSteps: 8, evaluated: true },
        attempt: 0,
        settings: { ...rolloutSettings(unitConfig), leaseQueue: QUEUE, ...settings },
      },
    ],
  })) as RolloutResult;
  return { result, seen };
}

describe('rollout workflow on stub activities', () => {
  client = unitWorkerForTests(QUEUE, stubs);

  it('runs an episode to DONE, evaluates it, and releases the desktop it leased', async () => {
    const { result, seen } = await roll('plain', { decide: twoClicksThenDone });
    assert.deepEqual([result.stop, result.steps, result.resumes, result.passed], [{ reason: 'DONE' }, 3, 0, true]);
    assert.deepEqual([seen.leases, seen.released, seen.decided, seen.performed, seen.evaluated], [['plain/lease-1'], ['plain/lease-1'], [1, 2, 3], [1, 2], 1]);
    assert.deepEqual(seen.manifest?.steps.map((s) => [s.index, s.performed]), [[1, true], [2, true], [3, false]]);
  });

  it('survives a host lost mid-step: a fresh desktop replays the performed steps and the same decision is performed there', async () => {
    const { result, seen } = await roll('replay', { decide: twoClicksThenDone, loseHostAt: [2] }, { resume: 'replay' });
    assert.deepEqual([result.stop, result.steps, result.resumes, result.passed], [{ reason: 'DONE' }, 3, 1, true]);
    assert.deepEqual(seen.leases, ['replay/lease-1', 'replay/lease-2']);
    assert.deepEqual(seen.resets.map((r) => [r.leaseId, r.replay, r.step]), [['replay/lease-1', [], 0], ['replay/lease-2', [click(10)], 1]]);
    // The decision of step 2 was kept across the loss: the planner was not asked again.
    assert.deepEqual([seen.decided, seen.performed], [[1, 2, 3], [1, 2, 2]]);
    // Every step once in the manifest, the one performed on the fresh desktop marked as resumed.
    assert.deepEqual(seen.manifest?.steps.map((s) => [s.index, s.performed, s.resumed ?? false]), [[1, true, false], [2, true, true], [3, false, false]]);
    assert.deepEqual([seen.manifest?.resumes, seen.manifest?.desktop.id, seen.manifest?.initialScreenshotKey], [1, 'replay/lease-2', 'replay/lease-1/reset']);
    // The lost desktop is not released (its host is gone); the one held at the end is.
    assert.deepEqual(seen.released, ['replay/lease-2']);
  });

  it('with resume: restart, starts the task over on the fresh desktop and forgets the abandoned steps', async () => {
    const { result, seen } = await roll('restart', { decide: twoClicksThenDone, loseHostAt: [2] }, { resume: 'restart' });
    assert.deepEqual([result.stop, result.steps, result.resumes, result.passed], [{ reason: 'DONE' }, 3, 1, true]);
    assert.deepEqual(seen.resets.map((r) => [r.leaseId, r.replay, r.step]), [['restart/lease-1', [], 0], ['restart/lease-2', [], 0]]);
    // Steps 1 and 2 were decided and performed again from the start.
    assert.deepEqual([seen.decided, seen.performed], [[1, 2, 1, 2, 3], [1, 2, 1, 2]]);
    assert.deepEqual(seen.manifest?.steps.map((s) => [s.index, s.performed, s.resumed ?? false]), [[1, true, false], [2, true, false], [3, false, false]]);
    assert.equal(seen.manifest?.initialScreenshotKey, 'restart/lease-2/reset');
  });

  it('ends with ERROR after more malformed replies in a row than maxMalformedReplies, and a good reply resets the count', async () => {
    const limit = unitConfig.rollouts.maxMalformedReplies;
    // `limit` malformed, one click, `limit` malformed again, DONE: never over the limit in a row.
    const within = (step: number): GuiAction | null => (step === limit + 1 ? click(5) : step === 2 * limit + 2 ? { type: 'done' } : null);
    const ok = await roll('malformed-within', { decide: within });
    assert.deepEqual([ok.result.stop, ok.result.steps], [{ reason: 'DONE' }, 2 * limit + 2]);
    assert.deepEqual(ok.seen.manifest?.steps.map((s) => s.performed), [...Array(limit).fill(false), true, ...Array(limit).fill(false), false]);

    const over = await roll('malformed-over', { decide: () => null });
    assert.equal(over.result.stop.reason, 'ERROR');
    assert.match(over.result.stop.detail ?? '', new RegExp(`^model output malformed ${limit + 1} times in a row; last: no action line in the reply$`));
    assert.deepEqual([over.result.steps, over.seen.performed, over.seen.evaluated, over.result.passed], [limit + 1, [], 0, undefined]);
    assert.equal(over.seen.manifest?.stop.reason, 'ERROR');
  });

  it('ends with ERROR, saying why, when the model refuses the request (no retry of a refused request)', async () => {
    const { result, seen } = await roll('refused', { decide: twoClicksThenDone, refuseAt: 2 });
    assert.deepEqual(result.stop, { reason: 'ERROR', detail: 'the planner refused: context too long' });
    // Asked once for step 2: a refused request is not retried, and nothing is evaluated.
    assert.deepEqual([seen.decided, seen.performed, seen.evaluated, result.steps], [[1, 2], [1], 0, 1]);
    assert.deepEqual(seen.released, ['refused/lease-1']);
  });

  it('gives up with ERROR when the desktop is lost more than maxResumes times, and writes what it has', async () => {
    const { result, seen } = await roll('lost', { decide: twoClicksThenDone, loseHostAt: [1] }, { maxResumes: 0 });
    assert.equal(result.stop.reason, 'ERROR');
    assert.match(result.stop.detail ?? '', /^lost the desktop 1 times; last: .*lost\/lease-1 is gone/);
    assert.deepEqual([seen.leases, seen.released, seen.evaluated, result.passed], [['lost/lease-1'], [], 0, undefined]);
    assert.deepEqual(seen.manifest?.steps, []);
  });
});
