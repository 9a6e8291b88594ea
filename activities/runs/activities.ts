import { ApplicationFailure } from '@temporalio/activity';
import { WorkflowFailedError, type Client } from '@temporalio/client';
import type { Config } from '../../config/schema';
import * as inputs from '../../config/workflow-inputs';
import { FAILURES } from '../../core/failures';
import { ValidationError } from '../../core/validation';
import { withHeartbeat } from '../heartbeat';
import type { TaskLibrary } from '../tasks/library';

/** Runs `resolve`; bad input becomes a non-retryable ValidationError that names each bad field. */
function validated<T>(resolve: () => T): T {
  try {
    return resolve();
  } catch (err) {
    if (err instanceof ValidationError) throw ApplicationFailure.nonRetryable(err.message, FAILURES.validation, err.problems);
    throw err;
  }
}

/**
 * Activities about runs (orchestrator queue). The `resolve*` ones are the first step of every
 * workflow, run as local activities: they check the raw input a starter sent (the CLI, the
 * Temporal CLI, a schedule, a parent workflow) and complete it from this worker's temporal.yaml
 * (config/workflow-inputs.ts). The others await workflows that already exist.
 */
export function createRunActivities(client: Client, config: Config, library: TaskLibrary) {
  const knownSoftware = (software: string, field = 'software'): void => {
    const known = library.software();
    if (!known.includes(software)) throw new ValidationError('input', [`${field}: unknown software "${software}": expected one of ${known.join(', ')}`]);
  };
  return {
    async resolveRolloutInput(raw: unknown): Promise<inputs.RolloutInput> {
      return validated(() => inputs.resolveRolloutInput(config, raw));
    },
    async resolveBatchInput(raw: unknown, workflowId: string): Promise<inputs.BatchInput> {
      return validated(() => inputs.resolveBatchInput(config, raw, workflowId));
    },
    async resolveJudgeInput(raw: unknown): Promise<inputs.JudgeInput> {
      return validated(() => inputs.resolveJudgeInput(config, raw));
    },
    async resolveJudgeRunInput(raw: unknown): Promise<inputs.JudgeRunInput> {
      return validated(() => inputs.resolveJudgeRunInput(config, raw));
    },
    async resolveJudgeEvaluationInput(raw: unknown, workflowId: string): Promise<inputs.JudgeEvaluationInput> {
      return validated(() => inputs.resolveJudgeEvaluationInput(config, raw, workflowId));
    },
    async resolveTaskGenerationInput(raw: unknown, workflowId: string): Promise<inputs.TaskGenerationInput> {
      return validated(() => {
        const input = inputs.resolveTaskGenerationInput(config, raw, workflowId);
        knownSoftware(input.software);
        return input;
      });
    },
    async resolveEvaluationInput(raw: unknown, workflowId: string): Promise<inputs.EvaluationInput> {
      return validated(() => inputs.resolveEvaluationInput(config, raw, workflowId, library.software()));
    },

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
