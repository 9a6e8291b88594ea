import { z } from 'zod';
import { judgeVoteSchema, type JudgeResolution } from './verdict';
import { judgePlanSchema } from './plan';

/**
 * What judging one trajectory leaves in S3 beside its manifest (core/keys.ts verdictKey): the plan
 * that was followed, every vote with what it cost, the verdict, why voting stopped, the positive
 * steps, and the totals. The raw reply of each vote is kept under its own key (judgeVoteKey).
 */

const count = z.number().int().min(0);
const box = z.strictObject({ width: z.number().int().positive(), height: z.number().int().positive() });

/** What one vote cost: one call with `images` images of `pixels` pixels in all. */
export const voteCostSchema = z.strictObject({
  images: count,
  pixels: count,
  promptTokens: count,
  completionTokens: count,
  latencyMs: z.number().min(0),
});

export const recordedVoteSchema = judgeVoteSchema.extend({
  /** 0-based position in the plan. */
  index: count,
  topP: z.number().gt(0).max(1),
  /** Sampling seed sent with the call, so a vote can be reproduced. */
  seed: count,
  /** How many of the trajectory's screens this vote saw (fewer than `of` when subsampled). */
  screens: z.strictObject({ shown: count, of: count }),
  cost: voteCostSchema,
  /** S3 key of the raw reply. */
  replyKey: z.string().min(1),
});

export const judgeCostSchema = z.strictObject({
  calls: count,
  images: count,
  pixels: count,
  lowResolutionPixels: count,
  highResolutionPixels: count,
  promptTokens: count,
  completionTokens: count,
  latencyMs: z.number().min(0),
});

export const VERDICT_SCHEMA = 'coda.verdict/v1';

export const verdictFileSchema = z.strictObject({
  schema: z.literal(VERDICT_SCHEMA),
  manifestKey: z.string().min(1),
  /** `default` for verdict.json, else the label of verdicts/{label}.json. */
  label: z.string().min(1),
  plan: judgePlanSchema,
  /** The boxes screenshots were fitted into at each resolution. */
  images: z.strictObject({ low: box, high: box }),
  success: z.boolean(),
  stoppedBecause: z.string().min(1),
  /** Steps (1-based) labelled as positive examples for training. */
  positiveSteps: z.array(z.number().int().min(1)),
  stepCount: count,
  votes: z.array(recordedVoteSchema),
  /** Set when some vote saw a subsample of the screens (a judge's image limit). */
  subsampled: z.string().optional(),
  cost: judgeCostSchema,
  judgedAt: z.iso.datetime({ offset: true }),
});

export type VoteCost = z.output<typeof voteCostSchema>;
export type RecordedVote = z.output<typeof recordedVoteSchema>;
export type JudgeCost = z.output<typeof judgeCostSchema>;
export type VerdictFile = z.output<typeof verdictFileSchema>;

/** The totals of a list of votes' costs, pixels split by resolution. */
export function totalCost(votes: ReadonlyArray<{ readonly resolution: JudgeResolution; readonly cost: VoteCost }>): JudgeCost {
  const sum = (pick: (vote: (typeof votes)[number]) => number): number => votes.reduce((total, vote) => total + pick(vote), 0);
  return {
    calls: votes.length,
    images: sum((v) => v.cost.images),
    pixels: sum((v) => v.cost.pixels),
    lowResolutionPixels: sum((v) => (v.resolution === 'low' ? v.cost.pixels : 0)),
    highResolutionPixels: sum((v) => (v.resolution === 'high' ? v.cost.pixels : 0)),
    promptTokens: sum((v) => v.cost.promptTokens),
    completionTokens: sum((v) => v.cost.completionTokens),
    latencyMs: sum((v) => v.cost.latencyMs),
  };
}
