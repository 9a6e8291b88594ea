import { setTimeout as sleep } from 'node:timers/promises';
import { ApplicationFailure } from '@temporalio/activity';
import type { GuiAction } from '../../core/actions';
import type { EvaluationResult, StopInfo } from '../../core/evaluation';
import { FAILURES } from '../../core/failures';
import { screenshotKey, type AttemptRef } from '../../core/keys';
import { RenderError } from '../../core/render/input-events';
import { withHeartbeat } from '../heartbeat';
import { storeScreenshot } from '../images/variants';
import { desktopMetrics, type DesktopMetrics } from '../metrics';
import type { ObjectStore } from '../storage/object-store';
import type { TaskReader } from '../tasks/library';
import { DesktopError, DesktopLostError, type Desktop } from './desktop';
import { LeaseLostError, NoFreeDesktopError, SoftwareNotServedError, type DesktopPool, type Lease, type LeaseRequest } from './pool';


export interface ResetInput {
  readonly leaseId: string;
  readonly taskKey: string;
  readonly ref: AttemptRef;
  /** Actions already performed before a crash, replayed in order to restore the state. */
  readonly replay: readonly GuiAction[];
  /** Step whose screenshot this reset produces (0 for a fresh start, the last replayed step otherwise). */
  readonly step: number;
}

export interface Observation {
  readonly screenshotKey: string;
  readonly ms: number;
}

export interface StepInput {
  readonly leaseId: string;
  readonly ref: AttemptRef;
  readonly step: number;
  readonly action: GuiAction;
}

export type StepOutcome =
  | {
      readonly performed: true;
      readonly screenshotKey: string;
      readonly actMs: number;
      readonly screenshotMs: number;
      /** The action as performed, when the desktop completed it: a scroll at the pointer, with where the pointer was. */
      readonly action?: GuiAction;
    }
  /** The action cannot be performed at all (e.g. a key the key table does not know): the step fails, the rollout goes on. */
  | { readonly performed: false; readonly error: string };

export interface DesktopDeps {
  readonly pool: DesktopPool;
  readonly store: ObjectStore;
  readonly prefix: string;
  readonly tasks: TaskReader;
  /** Pause after an action so the app can repaint before the screenshot. */
  readonly settleMs: number;
  /** Boxes to store a variant of every screenshot for, at capture (config/schema.ts preparedBoxes). */
  readonly variantBoxes?: ReadonlyArray<{ readonly width: number; readonly height: number }>;
  readonly metrics?: DesktopMetrics;
}

/**
 * A scroll without a point turns the wheel where the pointer is (UI-TARS's `scroll(direction=...)`):
 * the desktop is asked where that is and the scroll is performed there, so the step's record, the
 * judge and a replay on another desktop all have the point. Any other action is as decided.
 */
async function placed(desktop: Desktop, action: GuiAction): Promise<GuiAction> {
  if (action.type !== 'scroll' || (action.x !== undefined && action.y !== undefined)) return action;
  const { x, y } = await desktop.pointer();
  return { ...action, x, y };
}

/**
 * Turns pool and desktop errors into the failures the workflow handles: a lost lease or a lost
 * desktop is final for that lease (the rollout re-leases), a task no desktop can run is final for
 * the rollout.
 */
function asFailure(err: unknown): unknown {
  if (err instanceof LeaseLostError || err instanceof DesktopLostError) return ApplicationFailure.nonRetryable(err.message, FAILURES.leaseLost);
  if (err instanceof NoFreeDesktopError) return ApplicationFailure.retryable(err.message, FAILURES.noFreeDesktop);
  // Retried while another host serves the software: the shared lease queue may hand it the request.
  if (err instanceof SoftwareNotServedError) {
    return err.elsewhere ? ApplicationFailure.retryable(err.message, FAILURES.softwareNotServed) : ApplicationFailure.nonRetryable(err.message, FAILURES.taskUnrunnable);
  }
  if (err instanceof DesktopError && err.permanent) return ApplicationFailure.nonRetryable(err.message, FAILURES.taskUnrunnable);
  return err;
}

/** What the desktop activities of one vm-host share. */
interface Host {
  readonly deps: DesktopDeps;
  readonly metrics: DesktopMetrics;
  readonly id: string;
}

/** The failure for the workflow; a lost desktop also gives its lease up, so its next rollout resets (reverts) it. */
function failure({ deps }: Host, err: unknown, leaseId: string): unknown {
  if (err instanceof DesktopLostError) deps.pool.release(leaseId);
  return asFailure(err);
}

/** The screenshot and its variants (prepared here, once, so no reader decodes or resizes it), stored before the step is done. */
async function capture({ deps }: Host, leaseId: string, ref: AttemptRef, step: number): Promise<Observation> {
  const started = Date.now();
  const png = await deps.pool.use(leaseId).screenshot();
  const key = screenshotKey(deps.prefix, ref, step);
  await storeScreenshot(deps.store, key, png, deps.variantBoxes ?? []);
  return { screenshotKey: key, ms: Date.now() - started };
}

