import { ApplicationFailure } from '@temporalio/activity';
import { FAILURES } from '../core/failures';
import { ValidationError } from '../core/validation';

/**
 * Runs an activity's work; bad input (a ValidationError) becomes a non-retryable failure that
 * names each bad field, since retrying cannot fix a task file, a misspelt name or a missing set.
 */
export async function finalOnBadInput<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ValidationError) throw ApplicationFailure.nonRetryable(err.message, FAILURES.validation, err.problems);
    throw err;
  }
}
