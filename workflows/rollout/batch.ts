import {
  continueAsNew,
  defineQuery,
  proxyActivities,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import type { BatchInput, BatchTotals } from './contract';
import type { UnsupportedTask } from '../../core/report';
import { FAILURES } from '../../core/failures';
import type { AttemptRef } from '../../core/keys';
import type { RunActivities } from '../../activities/runs/activities';
import type { TrajectoryActivities } from '../../activities/storage/trajectory';
import type { TaskActivities } from '../../activities/tasks/activities';
import { failOnBadInput, inputs } from '../inputs';
import { rolloutWorkflowId } from '../names';
import { rollout } from './rollout';
import type { RolloutResult, TaskEntry } from '../../core/rollout-types';
import { tagWorkflow } from '../search-attributes';
import { STORAGE_ACTIVITY_RETRY } from '../retry';

export type { BatchInput, BatchTotals } from './contract';

export interface BatchProgress extends BatchTotals {
  readonly run: string;
  readonly software: string;
  readonly total: number;
  /** Tasks no host of the deployment can run: not run, not counted. */
  readonly unsupported: readonly UnsupportedTask[];
  readonly inFlight: readonly string[];
  /** How many times the batch continued as new so far. */
  readonly continuedAsNew: number;
}

export interface BatchResult extends BatchTotals {
  readonly run: string;
  readonly software: string;
  readonly total: number;
  readonly unsupported: readonly UnsupportedTask[];
  readonly summaryKey: string;
  /** Over the tasks with checks; 0 when the set has none (generated tasks are judged instead). */
  readonly averageAtK: number;
  readonly passAtK: number;
}

export const batchProgress = defineQuery<BatchProgress>('progress');

const orchestrator = proxyActivities<TaskActivities & TrajectoryActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { ...STORAGE_ACTIVITY_RETRY, nonRetryableErrorTypes: [FAILURES.validation] },
});

/** Run activities: awaiting an existing rollout can take as long as the rollout. */
const runs = proxyActivities<RunActivities>({
  startToCloseTimeout: '3 hours',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute' },
});

const EMPTY: BatchTotals = { started: 0, completed: 0, passed: 0, failed: 0, appNotRunning: 0, unevaluated: 0, errors: 0 };

/** The totals with one more rollout finished: passed, failed, app not running, unevaluated (generated) or ERROR. */
function counted(totals: BatchTotals, result: RolloutResult): BatchTotals {
  const notRunning = result.evaluation?.appNotRunning !== undefined;
  const ended = result.stop.reason !== 'ERROR';
  return {
    ...totals,
    completed: totals.completed + 1,
    passed: totals.passed + (result.passed === true ? 1 : 0),
    failed: totals.failed + (ended && result.passed === false && !notRunning ? 1 : 0),
    appNotRunning: totals.appNotRunning + (notRunning ? 1 : 0),
    unevaluated: totals.unevaluated + (ended && result.passed === undefined ? 1 : 0),
    errors: totals.errors + (ended ? 0 : 1),
  };
}

/** Starts one attempt's rollout as a child workflow, or awaits the one that exists under its id. */
async function startRollout(input: BatchInput, entry: TaskEntry, attempt: number): Promise<{ workflowId: string; result: Promise<RolloutResult> }> {
  const ref: AttemptRef = { run: input.run, software: entry.software, task: entry.id, attempt };
  const workflowId = rolloutWorkflowId(ref);
  try {
    const child = await startChild(rollout, {
      workflowId,
      // A completed rollout is never run again (starting it is refused and its result awaited); one
      // that failed or was terminated (a batch retried after a terminate) runs again.
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
      args: [{ run: input.run, stage: input.stage, task: entry, attempt, settings: input.settings }],
    });
    return { workflowId, result: child.result() };
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    return { workflowId, result: runs.awaitWorkflow(workflowId) as Promise<RolloutResult> };
  }
}

/**
 * Fans out rollouts of a task set (tasks x attempts), at most `concurrency` at a time, one child
 * workflow per attempt with a deterministic id (a rollout that exists is awaited; a completed one
 * is never run twice). Attempts go round-robin over tasks so early results cover every task. Every
 * `rolloutsPerRun` rollouts it drains and continues as new with its cursor, so a large set stays
 * far below the 2,000-pending-children and history limits.
 */
export async function rolloutBatch(raw: unknown): Promise<BatchResult> {
  let input: BatchInput | undefined;
  let entries: readonly TaskEntry[] = [];
  let unsupported: readonly UnsupportedTask[] = [];
  let totals: BatchTotals = EMPTY;
  const inFlight = new Map<string, Promise<void>>();
  // Registered before anything is awaited, so a query right after the start is answered.
  setHandler(batchProgress, () => ({
    run: input?.run ?? '',
    software: input?.software ?? '',
    total: entries.length * (input?.attempts ?? 0),
    ...totals,
    unsupported,
    inFlight: [...inFlight.keys()],
    continuedAsNew: input?.carried?.runs ?? 0,
  }));

  const resolved = await failOnBadInput(() => inputs.resolveBatchInput(raw, workflowInfo().workflowId));
  input = resolved;
  const { run, software, stage, attempts, carried } = resolved;
  tagWorkflow({ software, stage, run });
  entries = carried?.entries ?? [];
  unsupported = carried?.unsupported ?? [];
  let cursor = carried?.cursor ?? 0;
  totals = { ...EMPTY, ...carried?.totals };
  if (carried === undefined) {
    ({ entries, unsupported } = await failOnBadInput(() => orchestrator.stageTaskSet({ software, taskIds: resolved.taskIds, taskSet: resolved.taskSet })));
  }
  const total = entries.length * attempts;

  const launch = async (item: number): Promise<void> => {
    const { workflowId, result } = await startRollout(resolved, entries[item % entries.length]!, Math.floor(item / entries.length));
    totals = { ...totals, started: totals.started + 1 };
    const done = (next: BatchTotals): void => {
      inFlight.delete(workflowId);
      totals = next;
    };
    // A rollout that failed outright (a bug, or it was terminated) counts as an error; the batch goes on.
    inFlight.set(workflowId, result.then((r) => done(counted(totals, r)), () => done({ ...totals, completed: totals.completed + 1, errors: totals.errors + 1 })));
  };

  let startedThisRun = 0;
  while (cursor < total && startedThisRun < resolved.rolloutsPerRun) {
    while (inFlight.size >= resolved.concurrency) await Promise.race(inFlight.values());
    await launch(cursor++);
    startedThisRun++;
  }
  await Promise.all(inFlight.values());

  if (cursor < total) {
    await continueAsNew<typeof rolloutBatch>({ ...resolved, carried: { entries: [...entries], unsupported: [...unsupported], cursor, totals, runs: (carried?.runs ?? 0) + 1 } });
  }
  const summary = await orchestrator.summarizeRun({ run, software, stage, attempts, unsupported: [...unsupported] });
  return { run, software, total, ...totals, unsupported, summaryKey: summary.key, averageAtK: summary.averageAtK, passAtK: summary.passAtK };
}
