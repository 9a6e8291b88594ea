import assert from 'node:assert/strict';
import { parseJudgeReply } from '../../../core/judge/reply';
import { judgeVerdictSchema, type JudgeVote } from '../../../core/judge/verdict';
import { nextJudgeRequest, SEAGENT_TEMPERATURES, voteOf, type JudgePlan, type JudgeRequest } from '../../../core/judge/voting';
import { judgePlanSchema } from '../../../core/judge/plan';

const QWEN = { name: 'qwen', model: 'Qwen2.5-VL-72B' };
const GLM = { name: 'glm', model: 'GLM-4.5V' };
const plan: JudgePlan = { lowResolutionVotes: 2, highResolutionVotes: 2, judges: [QWEN, GLM], temperatures: SEAGENT_TEMPERATURES };

const SUCCESS = '{"Correctness": true, "Redundant": [], "First_Error_Step": null}';
const FAILURE = '{"Correctness": false, "Redundant": [], "First_Error_Step": 3}';

/** Drives voting like a workflow would, answering each request with the scripted reply texts. */
function drive(p: JudgePlan, replies: string[], stepCount = 4) {
  const votes: JudgeVote[] = [];
  const requests: JudgeRequest[] = [];
  for (;;) {
    const step = nextJudgeRequest(p, votes, stepCount);
    if (step.done) return { verdict: step.verdict, requests };
    requests.push(step.request);
    const text = replies[votes.length];
    assert.ok(text !== undefined, `no scripted reply for vote ${votes.length + 1}`);
    votes.push(voteOf(step.request, parseJudgeReply(text)));
  }
}

describe('judge voting', () => {
  it('asks low resolution first, rotates the ensemble, greedy once per judge and resolution', () => {
    const { verdict, requests } = drive(plan, [SUCCESS, SUCCESS, SUCCESS, SUCCESS]);
    assert.deepEqual(
      requests.map((r) => [r.index, r.judge, r.model, r.resolution, r.temperature, r.topP]),
      [
        [0, 'qwen', 'Qwen2.5-VL-72B', 'low', 0, 1],
        [1, 'glm', 'GLM-4.5V', 'low', 0, 1],
        [2, 'qwen', 'Qwen2.5-VL-72B', 'high', 0, 1],
        [3, 'glm', 'GLM-4.5V', 'high', 0, 1],
      ],
    );
    assert.equal(verdict.success, true);
    assert.equal(verdict.stoppedBecause, 'all 4 votes said success (2 low resolution, 2 high resolution)');
    assert.deepEqual(verdict.positiveSteps, [1, 2, 3, 4]);
    assert.equal(verdict.votes.length, 4);
    assert.deepEqual(judgeVerdictSchema.parse(JSON.parse(JSON.stringify(verdict))), verdict);
  });

  it('samples repeats hot, as SEAgent votes (1 greedy, 3 at T=1.0, top_p 0.6)', () => {
    const seagent: JudgePlan = { lowResolutionVotes: 0, highResolutionVotes: 4, judges: [QWEN], temperatures: SEAGENT_TEMPERATURES };
    const { requests, verdict } = drive(seagent, [SUCCESS, SUCCESS, SUCCESS, SUCCESS]);
    assert.deepEqual(requests.map((r) => [r.resolution, r.temperature, r.topP]), [
      ['high', 0, 1],
      ['high', 1, 0.6],
      ['high', 1, 0.6],
      ['high', 1, 0.6],
    ]);
    assert.equal(verdict.success, true);
  });

  it('stops at the first low-resolution failure: no high-resolution vote is spent', () => {
    const { verdict, requests } = drive(plan, [SUCCESS, FAILURE]);
    assert.equal(requests.length, 2);
    assert.equal(verdict.success, false);
    assert.equal(verdict.stoppedBecause, 'vote 2 of 4 (low resolution, judge glm) said failure');
    assert.deepEqual(verdict.votes.map((v) => [v.judge, v.resolution, v.reply?.correctness]), [
      ['qwen', 'low', true],
      ['glm', 'low', false],
    ]);
    assert.deepEqual(verdict.positiveSteps, [1, 2], 'the steps before the failing vote\'s first error');
  });

  it('stops at a high-resolution failure of a low-resolution survivor', () => {
    const { verdict } = drive(plan, [SUCCESS, SUCCESS, SUCCESS, FAILURE]);
    assert.equal(verdict.success, false);
    assert.equal(verdict.stoppedBecause, 'vote 4 of 4 (high resolution, judge glm) said failure');
  });

  it('counts an unreadable vote as failure and says why', () => {
    const { verdict } = drive(plan, ['The trajectory looks fine to me.']);
    assert.equal(verdict.success, false);
    assert.equal(verdict.stoppedBecause, 'vote 1 of 4 (low resolution, judge qwen) was unreadable, counted as failure: no Correctness, Redundant or First_Error_Step in the judge reply');
    assert.deepEqual(verdict.votes[0], {
      judge: 'qwen',
      model: 'Qwen2.5-VL-72B',
      resolution: 'low',
      temperature: 0,
      reply: null,
      error: 'no Correctness, Redundant or First_Error_Step in the judge reply',
    });
    assert.deepEqual(verdict.positiveSteps, []);
    const failedCall = nextJudgeRequest(plan, [{ judge: 'qwen', model: 'm', resolution: 'low', temperature: 0, reply: null }], 3);
    assert.ok(failedCall.done);
    assert.match(failedCall.verdict.stoppedBecause, /unreadable, counted as failure: no reply$/);
  });

  it('keeps only the positive steps every vote agrees on', () => {
    const redundant = '{"Correctness": true, "Redundant": [2], "First_Error_Step": null}';
    const { verdict } = drive(plan, [SUCCESS, redundant, SUCCESS, SUCCESS], 3);
    assert.equal(verdict.success, true);
    assert.deepEqual(verdict.positiveSteps, [1, 3]);
  });

  it('refuses a plan without votes or judges, and votes that do not follow the plan', () => {
    assert.throws(() => nextJudgeRequest({ ...plan, lowResolutionVotes: 0, highResolutionVotes: 0 }, [], 3), /at least one vote/);
    assert.equal(judgePlanSchema.safeParse({ ...plan, lowResolutionVotes: 0, highResolutionVotes: 0 }).success, false);
    assert.equal(judgePlanSchema.safeParse(plan).success, true);
    assert.throws(() => nextJudgeRequest({ ...plan, judges: [] }, [], 3), /judges/);
    const vote = (judge: string, resolution: 'low' | 'high', correctness: boolean): JudgeVote => ({
      judge,
      model: 'm',
      resolution,
      temperature: 0,
      reply: { correctness, redundant: [], firstErrorStep: null },
    });
    assert.throws(() => nextJudgeRequest(plan, [vote('glm', 'low', true)], 3), /the plan asked qwen at low/);
    assert.throws(() => nextJudgeRequest(plan, [vote('qwen', 'low', false), vote('glm', 'low', true)], 3), /cast after vote 1/);
    const five = [vote('qwen', 'low', true), vote('glm', 'low', true), vote('qwen', 'high', true), vote('glm', 'high', true), vote('qwen', 'high', true)];
    assert.throws(() => nextJudgeRequest(plan, five, 3), /5 votes for a plan of 4/);
  });
});
