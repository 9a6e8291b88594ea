import { ActivityFailure, ApplicationFailure, defineQuery, proxyActivities, setHandler } from '@temporalio/workflow';
import { FAILURES } from '../../core/failures';
import type { EvaluationResult } from '../../core/evaluation';
import type { AttemptRef } from '../../core/keys';
import type { RolloutProgress, RolloutResult, StopSummary } from '../../core/rollout-types';
import { truncate } from '../../core/text';
import type { TrajectoryActivities } from '../../activities/storage/trajectory';
import { describeError } from '../failures';
import { failOnBadInput, inputs } from '../inputs';
import { tagWorkflow } from '../search-attributes';
import { DesktopSession, RESTARTED } from './desktop-session';
import { plannerModels, runEpisode, type Episode } from './episode';
import { newRolloutState, type RolloutState } from './state';

export const rolloutProgress = defineQuery<RolloutProgress>('progress');

const trajectories = proxyActivities<TrajectoryActivities>({
  startToCloseTimeout: '2 minutes',
  // S3 outages are waited out: the manifest is retried until the store is back (bounded by an hour).
  scheduleToCloseTimeout: '1 hour',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

function progressOf(state: RolloutState, maxSteps: number, startedMs: number): RolloutProgress {
  const last = state.steps[state.steps.length - 1];
  return {
    status: state.status,
    step: state.steps.length,
    maxSteps,
    lastThought: last?.thought,
    lastAction: last?.action,
    elapsedMs: Date.now() - startedMs,
    resumes: state.resumes,
    desktop: state.lease?.desktopId,
    stop: state.stop,
  };
}

/**
 * The episode on a leased desktop until it stops, then the desktop's evaluation (a task without
 * checks, generated, is not evaluated: its judge's verdict says whether it passed). Restoring a
 * lost desktop by starting over runs the episode again. A failed activity, or the desktop lost
 * more than maxResumes times, ends it with ERROR; the desktop is released in every case.
 */
async function runOnDesktop(state: RolloutState, episode: Episode): Promise<EvaluationResult | undefined> {
  const { session, task } = episode;
  try {
    await session.run(async () => undefined);
    for (;;) {
      state.stop = await runEpisode(state, episode);
      if (state.stop.reason === 'ERROR' || !task.evaluated) return undefined;
      state.status = 'evaluating';
      const ended: StopSummary = state.stop;
      const result = await session.run((host, held) => host.evaluateDesktop({ leaseId: held.leaseId, taskKey: task.key, stop: { reason: ended.reason, answer: ended.answer } }));
      if (result !== RESTARTED) return result;
    }
  } catch (err) {
    if (err instanceof ActivityFailure || (err instanceof ApplicationFailure && err.type === FAILURES.desktopLost)) {
      state.stop = { reason: 'ERROR', detail: truncate(describeError(err), 500) };
      return undefined;
    }
    throw err;
  } finally {
    await session.release();
  }
}

/**
 * One attempt at one task: lease a desktop through its host's queue, reset, then loop up to the
 * task's step budget — planner, executor (skipped on ANS/DONE/FAIL), act — and stop on DONE,
 * FAIL, ANS, call_user or TIMEOUT; evaluate; write the manifest to S3.
 *
 * A host that dies mid-rollout (heartbeat or schedule-to-start timeout, or a lost lease) is
 * survived (desktop-session.ts): a fresh desktop is leased from any host, the recorded actions are
 * replayed (or the task restarts, per `settings.resume`), and the loop (episode.ts) continues from
 * the last recorded step. Steps live in this workflow's state, so each appears exactly once in the manifest.
 */
export async function rollout(raw: unknown): Promise<RolloutResult> {
  const state = newRolloutState();
  let maxSteps = 0;
  const startedMs = Date.now();
  // Registered before anything is awaited, so a query right after the start is answered.
  setHandler(rolloutProgress, () => progressOf(state, maxSteps, startedMs));

  const input = await failOnBadInput(() => inputs.resolveRolloutInput(raw));
  const { task, settings } = input;
  maxSteps = task.maxSteps;
  state.status = 'leasing';
  tagWorkflow({ software: task.software, stage: input.stage, run: input.run });
  const ref: AttemptRef = { run: input.run, software: task.software, task: task.id, attempt: input.attempt };
  const startedAt = new Date().toISOString();
  const target = { task, ref, settings };
  const evaluation = await runOnDesktop(state, { ...target, session: new DesktopSession(state, target), models: plannerModels(settings) });

  state.status = 'writing';
  const stop = state.stop as StopSummary;
  const manifestKey = await trajectories.writeManifest({
    ref,
    stage: input.stage,
    taskKey: task.key,
    maxSteps: task.maxSteps,
    steps: state.steps,
    desktop: state.desktop,
    initialScreenshotKey: state.initialScreenshotKey,
    finalScreenshotKey: state.screenshotKey,
    stop,
    evaluation,
    resumes: state.resumes,
    startedAt,
    endedAt: new Date().toISOString(),
  });
  state.status = 'finished';
  return { ref, manifestKey, stop, steps: state.steps.length, resumes: state.resumes, passed: evaluation?.passed, evaluation };
}
