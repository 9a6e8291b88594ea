import { ActivityFailure, ApplicationFailure, proxyLocalActivities } from '@temporalio/workflow';
import { FAILURES } from '../core/failures';
import type { InputActivities } from './input-activities';

/**
 * Every local activity retries through a workflow timer, never a backoff inside the worker: the
 * SDK's core (1.24) keeps a failed attempt's start-to-close timer running across an in-worker
 * retry, and when that timer fires after the worker has shut down it panics ("receive half not
 * dropped", local_activities.rs:997) — a test's worker stopped after a model call was retried
 * printed it minutes later, in whatever test ran then. A retry through a timer also shows in the
 * workflow's history and survives a worker crash.
 */
export const RETRY_THROUGH_TIMERS = { localRetryThreshold: 0 } as const;

/**
 * Every workflow's first step: a local activity checks the raw input and completes it from the
 * worker's temporal.yaml (workflows/input-activities.ts, by the workflow family's contract.ts). Local, so it costs no server round trip.
 */
export const inputs = proxyLocalActivities<InputActivities>({
  ...RETRY_THROUGH_TIMERS,
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: [FAILURES.validation] },
});

/**
 * Runs `step`; a ValidationError from it ends the workflow at once, non-retryable, with the
 * validator's own words (which field, what was expected) rather than "activity failed".
 */
export async function failOnBadInput<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.type === FAILURES.validation) {
      throw ApplicationFailure.create({ message: cause.message, type: FAILURES.validation, nonRetryable: true, details: cause.details ?? [] });
    }
    throw err;
  }
}
