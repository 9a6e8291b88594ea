import type { GuiAction, Point } from '../../core/actions';
import type { EvaluationResult, StopInfo } from '../../core/evaluation';
import type { Task } from '../../core/task';

/**
 * One place a rollout acts: a local Xvfb display running a real app, or an OSWorld/ScienceBoard
 * VM behind its HTTP server. Workflows never know which.
 */
export interface Desktop {
  /** Stable within its host, e.g. `local-1/0`. */
  readonly id: string;
  readonly screen: { readonly width: number; readonly height: number };
  /** Brings the desktop to the task's initial state: clean app, then the task's `initialize` steps. */
  reset(task: Task): Promise<void>;
  /** The screen as PNG bytes. */
  screenshot(): Promise<Buffer>;
  /**
   * Performs one action with real input events. Terminal actions are a no-op. An action that
   * cannot be rendered (core/render) throws RenderError, which is a failed step, not a desktop fault.
   */
  act(action: GuiAction): Promise<void>;
  /** Where the pointer is, in screen pixels: where a scroll without a point turns the wheel. */
  pointer(): Promise<Point>;
  /** Runs the task's `evaluate` checks against the app's real state. */
  evaluate(task: Task, stop: StopInfo): Promise<EvaluationResult>;
  /** False when the desktop can no longer be trusted (display or app gone); the pool recycles it. */
  healthy(): Promise<boolean>;
  /** Stops everything the desktop started. */
  close(): Promise<void>;
  /**
   * The CPU its own machine has used so far, where all of it is one process of this host (a VM
   * the host runs: QEMU's); absent where it is not (a local desktop's processes come and go, an
   * osworld VM runs elsewhere). A reset's CPU is the difference across it, in the same process.
   */
  cpu?(): { readonly pid: number; readonly seconds: number } | undefined;
}

/**
 * A failure of a desktop, naming the task and the step where it happened. `permanent` marks a
 * failure no other desktop would avoid (the task is invalid, no app runs it): the rollout ends
 * with it instead of trying elsewhere.
 */
export class DesktopError extends Error {
  constructor(
    message: string,
    readonly desktopId: string,
    readonly taskId?: string,
    readonly step?: string,
    readonly permanent = false,
  ) {
    super(`${desktopId}${taskId ? ` task ${taskId}` : ''}${step ? ` (${step})` : ''}: ${message}`);
    this.name = 'DesktopError';
  }
}

/**
 * The desktop cannot be used any more (its screenshots keep failing): the host gives its lease up
 * and the rollout leases again, as when a host dies; the next reset of this desktop reverts it.
 */
export class DesktopLostError extends DesktopError {
  constructor(message: string, desktopId: string, taskId?: string, step?: string) {
    super(message, desktopId, taskId, step);
    this.name = 'DesktopLostError';
  }
}
