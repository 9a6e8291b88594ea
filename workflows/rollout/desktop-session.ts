import { ActivityFailure, ApplicationFailure, CancellationScope, proxyActivities, TimeoutFailure, workflowInfo } from '@temporalio/workflow';
import type { GuiAction } from '../../core/actions';
import { FAILURES } from '../../core/failures';
import type { DesktopActivities } from '../../activities/desktop/activities';
import type { Lease } from '../../activities/desktop/pool';
import { describeError } from '../failures';
import type { RolloutState, RolloutTarget } from './state';

/** What DesktopSession.run returns when the task had to start over on a fresh desktop. */
export const RESTARTED = Symbol('restarted');

/** A failure that means "this desktop or its host is gone": re-lease and restore, don't give up. */
function isHostLoss(err: unknown): boolean {
  if (!(err instanceof ActivityFailure)) return false;
  const cause = err.cause;
  if (cause instanceof TimeoutFailure) return true;
  if (cause instanceof ApplicationFailure) return cause.type === FAILURES.leaseLost || !cause.nonRetryable;
  return false;
}

/**
 * A rollout's hold on a desktop: it leases one through the shared lease queue (any host answers),
 * resumes on a fresh one when the host is lost (replaying the recorded actions, or starting the
 * task over with `resume: restart`), and releases it at the end.
 */
export class DesktopSession {
  private readonly leasing;
  /** Set when restoring a desktop meant starting the task over, until the operation it interrupted hears of it. */
  private restarted = false;

  constructor(
    private readonly state: RolloutState,
    private readonly target: RolloutTarget,
  ) {
    this.leasing = proxyActivities<DesktopActivities>({
      taskQueue: target.settings.leaseQueue,
      startToCloseTimeout: '30 seconds',
      scheduleToCloseTimeout: '2 hours',
      retry: { initialInterval: '1 second', backoffCoefficient: 1.5, maximumInterval: '15 seconds' },
    });
  }

  /** The activities of the host that holds `lease`. */
  private host(lease: Lease): DesktopActivities {
    const { settings } = this.target;
    return proxyActivities<DesktopActivities>({
      taskQueue: lease.hostQueue,
      scheduleToStartTimeout: `${settings.hostScheduleToStartSeconds} seconds`,
      startToCloseTimeout: '10 minutes',
      heartbeatTimeout: `${settings.heartbeatTimeoutSeconds} seconds`,
      retry: { initialInterval: '1 second', maximumAttempts: 3, nonRetryableErrorTypes: [FAILURES.leaseLost, FAILURES.taskUnrunnable] },
    });
  }

  /**
   * Leases a desktop and brings it to the state after the recorded steps: replays their actions,
   * or, with `resume: restart`, forgets them (and the pending decision) and starts the task over.
   */
  private async acquire(): Promise<Lease> {
    const { state } = this;
    const { task, ref, settings } = this.target;
    state.status = 'leasing';
    const fresh = await this.leasing.leaseDesktop({ requestId: `${workflowInfo().workflowId}#${state.resumes}`, software: task.software });
    state.desktop = { host: fresh.hostId, id: fresh.desktopId, screen: fresh.screen };
    state.status = 'resetting';
    if (settings.resume === 'restart' && (state.steps.length > 0 || state.pending !== undefined)) {
      state.steps = [];
      state.pending = undefined;
      state.stop = undefined;
      this.restarted = true;
    }
    const replay = state.steps.filter((s) => s.performed && s.action !== null).map((s) => s.action as GuiAction);
    const observation = await this.host(fresh).resetDesktop({ leaseId: fresh.leaseId, taskKey: task.key, ref, replay, step: state.steps.length });
    state.screenshotKey = observation.screenshotKey;
    if (state.steps.length === 0) state.initialScreenshotKey = observation.screenshotKey;
    return fresh;
  }

  /**
   * Runs `op` on the leased desktop, surviving host loss by re-leasing and restoring state.
   * Returns RESTARTED instead when restoring meant starting the task over: `op` belonged to the
   * abandoned episode and must not run.
   */
  async run<T>(op: (host: DesktopActivities, lease: Lease) => Promise<T>): Promise<T | typeof RESTARTED> {
    const { state } = this;
    for (;;) {
      try {
        state.lease ??= await this.acquire();
        if (this.restarted) {
          this.restarted = false;
          return RESTARTED;
        }
        return await op(this.host(state.lease), state.lease);
      } catch (err) {
        if (!isHostLoss(err)) throw err;
        state.lease = undefined;
        if (++state.resumes > this.target.settings.maxResumes) {
          throw ApplicationFailure.nonRetryable(`lost the desktop ${state.resumes} times; last: ${describeError(err)}`, FAILURES.desktopLost);
        }
      }
    }
  }

  /** Gives the desktop back, even when the rollout is cancelled; a host that is gone has nothing to give back. */
  async release(): Promise<void> {
    const held = this.state.lease;
    if (held !== undefined) {
      await CancellationScope.nonCancellable(() => this.host(held).releaseDesktop(held.leaseId).catch(() => false));
    }
  }
}
