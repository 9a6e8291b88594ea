import { ActivityFailure, ApplicationFailure, proxyLocalActivities, TimeoutFailure } from '@temporalio/workflow';
import type { GuiAction } from '../../core/actions';
import { stopReasonOf } from '../../core/episode';
import { FAILURES } from '../../core/failures';
import type { Decision, StepSummary, StopSummary } from '../../core/rollout-types';
import { truncate } from '../../core/text';
import type { ModelActivities } from '../../activities/models/activities';
import { describeError } from '../failures';
import { RETRY_THROUGH_TIMERS } from '../inputs';
import type { RolloutSettings } from './contract';
import { RESTARTED, type DesktopSession } from './desktop-session';
import type { RolloutState, RolloutTarget } from './state';

/** What the episode loop works with: the attempt, its desktop session and its models. */
export interface Episode extends RolloutTarget {
  readonly session: DesktopSession;
  readonly models: ModelActivities;
}

/**
 * The models' decisions as local activities of the orchestrator worker that runs the rollout: they
 * need no other machine, and skipping a server round trip per step keeps the step overhead low. A
 * crash of that worker times out the workflow task, and the decision is made again elsewhere.
 */
export const plannerModels = (settings: RolloutSettings): ModelActivities =>
  proxyLocalActivities<ModelActivities>({
    ...RETRY_THROUGH_TIMERS,
    startToCloseTimeout: '10 minutes',
    retry: {
      initialInterval: '2 seconds',
      backoffCoefficient: 2,
      maximumInterval: '1 minute',
      maximumAttempts: settings.modelAttempts,
      nonRetryableErrorTypes: [FAILURES.modelRequest],
    },
  });

/** Asks the models for step `index`, kept as the pending decision; an ERROR stop when they stayed unreachable or refused. */
async function decide(state: RolloutState, episode: Episode, index: number): Promise<StopSummary | undefined> {
  const { task, ref, settings } = episode;
  state.status = 'deciding';
  const startedAt = new Date().toISOString();
  let decision: Decision;
  try {
    decision = await episode.models.decideStep({
      ref,
      step: index,
      taskKey: task.key,
      screenshotKey: state.screenshotKey,
      screen: state.desktop.screen,
      history: state.steps.map((s) => ({ decisionKey: s.decisionKey, screenshotKey: s.screenshotKey })),
      ...(settings.plannerModel === undefined ? {} : { plannerModel: settings.plannerModel }),
    });
  } catch (err) {
    // The models stayed unreachable through every retry, or refused the request: say which and why.
    if (!(err instanceof ActivityFailure || err instanceof ApplicationFailure || err instanceof TimeoutFailure)) throw err;
    return { reason: 'ERROR', detail: truncate(describeError(err), 500) };
  }
  state.pending = { decision, startedAt, seen: state.screenshotKey };
  return undefined;
}

type StepBase = Omit<StepSummary, 'performed'>;

/** Performs the pending decision's action on the desktop and records the step (not when the task restarted on a fresh desktop instead). */
async function act(state: RolloutState, episode: Episode, base: StepBase, action: GuiAction): Promise<void> {
  state.status = 'acting';
  const resumesBefore = state.resumes;
  const outcome = await episode.session.run((host, held) => host.performStep({ leaseId: held.leaseId, ref: episode.ref, step: base.index, action }));
  if (outcome === RESTARTED) return;
  const resumed = state.resumes > resumesBefore ? { resumed: true } : {};
  if (outcome.performed) {
    // A scroll at the pointer comes back with where the pointer was: the step records (and a resume replays) that.
    state.steps.push({ ...base, ...resumed, action: outcome.action ?? action, performed: true, afterScreenshotKey: outcome.screenshotKey, actMs: outcome.actMs, screenshotMs: outcome.screenshotMs });
    state.screenshotKey = outcome.screenshotKey;
  } else {
    state.steps.push({ ...base, ...resumed, performed: false, error: outcome.error });
  }
  state.pending = undefined;
}

/** Plans and acts until the agent stops, the step budget runs out, or the model keeps failing. */
export async function runEpisode(state: RolloutState, episode: Episode): Promise<StopSummary> {
  const { task, settings } = episode;
  let malformedInARow = 0;
  for (;;) {
    if (state.steps.length >= task.maxSteps) return { reason: 'TIMEOUT', detail: `no stop action within ${task.maxSteps} steps` };
    const index = state.steps.length + 1;
    if (state.pending === undefined) {
      const failed = await decide(state, episode, index);
      if (failed !== undefined) return failed;
    }
    const { decision, startedAt, seen } = state.pending!;
    const base: StepBase = { ...decision, index, screenshotKey: seen, startedAt };

    if (decision.action === null) {
      state.steps.push({ ...base, performed: false });
      state.pending = undefined;
      if (++malformedInARow > settings.maxMalformedReplies) {
        return { reason: 'ERROR', detail: `model output malformed ${malformedInARow} times in a row; last: ${decision.error ?? 'unknown'}` };
      }
      continue;
    }
    malformedInARow = 0;
    const reason = stopReasonOf(decision.action);
    if (reason !== undefined) {
      state.steps.push({ ...base, performed: false });
      state.pending = undefined;
      return decision.action.type === 'answer' ? { reason, answer: decision.action.text } : { reason };
    }
    await act(state, episode, base, decision.action);
  }
}
