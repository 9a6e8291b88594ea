import { ApplicationFailure } from '@temporalio/activity';
import { WorkflowFailedError, type Client } from '@temporalio/client';
import { withHeartbeat } from '../heartbeat';

/**
 * Activities about runs (orchestrator queue): they await workflows that already exist. (Every
 * workflow's first step, checking its input, is workflows/input-activities.ts.)
 */
export function createRunActivities(client: Client) {
  return {
    /**
     * The result of a workflow that already exists (a batch never starts a rollout twice, nor a
     * judge). If it failed, was terminated or canceled, that is final: the caller counts it.
     */
    async awaitWorkflow(workflowId: string): Promise<unknown> {
      try {
        return await withHeartbeat(() => client.workflow.getHandle(workflowId).result(), () => ({ workflowId }), 20_000);
      } catch (err) {
        if (err instanceof WorkflowFailedError) throw ApplicationFailure.nonRetryable(`${workflowId} did not complete: ${err.cause?.message ?? err.message}`, 'AwaitedWorkflowFailed');
        throw err;
      }
    },
  };
}

export type RunActivities = ReturnType<typeof createRunActivities>;
