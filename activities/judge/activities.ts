import { ApplicationFailure } from '@temporalio/activity';
import type { JudgeImages } from '../../config/schema';
import { FAILURES } from '../../core/failures';
import { parseJudgeReply } from '../../core/judge/reply';
import { judgeVoteSchema, type JudgeVote } from '../../core/judge/verdict';
import { totalCost, VERDICT_SCHEMA, verdictFileSchema, type JudgeCost, type RecordedVote, type VerdictFile } from '../../core/judge/verdict-file';
import { voteOf, type JudgePlan, type JudgeRequest } from '../../core/judge/voting';
import { attemptOfManifest, judgeVoteKey, runPrefix, verdictKey, type AttemptRef } from '../../core/keys';
import { buildJudgeMessages, judgeInputOf } from '../../core/prompts/judge';
import { truncate } from '../../core/text';
import { type TrajectoryManifest } from '../../core/trajectory';
import { PromiseCache } from '../cache';
import { withHeartbeat } from '../heartbeat';
import { orchestratorMetrics, type OrchestratorMetrics } from '../metrics';
import { ModelRequestError, type ModelGateway } from '../models/gateway';
import type { ObjectStore } from '../storage/object-store';
import { parseTrajectoryManifest } from '../../apps/manifests';

/** One vote as the workflow keeps it: the parsed reply without its free text, what it cost, where the raw reply is. */
export type CastVote = Omit<RecordedVote, 'reply'> & { readonly reply: Omit<NonNullable<JudgeVote['reply']>, 'reasoning'> | null };

export interface VoteInput {
  readonly manifestKey: string;
  readonly ref: AttemptRef;
  readonly label: string;
  readonly request: JudgeRequest;
  readonly images: JudgeImages;
}

/** What judging one trajectory concluded, as workflows and callers keep it (the verdict file has the rest). */
export interface JudgeOutcome {
  readonly manifestKey: string;
  readonly verdictKey: string;
  readonly label: string;
  readonly success: boolean;
  readonly positiveSteps: number[];
  readonly stoppedBecause: string;
  readonly cost: JudgeCost;
  /** True when a verdict of the same plan existed and no judge was called. */
  readonly reused: boolean;
}

export interface VerdictInput {
  readonly manifestKey: string;
  readonly ref: AttemptRef;
  readonly label: string;
  readonly plan: JudgePlan;
  readonly images: JudgeImages;
  readonly stepCount: number;
  readonly verdict: { readonly success: boolean; readonly stoppedBecause: string; readonly positiveSteps: number[] };
  readonly votes: readonly CastVote[];
}

const samePlan = (a: JudgePlan, b: JudgePlan): boolean => JSON.stringify(a) === JSON.stringify(b);

const outcomeOf = (file: VerdictFile, key: string, reused: boolean): JudgeOutcome => ({
  manifestKey: file.manifestKey,
  verdictKey: key,
  label: file.label,
  success: file.success,
  positiveSteps: file.positiveSteps,
  stoppedBecause: file.stoppedBecause,
  cost: file.cost,
  reused,
});

export interface JudgeDeps {
  readonly gateway: ModelGateway;
  readonly store: ObjectStore;
  readonly prefix: string;
  /** Longest judge reply, in tokens (judging.maxTokens). */
  readonly maxTokens: number;
  /** Where votes and their pixels are counted (the orchestrator's metrics endpoint). */
  readonly metrics?: Pick<OrchestratorMetrics, 'judgeCalls' | 'judgePixels'>;
}

/** What the judge activities of one worker share: its dependencies, its metrics, the manifests read so far. */
interface Judging {
  readonly deps: JudgeDeps;
  readonly metrics: Pick<OrchestratorMetrics, 'judgeCalls' | 'judgePixels'>;
  readonly readManifest: (key: string) => Promise<TrajectoryManifest>;
}

async function readVerdict(store: ObjectStore, key: string): Promise<VerdictFile | undefined> {
  const raw = await store.tryGet(key);
  return raw === undefined ? undefined : verdictFileSchema.parse(JSON.parse(raw.toString('utf8')));
}

/** The trajectory's step count, and the outcome of an earlier verdict of the same plan, if any. */
async function prepareJudging(
  { deps, readManifest }: Judging,
  input: { manifestKey: string; ref: AttemptRef; label: string; plan: JudgePlan },
): Promise<{ stepCount: number; existing?: JudgeOutcome }> {
  const manifest = await readManifest(input.manifestKey);
  const key = verdictKey(deps.prefix, input.ref, input.label);
  const earlier = await readVerdict(deps.store, key);
  return earlier !== undefined && samePlan(earlier.plan, input.plan)
    ? { stepCount: manifest.steps.length, existing: outcomeOf(earlier, key, true) }
    : { stepCount: manifest.steps.length };
}

