import { agreedPositiveSteps } from './positive-steps';
import type { JudgeReplyParse } from './reply';
import type { JudgeResolution, JudgeVerdict, JudgeVote } from './verdict';

/**
 * Judge voting as a pure planner a workflow drives: ask nextJudgeRequest what to do, run that judge
 * call, record the vote, ask again. Precision comes first (docs/method.md):
 * - unanimity: success only when every planned vote says success; voting stops at the first vote
 *   that says failure or cannot be read (an unreadable vote counts as failure);
 * - multi-resolution: the low-resolution votes come first and are cheap, so most failures are
 *   rejected before any high-resolution vote;
 * - ensemble: within each resolution the votes rotate through the judges;
 * - temperature: each judge's first vote at a resolution is greedy (`first`), later ones sample at
 *   `repeat` with top_p `repeatTopP` (SEAgent: 0, then 1.0 with top_p 0.6); a repeated greedy call
 *   would only say the same thing again.
 */

export interface JudgePlan {
  readonly lowResolutionVotes: number;
  readonly highResolutionVotes: number;
  readonly judges: ReadonlyArray<{ readonly name: string; readonly model: string }>;
  readonly temperatures: { readonly first: number; readonly repeat: number; readonly repeatTopP: number };
}

/** SEAgent's sampling: a greedy first vote, then T=1.0 with top_p 0.6. */
export const SEAGENT_TEMPERATURES: JudgePlan['temperatures'] = { first: 0, repeat: 1, repeatTopP: 0.6 };

export interface JudgeRequest {
  /** 0-based position of this vote in the plan. */
  readonly index: number;
  readonly judge: string;
  readonly model: string;
  readonly resolution: JudgeResolution;
  readonly temperature: number;
  readonly topP: number;
}

export type JudgeProgress = { readonly done: false; readonly request: JudgeRequest } | { readonly done: true; readonly verdict: JudgeVerdict };

function plannedRequest(plan: JudgePlan, index: number): JudgeRequest {
  const low = index < plan.lowResolutionVotes;
  const position = low ? index : index - plan.lowResolutionVotes;
  const judge = plan.judges[position % plan.judges.length] as JudgePlan['judges'][number];
  const first = position < plan.judges.length;
  return {
    index,
    judge: judge.name,
    model: judge.model,
    resolution: low ? 'low' : 'high',
    temperature: first ? plan.temperatures.first : plan.temperatures.repeat,
    topP: first ? 1 : plan.temperatures.repeatTopP,
  };
}

const describe = (vote: JudgeVote, index: number, total: number): string =>
  `vote ${index + 1} of ${total} (${vote.resolution} resolution, judge ${vote.judge})`;

/**
 * The next judge call to make, or the verdict once voting is over. `votes` are the votes cast so
 * far, in the order this function asked for them; `stepCount` sizes the positive-step labels.
 * Throws when the votes do not follow the plan (a bug in the caller, not a judge's fault).
 */
export function nextJudgeRequest(plan: JudgePlan, votes: readonly JudgeVote[], stepCount: number): JudgeProgress {
  // Workflows call this, so it checks by hand (no zod in workflow code); judge-plan.ts has the schema.
  if (plan.lowResolutionVotes + plan.highResolutionVotes <= 0) throw new RangeError('a judge plan needs at least one vote');
  if (plan.judges.length === 0) throw new RangeError('a judge plan needs at least one of its judges');
  const checked = plan;
  const total = checked.lowResolutionVotes + checked.highResolutionVotes;
  if (votes.length > total) throw new Error(`${votes.length} votes for a plan of ${total}`);
  const verdict = (success: boolean, stoppedBecause: string): JudgeProgress => ({
    done: true,
    verdict: { success, votes: [...votes], stoppedBecause, positiveSteps: agreedPositiveSteps(votes.map((vote) => vote.reply), stepCount) },
  });
  for (const [index, vote] of votes.entries()) {
    const planned = plannedRequest(checked, index);
    if (vote.judge !== planned.judge || vote.resolution !== planned.resolution) {
      throw new Error(`vote ${index + 1} came from ${vote.judge} at ${vote.resolution} resolution; the plan asked ${planned.judge} at ${planned.resolution}`);
    }
    const failed = vote.reply === null || !vote.reply.correctness;
    if (failed && index < votes.length - 1) throw new Error(`votes were cast after vote ${index + 1} had stopped the voting`);
    if (vote.reply === null) return verdict(false, `${describe(vote, index, total)} was unreadable, counted as failure: ${vote.error ?? 'no reply'}`);
    if (!vote.reply.correctness) return verdict(false, `${describe(vote, index, total)} said failure`);
  }
  if (votes.length === total) {
    return verdict(true, `all ${total} votes said success (${checked.lowResolutionVotes} low resolution, ${checked.highResolutionVotes} high resolution)`);
  }
  return { done: false, request: plannedRequest(checked, votes.length) };
}

/** The vote a judge call produced, from the request and the parsed reply (or why there is none). */
export function voteOf(request: JudgeRequest, parsed: JudgeReplyParse): JudgeVote {
  const base = { judge: request.judge, model: request.model, resolution: request.resolution, temperature: request.temperature };
  return parsed.ok ? { ...base, reply: parsed.reply } : { ...base, reply: null, error: parsed.reason };
}
