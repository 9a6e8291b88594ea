import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/activity';
import { WorkflowFailedError, type Client } from '@temporalio/client';
import { FAILURES } from '../../core/failures';
import type { JudgeReply } from '../../core/judge/verdict';
import type { JudgeRequest } from '../../core/judge/voting';
import type { CastVote, JudgeOutcome, VerdictInput, VoteInput } from '../../activities/judge/activities';
import { unitConfig, unitWorkerForTests } from './workflow-env';

/**
 * The judge workflow's voting paths on stub judges (the real-stack run, judges through the model
 * gateway and verdicts in MinIO, is test/judging/judging.test.ts): unanimity over low then high
 * resolution, the early exit at the first failure, an unreadable vote counted as failure, an
 * existing verdict reused, a judge that stays down, and a plan given in the input.
 */

const QUEUE = 'unit-judge';

/** What each judge replies, by vote index; `null` is a reply that could not be read, 'down' a judge that cannot be reached. */
type Reply = Omit<JudgeReply, 'reasoning'> | null | 'down';

interface Scenario {
  readonly replies: readonly Reply[];
  readonly stepCount: number;
  readonly existing?: JudgeOutcome;
  readonly seen: { requests: JudgeRequest[]; verdicts: VerdictInput[] };
}

const scenarios = new Map<string, Scenario>();
const scenarioOf = (run: string): Scenario => {
  const scenario = scenarios.get(run);
  if (scenario === undefined) throw new Error(`no scenario for run ${run}`);
  return scenario;
};

const outcome = (input: VerdictInput): JudgeOutcome => ({
  manifestKey: input.manifestKey,
  verdictKey: `${input.manifestKey}.verdict`,
  label: input.label,
  success: input.verdict.success,
  positiveSteps: input.verdict.positiveSteps,
  stoppedBecause: input.verdict.stoppedBecause,
  cost: { calls: input.votes.length, images: 0, pixels: 0, lowResolutionPixels: 0, highResolutionPixels: 0, promptTokens: 0, completionTokens: 0, latencyMs: 0 },
  reused: false,
});

const stubs = {
  async prepareJudging(input: { ref: { run: string } }) {
    const scenario = scenarioOf(input.ref.run);
    return { stepCount: scenario.stepCount, ...(scenario.existing === undefined ? {} : { existing: scenario.existing }) };
  },
  async castVote(input: VoteInput): Promise<CastVote> {
    const scenario = scenarioOf(input.ref.run);
    const { request } = input;
    scenario.seen.requests.push(request);
    const reply = scenario.replies[request.index];
    if (reply === undefined) throw new Error(`vote ${request.index} was not scripted`);
    if (reply === 'down') throw ApplicationFailure.create({ message: `${request.model}: 401 invalid key`, type: FAILURES.modelRequest, nonRetryable: true });
    return {
      judge: request.judge,
      model: request.model,
      resolution: request.resolution,
      temperature: request.temperature,
      reply,
      ...(reply === null ? { error: 'no JSON object in the reply' } : {}),
      index: request.index,
      topP: request.topP,
      seed: 1,
      screens: { shown: scenario.stepCount + 1, of: scenario.stepCount + 1 },
      cost: { images: 1, pixels: 1, promptTokens: 1, completionTokens: 1, latencyMs: 1 },
      replyKey: `votes/${request.index}`,
    };
  },
  async writeVerdict(input: VerdictInput): Promise<JudgeOutcome> {
    scenarioOf(input.ref.run).seen.verdicts.push(input);
    return outcome(input);
  },
};

const yes = (redundant: number[] = []): Reply => ({ correctness: true, redundant, firstErrorStep: null });
const no: Reply = { correctness: false, redundant: [], firstErrorStep: 2 };

let client: () => Client;

const manifestKey = (run: string): string => `${unitConfig.storage.prefix}/runs/${run}/KAlgebra/A-01/0/manifest.json`;

async function judge(run: string, scenario: Omit<Scenario, 'seen'>, request: Record<string, unknown> = {}): Promise<{ result: JudgeOutcome; seen: Scenario['seen'] }> {
  const seen: Scenario['seen'] = { requests: [], verdicts: [] };
  scenarios.set(run, { ...scenario, seen });
  const result = (await client().workflow.execute('judgeTrajectory', { taskQueue: QUEUE, workflowId: `judge-${run}`, args: [{ manifestKey: manifestKey(run), ...request }] })) as JudgeOutcome;
  return { result, seen };
}

