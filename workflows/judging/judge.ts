import {
  ApplicationFailure,
  continueAsNew,
  defineQuery,
  executeChild,
  proxyActivities,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { JudgeEvaluationInput, JudgeInput, JudgeRunInput } from './contract';
import { FAILURES } from '../../core/failures';
import { nextJudgeRequest, type JudgeRequest } from '../../core/judge/voting';
import type { AttemptRef } from '../../core/keys';
import type { CastVote, JudgeActivities, JudgeOutcome } from '../../activities/judge/activities';
import type { JudgeEvaluationActivities, JudgeEvaluationSummary } from '../../activities/judge/evaluation';
import type { RunActivities } from '../../activities/runs/activities';
import { describeError } from '../failures';
import { failOnBadInput, inputs } from '../inputs';
import { judgeRunWorkflowId, judgeWorkflowId } from '../names';
import { tagWorkflow } from '../search-attributes';
import { STORAGE_ACTIVITY_RETRY } from '../retry';

/** A judge endpoint that stayed down (or refused) through every retry of a vote. */
export const JUDGE_UNAVAILABLE = 'JudgeUnavailable';

export interface JudgeTrajectoryProgress {
  readonly status: 'starting' | 'preparing' | 'voting' | 'writing' | 'finished';
  readonly manifestKey: string;
  /** Votes cast so far, of at most `total` (voting stops early at the first failure). */
  readonly completed: number;
  readonly total: number;
  readonly lastVote?: { readonly judge: string; readonly resolution: string; readonly success: boolean | null };
}

export const judgeProgress = defineQuery<JudgeTrajectoryProgress>('progress');

const judging = proxyActivities<JudgeActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  // Each call is already retried by the OpenAI client; these are retries of the whole vote.
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5, nonRetryableErrorTypes: [FAILURES.modelRequest] },
});

/**
 * Judges one trajectory (docs/method.md, "The judge"): drives core/judge/voting.ts — low-resolution votes
 * first with early exit, then high resolution, rotating through the plan's judges, success only
 * when every vote says so — one activity call per vote, and writes the verdict beside the
 * manifest. A verdict of the same plan that already exists is returned without calling any judge.
 * A judge that cannot be reached through every retry ends the workflow with that reason: no
 * verdict is better than a made-up one.
 */
export async function judgeTrajectory(raw: unknown): Promise<JudgeOutcome> {
  let input: JudgeInput | undefined;
  const votes: CastVote[] = [];
  let status: JudgeTrajectoryProgress['status'] = 'starting';
  // Registered before anything is awaited, so a query right after the start is answered.
  setHandler(judgeProgress, () => {
    const last = votes.at(-1);
    return {
      status,
      manifestKey: input?.manifestKey ?? '',
      completed: votes.length,
      total: input === undefined ? 0 : input.plan.lowResolutionVotes + input.plan.highResolutionVotes,
      ...(last === undefined ? {} : { lastVote: { judge: last.judge, resolution: last.resolution, success: last.reply?.correctness ?? null } }),
    };
  });
  input = await failOnBadInput(() => inputs.resolveJudgeInput(raw));
  const { ref, label, plan, manifestKey, images } = input;
  tagWorkflow({ software: ref.software, stage: 'judging', run: ref.run });
  status = 'preparing';

  const prepared = await judging.prepareJudging({ manifestKey, ref, label, plan });
  if (prepared.existing !== undefined) {
    status = 'finished';
    return prepared.existing;
  }
  status = 'voting';
  for (;;) {
    const next = nextJudgeRequest(plan, votes, prepared.stepCount);
    if (next.done) {
      status = 'writing';
      const { success, stoppedBecause, positiveSteps } = next.verdict;
      const outcome = await judging.writeVerdict({ manifestKey, ref, label, plan, images, stepCount: prepared.stepCount, verdict: { success, stoppedBecause, positiveSteps }, votes });
      status = 'finished';
      return outcome;
    }
    votes.push(await castOrFail(next.request, () => judging.castVote({ manifestKey, ref, label, request: next.request, images })));
  }
}

async function castOrFail(request: JudgeRequest, cast: () => Promise<CastVote>): Promise<CastVote> {
  try {
    return await cast();
  } catch (err) {
    throw ApplicationFailure.create({
      message: `judge ${request.judge} (${request.model}) gave no vote ${request.index + 1} (${request.resolution} resolution): ${describeError(err)}`,
      type: JUDGE_UNAVAILABLE,
      nonRetryable: true,
    });
  }
}

export interface JudgeRunProgress {
  readonly run: string;
  readonly software: string;
  readonly label: string;
  /** Trajectories judged so far (this and earlier runs of the workflow). */
  readonly completed: number;
  readonly succeeded: number;
  readonly failed: number;
  /** Judged plus those listed and not yet judged: grows as pages of the run are listed. */
  readonly total: number;
  readonly inFlight: readonly string[];
}

export interface JudgeRunResult {
  readonly run: string;
  readonly software: string;
  readonly label: string;
  readonly judged: number;
  readonly succeeded: number;
}

export const judgeRunProgress = defineQuery<JudgeRunProgress>('progress');

const listing = proxyActivities<JudgeActivities>({
  startToCloseTimeout: '2 minutes',
  retry: STORAGE_ACTIVITY_RETRY,
});

