import assert from 'node:assert/strict';
import { ValidationError } from '../../core/validation';

/** The problems of the ValidationError `run` throws, its message matching `message` when given; the test fails when it throws none or another error. */
export function validationProblems(run: () => unknown, message?: RegExp): string[] {
  try {
    run();
  } catch (err) {
    assert.ok(err instanceof ValidationError, `expected a ValidationError, got ${String(err)}`);
    if (message !== undefined) assert.match(err.message, message);
    return err.problems;
  }
  assert.fail('expected a ValidationError: nothing was refused');
}
