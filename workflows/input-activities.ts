import type { Config } from '../config/schema';
import { ValidationError } from '../core/validation';
import { finalOnBadInput } from '../activities/bad-input';
import type { TaskLibrary } from '../activities/tasks/library';
import { resolveEvaluationInput, type EvaluationInput } from './evaluation/contract';
import { resolveJudgeEvaluationInput, resolveJudgeInput, resolveJudgeRunInput, type JudgeEvaluationInput, type JudgeInput, type JudgeRunInput } from './judging/contract';
import { resolveBatchInput, resolveRolloutInput, type BatchInput, type RolloutInput } from './rollout/contract';
import { resolveTaskGenerationInput, type TaskGenerationInput } from './tasks/contract';
import { resolveGeneralizationInput, resolveSpecializationInput, type GeneralizationInput, type SpecializationInput } from './training/contract';

/**
 * Every workflow's first step, run as a local activity on the orchestrator worker (never bundled
 * into workflow code: the contracts use zod): it checks the raw input a starter sent (the CLI, the
 * Temporal CLI, a schedule, a parent workflow) against the workflow's contract and completes it
 * from this worker's temporal.yaml.
 */
export function createInputActivities(config: Config, library: TaskLibrary) {
  const knownSoftware = (software: string, field = 'software'): void => {
    const known = library.software();
    if (!known.includes(software)) throw new ValidationError('input', [`${field}: unknown software "${software}": expected one of ${known.join(', ')}`]);
  };
  return {
    async resolveRolloutInput(raw: unknown): Promise<RolloutInput> {
      return finalOnBadInput(() => resolveRolloutInput(config, raw));
    },
    async resolveBatchInput(raw: unknown, workflowId: string): Promise<BatchInput> {
      return finalOnBadInput(() => resolveBatchInput(config, raw, workflowId));
    },
    async resolveJudgeInput(raw: unknown): Promise<JudgeInput> {
      return finalOnBadInput(() => resolveJudgeInput(config, raw));
    },
    async resolveJudgeRunInput(raw: unknown): Promise<JudgeRunInput> {
      return finalOnBadInput(() => resolveJudgeRunInput(config, raw));
    },
    async resolveJudgeEvaluationInput(raw: unknown, workflowId: string): Promise<JudgeEvaluationInput> {
      return finalOnBadInput(() => resolveJudgeEvaluationInput(config, raw, workflowId));
    },
    async resolveTaskGenerationInput(raw: unknown, workflowId: string): Promise<TaskGenerationInput> {
      return finalOnBadInput(() => {
        const input = resolveTaskGenerationInput(config, raw, workflowId);
        knownSoftware(input.software);
        return input;
      });
    },
    async resolveEvaluationInput(raw: unknown, workflowId: string): Promise<EvaluationInput> {
      return finalOnBadInput(() => resolveEvaluationInput(config, raw, workflowId, library.software()));
    },
    async resolveSpecializationInput(raw: unknown, workflowId: string): Promise<SpecializationInput> {
      return finalOnBadInput(() => {
        const input = resolveSpecializationInput(config, raw, workflowId);
        knownSoftware(input.software);
        return input;
      });
    },
    async resolveGeneralizationInput(raw: unknown, workflowId: string): Promise<GeneralizationInput> {
      return finalOnBadInput(() => resolveGeneralizationInput(config, raw, workflowId, library.software()));
    },
  };
}

export type InputActivities = ReturnType<typeof createInputActivities>;
