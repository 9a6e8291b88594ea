import { ActivityFailure, ChildWorkflowFailure } from '@temporalio/workflow';

/** The innermost message of a failure that came through activities or child workflows: what people need to read. */
export function describeError(err: unknown): string {
  let current: unknown = err;
  while ((current instanceof ActivityFailure || current instanceof ChildWorkflowFailure) && current.cause !== undefined) current = current.cause;
  return current instanceof Error ? current.message : String(current);
}
