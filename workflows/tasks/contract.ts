import { z } from 'zod';
import type { Config } from '../../config/schema';
import { parseOrThrow } from '../../core/validation';
import { runId, software, taskId } from '../fields';
import { runFromWorkflowId } from '../names';

/**
 * The task generation workflow's input: one zod schema, its defaults from the loaded temporal.yaml,
 * its types inferred; the workflow's first step and the CLI before it starts one check with it.
 */

const earlierTaskSet = z.strictObject({
  set: runId,
  round: z.number().int().min(1, 'expected an integer >= 1'),
  /** The run its tasks were rolled out (and judged) in. */
  rollouts: runId.optional(),
  /** Skip the set when it does not exist (a generalization guessing a specialist's rounds from its name); default: it must exist. */
  ifExists: z.boolean().optional(),
});

/** A task set of an earlier round: its version, its round, and the run its tasks were rolled out (and judged) in. */
export type EarlierTaskSet = z.output<typeof earlierTaskSet>;

/** Task generation: the generator's settings are temporal.yaml's taskGeneration section, not the starter's. */
export function taskGenerationInputSchema(config: Config, workflowId: string) {
  const { tasksPerRequest, maxRequests, similarityThreshold, maxSteps, maxTasks } = config.taskGeneration;
  return z
    .strictObject({
      software,
      /** The set's version (a storage key segment). */
      version: runId.default(runFromWorkflowId(workflowId)),
      /** How many tasks to keep at most. */
      count: z.number().int().min(1, 'expected an integer >= 1').max(10_000).default(maxTasks),
      /** The seed tasks shown to the generator; default: every task of the software. */
      seedTaskIds: z.array(taskId).min(1).optional(),
      /**
       * The task sets of the earlier rounds of the same run (a specialization passes them from round 2
       * on): shown to the generator with which tasks the planner solved — read from the judge's
       * verdicts on the set's rollout run `rollouts` — and deduplicated against.
       */
      earlier: z.array(earlierTaskSet).max(100).optional(),
    })
    .transform(({ earlier, ...request }) => ({
      ...request,
      ...(earlier === undefined || earlier.length === 0 ? {} : { earlier }),
      tasksPerRequest,
      maxRequests,
      similarityThreshold,
      maxSteps,
    }));
}

export type TaskGenerationRequest = z.input<ReturnType<typeof taskGenerationInputSchema>>;
export type TaskGenerationInput = z.output<ReturnType<typeof taskGenerationInputSchema>>;

export const resolveTaskGenerationInput = (config: Config, raw: unknown, workflowId: string): TaskGenerationInput =>
  parseOrThrow(taskGenerationInputSchema(config, workflowId), raw, 'task generation input');