async function leaseDesktop({ deps }: Host, request: LeaseRequest): Promise<Lease> {
  try {
    return deps.pool.lease(request);
  } catch (err) {
    throw asFailure(err);
  }
}

type CpuReading = { readonly pid: number; readonly seconds: number } | undefined;

/** A reset's CPU, when the desktop's machine is one process that ran through it (a VM whose QEMU was started again in between is not). */
function observeResetCpu(host: Host, kind: string, before: CpuReading, after: CpuReading): void {
  if (before !== undefined && after !== undefined && before.pid === after.pid) host.metrics.resetCpuSeconds.observe({ host: host.id, kind }, after.seconds - before.seconds);
}

/** Resets the desktop to the task's initial state, replays `replay`, and stores the screenshot. */
async function resetDesktop(host: Host, input: ResetInput): Promise<Observation> {
  const { deps, metrics } = host;
  let replayed = 0;
  // A reset that replays recorded steps is a rollout resuming after its desktop was lost.
  const kind = input.replay.length > 0 || input.step > 0 ? 'resume' : 'fresh';
  const timer = metrics.resetSeconds.startTimer({ host: host.id, kind });
  try {
    const observation = await withHeartbeat(
      async () => {
        const task = await deps.tasks.read(input.taskKey);
        const desktop = deps.pool.use(input.leaseId);
        const leased = deps.pool.softwareOf(input.leaseId);
        if (task.type !== leased) throw new DesktopError(`the desktop is leased for ${leased}, the task is a ${task.type} task`, desktop.id, task.id, 'reset', true);
        const cpuBefore = desktop.cpu?.();
        await desktop.reset(task);
        for (const action of input.replay) {
          await desktop.act(action);
          await sleep(deps.settleMs);
          replayed++;
        }
        observeResetCpu(host, kind, cpuBefore, desktop.cpu?.());
        return await capture(host, input.leaseId, input.ref, input.step);
      },
      () => ({ phase: replayed === 0 ? 'reset' : 'replay', replayed, of: input.replay.length }),
    );
    timer();
    metrics.resets.inc({ host: host.id, kind, outcome: 'ok' });
    return observation;
  } catch (err) {
    metrics.resets.inc({ host: host.id, kind, outcome: 'failed' });
    throw failure(host, err, input.leaseId);
  }
}

/** One action performed (or refused by the key table: the step fails, the rollout goes on), the app settled, the screenshot stored. */
async function act(host: Host, input: StepInput): Promise<StepOutcome> {
  const { deps, metrics } = host;
  const started = Date.now();
  const desktop = deps.pool.use(input.leaseId);
  const action = await placed(desktop, input.action);
  try {
    await desktop.act(action);
  } catch (err) {
    if (err instanceof RenderError) {
      metrics.steps.inc({ host: host.id, outcome: 'refused' });
      return { performed: false, error: err.message };
    }
    throw err;
  }
  await sleep(deps.settleMs);
  const actMs = Date.now() - started;
  const observation = await capture(host, input.leaseId, input.ref, input.step);
  metrics.steps.inc({ host: host.id, outcome: 'performed' });
  const completed = action === input.action ? {} : { action };
  return { performed: true, screenshotKey: observation.screenshotKey, actMs, screenshotMs: observation.ms, ...completed };
}

async function performStep(host: Host, input: StepInput): Promise<StepOutcome> {
  try {
    return await withHeartbeat(() => act(host, input));
  } catch (err) {
    host.metrics.steps.inc({ host: host.id, outcome: 'failed' });
    throw failure(host, err, input.leaseId);
  }
}

/** Runs the task's evaluators against the app's real state. */
async function evaluateDesktop(host: Host, input: { leaseId: string; taskKey: string; stop: StopInfo }): Promise<EvaluationResult> {
  try {
    return await withHeartbeat(async () => {
      const task = await host.deps.tasks.read(input.taskKey);
      return host.deps.pool.use(input.leaseId).evaluate(task, input.stop);
    });
  } catch (err) {
    throw failure(host, err, input.leaseId);
  }
}

/**
 * Activities of a vm-host. `leaseDesktop` runs on the shared lease queue (any host may answer);
 * the others run on the host's own queue, with the lease naming the desktop. Screenshots go
 * straight to S3 from here: workflows only ever see their keys.
 */
export function createDesktopActivities(deps: DesktopDeps) {
  const host: Host = { deps, metrics: deps.metrics ?? desktopMetrics(), id: deps.pool.hostId };
  return {
    leaseDesktop: (request: LeaseRequest) => leaseDesktop(host, request),
    resetDesktop: (input: ResetInput) => resetDesktop(host, input),
    performStep: (input: StepInput) => performStep(host, input),
    evaluateDesktop: (input: { leaseId: string; taskKey: string; stop: StopInfo }) => evaluateDesktop(host, input),
    releaseDesktop: async (leaseId: string): Promise<boolean> => deps.pool.release(leaseId),
  };
}

export type DesktopActivities = ReturnType<typeof createDesktopActivities>;