const asked = (requests: readonly JudgeRequest[]) => requests.map((r) => `${r.resolution} ${r.judge} t=${r.temperature} p=${r.topP}`);

describe('judgeTrajectory workflow on stub judges', () => {
  client = unitWorkerForTests(QUEUE, stubs);

  it("succeeds only when every vote of temporal.yaml's plan says so: low resolution first, rotating through the judges; the positive steps are those all keep", async () => {
    const plan = unitConfig.judging.plan;
    assert.deepEqual([plan.lowResolutionVotes, plan.highResolutionVotes, plan.judges.length], [2, 2, 2], 'this test follows the repository plan');
    const { result, seen } = await judge('unanimous', { stepCount: 4, replies: [yes([2]), yes([3]), yes(), yes()] });
    assert.deepEqual(asked(seen.requests), ['low judge-a t=0 p=1', 'low judge-b t=0 p=1', 'high judge-a t=0 p=1', 'high judge-b t=0 p=1']);
    assert.deepEqual([result.success, result.positiveSteps, result.stoppedBecause], [true, [1, 4], 'all 4 votes said success (2 low resolution, 2 high resolution)']);
    assert.equal(seen.verdicts.length, 1);
    assert.deepEqual(seen.verdicts[0]?.votes.map((v) => v.index), [0, 1, 2, 3]);
  });

  it('stops at the first low-resolution vote that says failure: no high-resolution vote is paid for', async () => {
    const { result, seen } = await judge('early-exit', { stepCount: 3, replies: [yes(), no, yes(), yes()] });
    assert.deepEqual(asked(seen.requests), ['low judge-a t=0 p=1', 'low judge-b t=0 p=1']);
    assert.deepEqual([result.success, result.positiveSteps, result.stoppedBecause], [false, [], 'vote 2 of 4 (low resolution, judge judge-b) said failure']);
  });

  it('counts an unreadable high-resolution vote as failure and says why', async () => {
    const { result, seen } = await judge('unreadable', { stepCount: 3, replies: [yes(), yes(), null, yes()] });
    assert.equal(seen.requests.length, 3);
    assert.deepEqual([result.success, result.stoppedBecause], [false, 'vote 3 of 4 (high resolution, judge judge-a) was unreadable, counted as failure: no JSON object in the reply']);
  });

  it('returns a verdict of the same plan that exists without calling any judge', async () => {
    const existing: JudgeOutcome = {
      manifestKey: manifestKey('existing'),
      verdictKey: 'earlier-verdict',
      label: 'default',
      success: true,
      positiveSteps: [1],
      stoppedBecause: 'judged earlier',
      cost: { calls: 4, images: 8, pixels: 8, lowResolutionPixels: 4, highResolutionPixels: 4, promptTokens: 4, completionTokens: 4, latencyMs: 4 },
      reused: true,
    };
    const { result, seen } = await judge('existing', { stepCount: 3, replies: [], existing });
    assert.deepEqual(result, existing);
    assert.deepEqual([seen.requests, seen.verdicts], [[], []]);
  });

  it('follows a plan given in the input: one judge, greedy first, then sampled at the repeat temperature and top_p', async () => {
    const plan = { lowResolutionVotes: 0, highResolutionVotes: 3, judges: ['judge-a'] };
    const { result, seen } = await judge('voting3', { stepCount: 2, replies: [yes(), yes(), yes()] }, { label: 'voting3', plan });
    const t = unitConfig.judging.plan.temperatures;
    assert.deepEqual(asked(seen.requests), ['high judge-a t=0 p=1', `high judge-a t=${t.repeat} p=${t.repeatTopP}`, `high judge-a t=${t.repeat} p=${t.repeatTopP}`]);
    assert.deepEqual([result.success, result.label, seen.verdicts[0]?.label], [true, 'voting3', 'voting3']);
  });

  it('fails as JudgeUnavailable, naming the judge and the vote, when a judge refuses: no verdict is written', async () => {
    const failure = await judge('down', { stepCount: 3, replies: [yes(), 'down'] }).then(
      () => assert.fail('expected the judge workflow to fail'),
      (err: unknown) => err,
    );
    assert.ok(failure instanceof WorkflowFailedError, String(failure));
    const cause = failure.cause;
    assert.ok(cause instanceof Error && 'type' in cause, String(cause));
    assert.equal(cause.type, 'JudgeUnavailable');
    assert.match(cause.message, /^judge judge-b \(judge-b\) gave no vote 2 \(low resolution\): judge-b: 401 invalid key$/);
    assert.deepEqual(scenarioOf('down').seen.verdicts, []);
  });
});