/** One judge's vote: the call at the vote's resolution, its raw reply stored, its cost counted. */
async function vote(judging: Judging, input: VoteInput): Promise<CastVote> {
  const { deps, metrics } = judging;
  const { request } = input;
  const role = `judge:${request.judge}` as const;
  const manifest = await judging.readManifest(input.manifestKey);
  const judged = judgeInputOf(manifest, request.resolution, deps.gateway.endpointOf(role).maxImages);
  const completion = await deps.gateway.complete(role, buildJudgeMessages(judged), {
    temperature: request.temperature,
    topP: request.topP,
    seed: request.index,
    user: input.manifestKey,
    maxTokens: deps.maxTokens,
    lowResolution: input.images.low,
    highResolution: input.images.high,
    ...(manifest.desktop.screen === undefined ? {} : { sourceSize: manifest.desktop.screen }),
  });
  const text = completion.texts[0] ?? '';
  const vote = voteOf(request, parseJudgeReply(text));
  const screens = { shown: judged.steps.filter((s) => s.screenshotKey !== undefined).length + 1, of: manifest.steps.length + 1 };
  const cost = {
    images: completion.images.count,
    pixels: completion.images.pixels,
    promptTokens: completion.usage.promptTokens,
    completionTokens: completion.usage.completionTokens,
    latencyMs: completion.latencyMs,
  };
  const labels = { judge: request.judge, resolution: request.resolution };
  metrics.judgeCalls.inc(labels);
  metrics.judgePixels.inc(labels, completion.images.pixels);
  const replyKey = judgeVoteKey(deps.prefix, input.ref, input.label, request.index);
  const recorded: RecordedVote = { ...vote, index: request.index, topP: request.topP, seed: request.index, screens, cost, replyKey };
  await deps.store.putJson(replyKey, { vote: recorded, model: completion.model, baseUrl: completion.baseUrl, raw: text });
  const { reasoning: _reasoning, ...reply } = vote.reply ?? { reasoning: undefined };
  return { ...recorded, reply: vote.reply === null ? null : (reply as NonNullable<CastVote['reply']>), ...(vote.error === undefined ? {} : { error: truncate(vote.error, 300) }) };
}

/** A vote, heartbeating while the judge thinks; a judge that refuses the request fails it for good. */
async function castVote(judging: Judging, input: VoteInput): Promise<CastVote> {
  try {
    return await withHeartbeat(() => vote(judging, input), () => ({ vote: input.request.index, judge: input.request.judge }));
  } catch (err) {
    if (err instanceof ModelRequestError) throw ApplicationFailure.nonRetryable(err.message, FAILURES.modelRequest);
    throw err;
  }
}

/** Writes the verdict file beside the manifest: every vote in full (read back from its raw reply), the verdict, the totals. */
async function writeVerdict({ deps: { store, prefix } }: Judging, input: VerdictInput): Promise<JudgeOutcome> {
  const votes = await Promise.all(
    input.votes.map(async (vote) => {
      const stored = (await store.getJson<{ vote: RecordedVote }>(vote.replyKey)).vote;
      return { ...stored, reply: stored.reply === null ? null : judgeVoteSchema.shape.reply.parse(stored.reply) };
    }),
  );
  const subsampled = votes.filter((v) => v.screens.shown < v.screens.of);
  const file: VerdictFile = verdictFileSchema.parse({
    schema: VERDICT_SCHEMA,
    manifestKey: input.manifestKey,
    label: input.label,
    plan: input.plan,
    images: input.images,
    success: input.verdict.success,
    stoppedBecause: input.verdict.stoppedBecause,
    positiveSteps: input.verdict.positiveSteps,
    stepCount: input.stepCount,
    votes,
    ...(subsampled.length === 0
      ? {}
      : {
          subsampled: `${subsampled.length} of ${votes.length} votes saw a subsample of the ${subsampled[0]!.screens.of} screens (the judge's image limit): the first, the last and evenly spaced ones between`,
        }),
    cost: totalCost(votes),
    judgedAt: new Date().toISOString(),
  });
  const key = verdictKey(prefix, input.ref, input.label);
  await store.putJson(key, file);
  return outcomeOf(file, key, false);
}

/**
 * Manifest keys of one run and software, in key order, `limit` at a time after `after` (a page
 * keeps workflow payloads small however large the run).
 */
async function listTrajectories(
  { deps: { store, prefix } }: Judging,
  input: { run: string; software: string; after?: string; limit: number },
): Promise<Array<{ manifestKey: string; ref: AttemptRef }>> {
  const keys = (await store.list(`${runPrefix(prefix, input.run, input.software)}/`)).filter((k) => k.endsWith('/manifest.json')).sort();
  return keys
    .filter((k) => input.after === undefined || k > input.after)
    .slice(0, input.limit)
    .map((manifestKey) => ({ manifestKey, ref: attemptOfManifest(prefix, manifestKey) }));
}

/**
 * Judge activities (orchestrator queue). Each vote is one call to one judge's OpenAI-compatible
 * endpoint with the trajectory's screens at the vote's resolution, fitted into that resolution's
 * box here (the workflow carries keys only) and subsampled to the judge's image limit. An
 * unreadable reply is a vote like any other (it counts as failure); an endpoint that refuses the
 * request fails the activity for good, one that is down fails it for retry.
 */
export function createJudgeActivities(deps: JudgeDeps) {
  const manifests = new PromiseCache<TrajectoryManifest>(256);
  const judging: Judging = {
    deps,
    metrics: deps.metrics ?? orchestratorMetrics(),
    readManifest: (key) => manifests.get(key, async () => parseTrajectoryManifest(await deps.store.getJson(key), key)),
  };
  return {
    prepareJudging: (input: Parameters<typeof prepareJudging>[1]) => prepareJudging(judging, input),
    castVote: (input: VoteInput) => castVote(judging, input),
    writeVerdict: (input: VerdictInput) => writeVerdict(judging, input),
    listTrajectories: (input: Parameters<typeof listTrajectories>[1]) => listTrajectories(judging, input),
  };
}

export type JudgeActivities = ReturnType<typeof createJudgeActivities>;