const runs = proxyActivities<RunActivities>({
  startToCloseTimeout: '3 hours',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute' },
});

/** Trajectories listed and judged per workflow run; then it continues as new, keeping history small. */
const PAGE = 200;

/**
 * Judges every trajectory of one run and software, `concurrency` at a time, one judgeTrajectory
 * child each (deterministic ids: a trajectory judged before is not judged again). A child that
 * fails (a judge that stays down) does not stop the others; the run then fails, saying how many
 * and why, so nobody mistakes a partly judged run for a judged one.
 */
export async function judgeRun(raw: unknown): Promise<JudgeRunResult> {
  let input: JudgeRunInput | undefined;
  let judged = 0;
  let succeeded = 0;
  let listed = 0;
  const failures: string[] = [];
  const inFlight = new Map<string, Promise<void>>();
  // Registered before anything is awaited, so a query right after the start is answered.
  setHandler(judgeRunProgress, () => ({
    run: input?.run ?? '',
    software: input?.software ?? '',
    label: input?.label ?? '',
    completed: judged,
    succeeded,
    failed: failures.length,
    total: (input?.carried?.judged ?? 0) + listed,
    inFlight: [...inFlight.keys()],
  }));
  input = await failOnBadInput(() => inputs.resolveJudgeRunInput(raw));
  const { run, software, label } = input;
  tagWorkflow({ software, stage: 'judging', run });
  judged = input.carried?.judged ?? 0;
  succeeded = input.carried?.succeeded ?? 0;

  const { plan, concurrency, carried } = input;
  const page = await listing.listTrajectories({ run, software, limit: PAGE, ...(carried === undefined ? {} : { after: carried.cursor }) });
  listed = page.length;
  const judge = async (manifestKey: string, ref: AttemptRef): Promise<void> => {
    const workflowId = judgeWorkflowId(ref, label);
    let outcome: Promise<JudgeOutcome>;
    try {
      const child = await startChild(judgeTrajectory, { workflowId, args: [{ manifestKey, label, ...(plan === undefined ? {} : { plan }) }] });
      outcome = child.result();
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      outcome = runs.awaitWorkflow(workflowId) as Promise<JudgeOutcome>;
    }
    inFlight.set(
      workflowId,
      outcome.then(
        (o) => {
          inFlight.delete(workflowId);
          judged += 1;
          if (o.success) succeeded += 1;
        },
        (err: unknown) => {
          inFlight.delete(workflowId);
          failures.push(`${workflowId}: ${describeError(err)}`);
        },
      ),
    );
  };
  for (const item of page) {
    while (inFlight.size >= concurrency) await Promise.race(inFlight.values());
    await judge(item.manifestKey, item.ref);
  }
  await Promise.all(inFlight.values());
  if (failures.length > 0) {
    throw ApplicationFailure.create({
      message: `${failures.length} of ${page.length} trajectories could not be judged; first: ${failures[0]}`,
      type: JUDGE_UNAVAILABLE,
      nonRetryable: true,
    });
  }
  if (page.length === PAGE) {
    await continueAsNew<typeof judgeRun>({
      ...input,
      carried: { cursor: page.at(-1)!.manifestKey, judged, succeeded, runs: (carried?.runs ?? 0) + 1 },
    });
  }
  return { run, software, label, judged, succeeded };
}

export interface JudgeEvaluationProgress {
  readonly run: string;
  readonly software: string;
  /** Strategies whose judging is done, of `total`. */
  readonly completed: number;
  readonly total: number;
  readonly current?: string;
}

export const judgeEvaluationProgress = defineQuery<JudgeEvaluationProgress>('progress');

const summarizing = proxyActivities<JudgeEvaluationActivities>({
  startToCloseTimeout: '10 minutes',
  retry: STORAGE_ACTIVITY_RETRY,
});

/**
 * Compares judge strategies on the same labelled trajectories (`coda judge-eval`): each strategy
 * judges the run under its own label (a judgeRun child; a strategy that judged this run before is
 * not paid again), then the verdicts are compared with the evaluators' results and, for
 * multi-resolution strategies, with the all-high-resolution plan of the same votes.
 */
export async function judgeEvaluation(raw: unknown): Promise<JudgeEvaluationSummary> {
  let input: JudgeEvaluationInput | undefined;
  let completed = 0;
  let current: string | undefined;
  // Registered before anything is awaited, so a query right after the start is answered.
  setHandler(judgeEvaluationProgress, () => ({
    run: input?.run ?? '',
    software: input?.software ?? '',
    completed,
    total: input?.strategies.length ?? 0,
    ...(current === undefined ? {} : { current }),
  }));
  input = await failOnBadInput(() => inputs.resolveJudgeEvaluationInput(raw, workflowInfo().workflowId));
  tagWorkflow({ software: input.software, stage: 'judge-evaluation', run: input.run });
  for (const strategy of input.strategies) {
    current = strategy.label;
    await executeChild(judgeRun, {
      workflowId: judgeRunWorkflowId(input.run, input.software, strategy.label),
      args: [{ run: input.run, software: input.software, label: strategy.label, plan: strategy.plan }],
    });
    completed += 1;
  }
  current = undefined;
  return summarizing.summarizeJudgeEvaluation({ id: input.id, run: input.run, software: input.software, createdAt: new Date().toISOString(), strategies: input.strategies });
}
