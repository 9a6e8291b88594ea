import { z } from 'zod';
import type { Config } from '../../config/schema';
import { parseOrThrow } from '../../core/validation';
import { runId, software, taskId } from '../fields';
import { runFromWorkflowId } from '../names';

/**
 * The task generation workflow's input: checked, and completed from temporal.yaml, by the
 * workflow's first step and by the CLI before it starts one.
 */

export const taskGenerationRequestSchema = z.strictObject({
  software,
  /** The set's version (a storage key segment); default: from the workflow id. */
  version: runId.optional(),
  /** How many tasks to keep at most; default: taskGeneration.maxTasks. */
  count: z.number().int().min(1, 'expected an integer >= 1').max(10_000).optional(),
  /** The seed tasks shown to the generator; default: every task of the software. */
  seedTaskIds: z.array(taskId).min(1).optional(),
  /**
   * The task sets of the earlier rounds of the same run (a specialization passes them from round 2
   * on): shown to the generator with which tasks the planner solved — read from the judge's
   * verdicts on the set's rollout run `rollouts` — and deduplicated against.
   */
  earlier: z
    .array(
      z.strictObject({
        set: runId,
        round: z.number().int().min(1, 'expected an integer >= 1'),
        rollouts: runId.optional(),
        /** Skip the set when it does not exist (a generalization guessing a specialist's rounds from its name); default: it must exist. */
        ifExists: z.boolean().optional(),
      }),
    )
    .max(100)
    .optional(),
});

export type TaskGenerationRequest = z.input<typeof taskGenerationRequestSchema>;
/** A task set of an earlier round: its version, its round, and the run its tasks were rolled out (and judged) in. */
export interface EarlierTaskSet {
  readonly set: string;
  readonly round: number;
  readonly rollouts?: string;
  readonly ifExists?: boolean;
}
export interface TaskGenerationInput {
  readonly software: string;
  readonly version: string;
  readonly count: number;
  readonly seedTaskIds?: readonly string[];
  readonly earlier?: readonly EarlierTaskSet[];
  readonly tasksPerRequest: number;
  readonly maxRequests: number;
  readonly similarityThreshold: number;
  readonly maxSteps: number;
}

export function resolveTaskGenerationInput(config: Config, raw: unknown, workflowId: string): TaskGenerationInput {
  const request = parseOrThrow(taskGenerationRequestSchema, raw, 'task generation input');
  const { tasksPerRequest, maxRequests, similarityThreshold, maxSteps, maxTasks } = config.taskGeneration;
  return {
    software: request.software,
    version: request.version ?? runFromWorkflowId(workflowId),
    count: request.count ?? maxTasks,
    ...(request.seedTaskIds === undefined ? {} : { seedTaskIds: request.seedTaskIds }),
    ...(request.earlier === undefined || request.earlier.length === 0 ? {} : { earlier: request.earlier }),
    tasksPerRequest,
    maxRequests,
    similarityThreshold,
    maxSteps,
  };
}
