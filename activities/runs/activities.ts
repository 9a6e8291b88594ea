import { ApplicationFailure } from '@temporalio/activity';
import { WorkflowFailedError, type Client } from '@temporalio/client';
import type { Config } from '../../config/schema';
import * as inputs from '../../config/workflow-inputs';
import { ValidationError } from '../../core/validation';
import { finalOnBadInput } from '../bad-input';
import { withHeartbeat } from '../heartbeat';
import type { TaskLibrary } from '../tasks/library';

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
      return finalOnBadInput(() => inputs.resolveRolloutInput(config, raw));
    },
    async resolveBatchInput(raw: unknown, workflowId: string): Promise<inputs.BatchInput> {
      return finalOnBadInput(() => inputs.resolveBatchInput(config, raw, workflowId));
    },
    async resolveJudgeInput(raw: unknown): Promise<inputs.JudgeInput> {
      return finalOnBadInput(() => inputs.resolveJudgeInput(config, raw));
    },
    async resolveJudgeRunInput(raw: unknown): Promise<inputs.JudgeRunInput> {
      return finalOnBadInput(() => inputs.resolveJudgeRunInput(config, raw));
    },
    async resolveJudgeEvaluationInput(raw: unknown, workflowId: string): Promise<inputs.JudgeEvaluationInput> {
      return finalOnBadInput(() => inputs.resolveJudgeEvaluationInput(config, raw, workflowId));
    },
    async resolveTaskGenerationInput(raw: unknown, workflowId: string): Promise<inputs.TaskGenerationInput> {
      return finalOnBadInput(() => {
        const input = inputs.resolveTaskGenerationInput(config, raw, workflowId);
        knownSoftware(input.software);
        return input;
      });
    },
    async resolveEvaluationInput(raw: unknown, workflowId: string): Promise<inputs.EvaluationInput> {
      return finalOnBadInput(() => inputs.resolveEvaluationInput(config, raw, workflowId, library.software()));
    },

    async resolveSpecializationInput(raw: unknown, workflowId: string): Promise<inputs.SpecializationInput> {
      return finalOnBadInput(() => {
        const input = inputs.resolveSpecializationInput(config, raw, workflowId);
        knownSoftware(input.software);
        return input;
      });
    },
    async resolveGeneralizationInput(raw: unknown, workflowId: string): Promise<inputs.GeneralizationInput> {
      return finalOnBadInput(() => inputs.resolveGeneralizationInput(config, raw, workflowId, library.software()));
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
