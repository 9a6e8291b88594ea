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
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10, nonRetryableErrorTypes: [FAILURES.validation] },
});

/** Run activities: awaiting an existing rollout can take as long as the rollout. */
const runs = proxyActivities<RunActivities>({
  startToCloseTimeout: '3 hours',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute' },
});

const EMPTY: BatchTotals = { started: 0, completed: 0, passed: 0, failed: 0, appNotRunning: 0, unevaluated: 0, errors: 0 };

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

  input = await failOnBadInput(() => inputs.resolveBatchInput(raw, workflowInfo().workflowId));
  tagWorkflow({ software: input.software, stage: input.stage, run: input.run });
  const { settings, concurrency, rolloutsPerRun } = input;
  entries = input.carried?.entries ?? [];
  unsupported = input.carried?.unsupported ?? [];
  let cursor = input.carried?.cursor ?? 0;
  totals = { ...EMPTY, ...input.carried?.totals };

  if (input.carried === undefined) {
    const { software, taskIds, taskSet } = input;
    ({ entries, unsupported } = await failOnBadInput(() => orchestrator.stageTaskSet({ software, taskIds, taskSet })));
  }
  const total = entries.length * input.attempts;

  const record = (result: RolloutResult): void => {
    const notRunning = result.evaluation?.appNotRunning !== undefined;
    totals = {
      ...totals,
      completed: totals.completed + 1,
      passed: totals.passed + (result.passed === true ? 1 : 0),
      failed: totals.failed + (result.stop.reason !== 'ERROR' && result.passed === false && !notRunning ? 1 : 0),
      appNotRunning: totals.appNotRunning + (notRunning ? 1 : 0),
      unevaluated: totals.unevaluated + (result.stop.reason !== 'ERROR' && result.passed === undefined ? 1 : 0),
      errors: totals.errors + (result.stop.reason === 'ERROR' ? 1 : 0),
    };
  };

  const launch = async (item: number): Promise<void> => {
    const entry = entries[item % entries.length]!;
    const attempt = Math.floor(item / entries.length);
    const ref: AttemptRef = { run: input.run, software: entry.software, task: entry.id, attempt };
    const workflowId = rolloutWorkflowId(ref);
    let result: Promise<RolloutResult>;
    try {
      const child = await startChild(rollout, {
        workflowId,
        // A completed rollout is never run again (starting it is refused and its result awaited); one
        // that failed or was terminated (a batch retried after a terminate) runs again.
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
        args: [{ run: input.run, stage: input.stage, task: entry, attempt, settings }],
      });
      result = child.result();
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      result = runs.awaitWorkflow(workflowId) as Promise<RolloutResult>;
    }
    totals = { ...totals, started: totals.started + 1 };
    inFlight.set(
      workflowId,
      result.then(
        (r) => {
          inFlight.delete(workflowId);
          record(r);
        },
        () => {
          // A rollout that failed outright (a bug, or it was terminated) counts as an error; the batch goes on.
          inFlight.delete(workflowId);
          totals = { ...totals, completed: totals.completed + 1, errors: totals.errors + 1 };
        },
      ),
    );
  };

  let startedThisRun = 0;
  while (cursor < total && startedThisRun < rolloutsPerRun) {
    while (inFlight.size >= concurrency) await Promise.race(inFlight.values());
    await launch(cursor++);
    startedThisRun++;
  }
  await Promise.all(inFlight.values());

  if (cursor < total) {
    await continueAsNew<typeof rolloutBatch>({
      ...input,
      settings,
      concurrency,
      rolloutsPerRun,
      carried: { entries: [...entries], unsupported: [...unsupported], cursor, totals, runs: (input.carried?.runs ?? 0) + 1 },
    });
  }
  const summary = await orchestrator.summarizeRun({ run: input.run, software: input.software, stage: input.stage, attempts: input.attempts, unsupported: [...unsupported] });
  return { run: input.run, software: input.software, total, ...totals, unsupported, summaryKey: summary.key, averageAtK: summary.averageAtK, passAtK: summary.passAtK };
}
