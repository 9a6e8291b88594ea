import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  defineQuery,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  TimeoutFailure,
  workflowInfo,
} from '@temporalio/workflow';
import type { GuiAction } from '../../core/actions';
import { stopReasonOf } from '../../core/episode';
import { FAILURES } from '../../core/failures';
import type { EvaluationResult } from '../../core/evaluation';
import type { AttemptRef } from '../../core/keys';
import type { DesktopActivities } from '../../activities/desktop/activities';
import type { Lease } from '../../activities/desktop/pool';
import type { ModelActivities } from '../../activities/models/activities';
import type { TrajectoryActivities } from '../../activities/storage/trajectory';
import { describeError } from '../failures';
import { failOnBadInput, inputs, RETRY_THROUGH_TIMERS } from '../inputs';
import { tagWorkflow } from '../search-attributes';
import type { Decision, RolloutProgress, RolloutResult, StepSummary, StopSummary } from '../../core/rollout-types';
import { truncate } from '../../core/text';

export const rolloutProgress = defineQuery<RolloutProgress>('progress');

const trajectories = proxyActivities<TrajectoryActivities>({
  startToCloseTimeout: '2 minutes',
  // S3 outages are waited out: the manifest is retried until the store is back (bounded by an hour).
  scheduleToCloseTimeout: '1 hour',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** A failure that means "this desktop or its host is gone": re-lease and restore, don't give up. */
function isHostLoss(err: unknown): boolean {
  if (!(err instanceof ActivityFailure)) return false;
  const cause = err.cause;
  if (cause instanceof TimeoutFailure) return true;
  if (cause instanceof ApplicationFailure) return cause.type === FAILURES.leaseLost || !cause.nonRetryable;
  return false;
}

/** What onDesktop returns when the task had to start over on a fresh desktop. */
const RESTARTED = Symbol('restarted');


/**
 * One attempt at one task: lease a desktop through its host's queue, reset, then loop up to the
 * task's step budget — planner, executor (skipped on ANS/DONE/FAIL), act — and stop on DONE,
 * FAIL, ANS, call_user or TIMEOUT; evaluate; write the manifest to S3.
 *
 * A host that dies mid-rollout (heartbeat or schedule-to-start timeout, or a lost lease) is
 * survived: a fresh desktop is leased from any host, the recorded actions are replayed (or the
 * task restarts, per `settings.resume`), and the loop continues from the last recorded step.
 * Steps live in this workflow's state, so each appears exactly once in the manifest.
 */
export async function rollout(raw: unknown): Promise<RolloutResult> {
  let steps: StepSummary[] = [];
  let lease: Lease | undefined;
  let resumes = 0;
  let status: RolloutProgress['status'] = 'starting';
  let stop: StopSummary | undefined;
  let maxSteps = 0;
  const startedMs = Date.now();
  // Registered before anything is awaited, so a query right after the start is answered.
  setHandler(rolloutProgress, () => {
    const last = steps[steps.length - 1];
    return {
      status,
      step: steps.length,
      maxSteps,
      lastThought: last?.thought,
      lastAction: last?.action,
      elapsedMs: Date.now() - startedMs,
      resumes,
      desktop: lease?.desktopId,
      stop,
    };
  });

  const input = await failOnBadInput(() => inputs.resolveRolloutInput(raw));
  const { task, settings } = input;
  maxSteps = task.maxSteps;
  status = 'leasing';
  tagWorkflow({ software: task.software, stage: input.stage, run: input.run });
  const ref: AttemptRef = { run: input.run, software: task.software, task: task.id, attempt: input.attempt };
  const startedAt = new Date().toISOString();

  // The decision runs as a local activity of the orchestrator worker that runs this workflow: it
  // needs no other machine, and skipping a server round trip per step keeps the step overhead low.
  // A crash of that worker times out the workflow task, and the decision is made again elsewhere.
  const models = proxyLocalActivities<ModelActivities>({
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
  const leasing = proxyActivities<DesktopActivities>({
    taskQueue: settings.leaseQueue,
    startToCloseTimeout: '30 seconds',
    scheduleToCloseTimeout: '2 hours',
    retry: { initialInterval: '1 second', backoffCoefficient: 1.5, maximumInterval: '15 seconds' },
  });
  const hostActivities = (lease: Lease) =>
    proxyActivities<DesktopActivities>({
      taskQueue: lease.hostQueue,
      scheduleToStartTimeout: `${settings.hostScheduleToStartSeconds} seconds`,
      startToCloseTimeout: '10 minutes',
      heartbeatTimeout: `${settings.heartbeatTimeoutSeconds} seconds`,
      retry: { initialInterval: '1 second', maximumAttempts: 3, nonRetryableErrorTypes: [FAILURES.leaseLost, FAILURES.taskUnrunnable] },
    });

  /** The desktop the rollout last held, for the manifest and the models (its screen size). */
  let desktop = { host: '', id: '', screen: { width: 0, height: 0 } };
  let screenshotKey = '';
  let initialScreenshotKey = '';
  /** A decision whose action is not performed yet (kept across a host loss, dropped on restart). */
  let pending: { decision: Decision; startedAt: string; seen: string } | undefined;

  /**
   * Leases a desktop and brings it to the state after the recorded steps: replays their actions,
   * or, with `resume: restart`, forgets them (and the pending decision) and starts the task over.
   */
  const acquire = async (): Promise<Lease> => {
    status = 'leasing';
    const fresh = await leasing.leaseDesktop({ requestId: `${workflowInfo().workflowId}#${resumes}`, software: task.software });
    desktop = { host: fresh.hostId, id: fresh.desktopId, screen: fresh.screen };
    status = 'resetting';
    if (settings.resume === 'restart' && (steps.length > 0 || pending !== undefined)) {
      steps = [];
      pending = undefined;
      stop = undefined;
      restarted = true;
    }
    const replay = steps.filter((s) => s.performed && s.action !== null).map((s) => s.action as GuiAction);
    const observation = await hostActivities(fresh).resetDesktop({ leaseId: fresh.leaseId, taskKey: task.key, ref, replay, step: steps.length });
    screenshotKey = observation.screenshotKey;
    if (steps.length === 0) initialScreenshotKey = observation.screenshotKey;
    return fresh;
  };
  let restarted = false;

  /**
   * Runs `op` on the leased desktop, surviving host loss by re-leasing and restoring state.
   * Returns RESTARTED instead when restoring meant starting the task over: `op` belonged to the
   * abandoned episode and must not run.
   */
  const onDesktop = async <T>(op: (host: DesktopActivities, lease: Lease) => Promise<T>): Promise<T | typeof RESTARTED> => {
    for (;;) {
      try {
        lease ??= await acquire();
        if (restarted) {
          restarted = false;
          return RESTARTED;
        }
        return await op(hostActivities(lease), lease);
      } catch (err) {
        if (!isHostLoss(err)) throw err;
        lease = undefined;
        if (++resumes > settings.maxResumes) {
          throw ApplicationFailure.nonRetryable(`lost the desktop ${resumes} times; last: ${describeError(err)}`, FAILURES.desktopLost);
        }
      }
    }
  };

  /** Plans and acts until the agent stops, the step budget runs out, or the model keeps failing. */
  const runEpisode = async (): Promise<StopSummary> => {
    let malformedInARow = 0;
    for (;;) {
      if (steps.length >= task.maxSteps) return { reason: 'TIMEOUT', detail: `no stop action within ${task.maxSteps} steps` };
      const index = steps.length + 1;
      if (pending === undefined) {
        status = 'deciding';
        const stepStarted = new Date().toISOString();
        let decision: Decision;
        try {
          decision = await models.decideStep({
            ref,
            step: index,
            taskKey: task.key,
            screenshotKey,
            screen: desktop.screen,
            history: steps.map((s) => ({ decisionKey: s.decisionKey, screenshotKey: s.screenshotKey })),
            ...(settings.plannerModel === undefined ? {} : { plannerModel: settings.plannerModel }),
          });
        } catch (err) {
          // The models stayed unreachable through every retry, or refused the request: say which and why.
          if (!(err instanceof ActivityFailure || err instanceof ApplicationFailure || err instanceof TimeoutFailure)) throw err;
          return { reason: 'ERROR', detail: truncate(describeError(err), 500) };
        }
        pending = { decision, startedAt: stepStarted, seen: screenshotKey };
      }
      const { decision } = pending;
      const base = { ...decision, index, screenshotKey: pending.seen, startedAt: pending.startedAt };

      if (decision.action === null) {
        steps.push({ ...base, performed: false });
        pending = undefined;
        if (++malformedInARow > settings.maxMalformedReplies) {
          return { reason: 'ERROR', detail: `model output malformed ${malformedInARow} times in a row; last: ${decision.error ?? 'unknown'}` };
        }
        continue;
      }
      malformedInARow = 0;
      const reason = stopReasonOf(decision.action);
      if (reason !== undefined) {
        steps.push({ ...base, performed: false });
        pending = undefined;
        return decision.action.type === 'answer' ? { reason, answer: decision.action.text } : { reason };
      }

      status = 'acting';
      const resumesBefore = resumes;
      const outcome = await onDesktop((host, held) => host.performStep({ leaseId: held.leaseId, ref, step: index, action: decision.action! }));
      if (outcome === RESTARTED) {
        malformedInARow = 0;
        continue;
      }
      const resumed = resumes > resumesBefore ? { resumed: true } : {};
      if (outcome.performed) {
        // A scroll at the pointer comes back with where the pointer was: the step records (and a resume replays) that.
        const action = outcome.action ?? decision.action;
        steps.push({ ...base, ...resumed, action, performed: true, afterScreenshotKey: outcome.screenshotKey, actMs: outcome.actMs, screenshotMs: outcome.screenshotMs });
        screenshotKey = outcome.screenshotKey;
      } else {
        steps.push({ ...base, ...resumed, performed: false, error: outcome.error });
      }
      pending = undefined;
    }
  };

  let evaluation: EvaluationResult | undefined;
  try {
    await onDesktop(async () => undefined);
    for (;;) {
      stop = await runEpisode();
      // A task without checks (generated) is not evaluated: its judge's verdict says whether it passed.
      if (stop.reason === 'ERROR' || !task.evaluated) break;
      status = 'evaluating';
      const ended: StopSummary = stop;
      const result = await onDesktop((host, held) =>
        host.evaluateDesktop({ leaseId: held.leaseId, taskKey: task.key, stop: { reason: ended.reason, answer: ended.answer } }),
      );
      if (result !== RESTARTED) {
        evaluation = result;
        break;
      }
    }
  } catch (err) {
    if (err instanceof ActivityFailure || (err instanceof ApplicationFailure && err.type === FAILURES.desktopLost)) {
      stop = { reason: 'ERROR', detail: truncate(describeError(err), 500) };
    } else {
      throw err;
    }
  } finally {
    const held = lease;
    if (held !== undefined) {
      await CancellationScope.nonCancellable(() => hostActivities(held).releaseDesktop(held.leaseId).catch(() => false));
    }
  }

  status = 'writing';
  const finalStop = stop as StopSummary;
  const manifestKey = await trajectories.writeManifest({
    ref,
    stage: input.stage,
    taskKey: task.key,
    maxSteps: task.maxSteps,
    steps,
    desktop,
    initialScreenshotKey,
    finalScreenshotKey: screenshotKey,
    stop: finalStop,
    evaluation,
    resumes,
    startedAt,
    endedAt: new Date().toISOString(),
  });
  status = 'finished';
  return { ref, manifestKey, stop: finalStop, steps: steps.length, resumes, passed: evaluation?.passed, evaluation };
}
