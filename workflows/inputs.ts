import { ActivityFailure, ApplicationFailure, proxyLocalActivities } from '@temporalio/workflow';
import { FAILURES } from '../core/failures';
import type { RunActivities } from '../activities/runs/activities';

/**
 * Every workflow's first step: a local activity checks the raw input and completes it from the
 * worker's temporal.yaml (config/workflow-inputs.ts). Local, so it costs no server round trip.
 */
export const inputs = proxyLocalActivities<RunActivities>({
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
