import { z } from 'zod';
import { hostCapacity, type Config } from '../../config/schema';
import { parseOrThrow } from '../../core/validation';
import { attempts, plannerCheckpoint, runId, software, taskId } from '../fields';
import { runFromWorkflowId } from '../names';

/**
 * The rollout and batch workflows' inputs: one zod schema each, its defaults taken from the loaded
 * temporal.yaml, its types inferred from it. The workflow's first step (workflows/inputs.ts) and
 * the CLI before it starts one check a raw input with them.
 */

/** The settings of temporal.yaml a rollout needs; the starter reads the file, the workflow cannot. */
const rolloutSettingsSchema = z.strictObject({
  leaseQueue: z.string().min(1),
  resume: z.enum(['replay', 'restart']),
  heartbeatTimeoutSeconds: z.number().positive(),
  hostScheduleToStartSeconds: z.number().positive(),
  maxMalformedReplies: z.number().int().min(0),
  /** Host losses a rollout survives before it ends with ERROR. */
  maxResumes: z.number().int().min(0),
  /** Tries of one model decision before the rollout ends with ERROR. */
  modelAttempts: z.number().int().min(1),
  /** The planner model to ask for instead of the endpoint's (a checkpoint under evaluation). */
  plannerModel: z.string().min(1).optional(),
});

export type RolloutSettings = z.output<typeof rolloutSettingsSchema>;

export function rolloutSettings(config: Config): RolloutSettings {
  return {
    leaseQueue: config.taskQueues.desktopLeases,
    resume: config.rollouts.resume,
    heartbeatTimeoutSeconds: config.rollouts.heartbeatTimeoutSeconds,
    hostScheduleToStartSeconds: config.rollouts.hostScheduleToStartSeconds,
    maxMalformedReplies: config.rollouts.maxMalformedReplies,
    maxResumes: config.rollouts.maxResumes,
    modelAttempts: config.rollouts.modelAttempts,
  };
}

/** Every desktop of every host: the most rollouts that can act at once. */
export const desktopCapacity = (config: Config): number => config.hosts.reduce((sum, host) => sum + hostCapacity(host), 0);

const taskEntrySchema = z.strictObject({
  id: taskId,
  software,
  key: z.string().min(1),
  maxSteps: z.number().int().min(1),
  evaluated: z.boolean(),
});

export const rolloutInputSchema = (config: Config) =>
  z.strictObject({
    run: runId,
    /** e.g. 'specialization', 'evaluation', 'demo': becomes the CodaStage search attribute. */
    stage: z.string().min(1),
    task: taskEntrySchema,
    attempt: z.number().int().min(0),
    settings: rolloutSettingsSchema.default(rolloutSettings(config)),
  });

export type RolloutRequest = z.input<ReturnType<typeof rolloutInputSchema>>;
export type RolloutInput = z.output<ReturnType<typeof rolloutInputSchema>>;

export const resolveRolloutInput = (config: Config, raw: unknown): RolloutInput => parseOrThrow(rolloutInputSchema(config), raw, 'rollout input');

const count = z.number().int().min(0);
const batchTotalsSchema = z.strictObject({
  started: count,
  completed: count,
  /** Evaluators passed. */
  passed: count,
  /** Ended normally but the evaluators failed, the app running. */
  failed: count,
  /**
   * Ended normally but the app was not running at evaluation: not solved either, counted apart
   * (docs/scoring.md). Absent in a batch carried over by a version that did not count it.
   */
  appNotRunning: count.default(0),
  /** Ended normally on a task without evaluators (generated): the judge says whether it passed. */
  unevaluated: count,
  /** Ended in ERROR (model endpoint down, desktop lost too often, ...). */
  errors: count,
});

export type BatchTotals = z.output<typeof batchTotalsSchema>;

/**
 * A batch: `run` defaults to a run named after the workflow id (scheduled runs), `concurrency` to
 * every desktop of every host up to limits.maxConcurrentRollouts, `settings` to temporal.yaml's
 * rollout settings (asking for the planner's model when a planner is named).
 */
export function batchInputSchema(config: Config, workflowId: string) {
  const desktops = Math.max(1, Math.min(config.limits.maxConcurrentRollouts, desktopCapacity(config)));
  return z
    .strictObject({
      /** Run id (a storage key segment). */
      run: runId.default(runFromWorkflowId(workflowId)),
      stage: z.string().min(1).default('evaluation'),
      software,
      /** Task ids to run; all tasks of the set when omitted. */
      taskIds: z.array(taskId).min(1, 'expected at least one task id').optional(),
      /** A generated task set (its version) instead of the real ScienceBoard tasks. */
      taskSet: runId.optional(),
      /** Attempts per task (k of Average@k / Pass@k). */
      attempts: attempts.default(1),
      /** The planner checkpoint to run (default: the planner endpoint's model). */
      planner: plannerCheckpoint.optional(),
      /** Rollouts in flight at once. */
      concurrency: z.number().int().min(1).max(1000).default(desktops),
      /** After starting this many rollouts, drain and continue as new (keeps history small). */
      rolloutsPerRun: z.number().int().min(1).max(1000).optional(),
      settings: rolloutSettingsSchema.default(rolloutSettings(config)),
      /** Carried across continue-as-new; absent on the first run. */
      carried: z
        .strictObject({
          entries: z.array(taskEntrySchema),
          unsupported: z.array(z.strictObject({ software: z.string(), taskId: z.string(), reason: z.string() })),
          cursor: count,
          totals: batchTotalsSchema,
          runs: count,
        })
        .optional(),
    })
    .transform(({ rolloutsPerRun, settings, ...input }) => ({
      ...input,
      // A run drains before it continues as new: it must be able to start at least `concurrency` rollouts.
      rolloutsPerRun: rolloutsPerRun ?? Math.max(config.limits.rolloutsPerBatchRun, input.concurrency),
      settings: input.planner === undefined ? settings : { ...settings, plannerModel: input.planner.model },
    }));
}

export type BatchRequest = z.input<ReturnType<typeof batchInputSchema>>;
export type BatchInput = z.output<ReturnType<typeof batchInputSchema>>;

export const resolveBatchInput = (config: Config, raw: unknown, workflowId: string): BatchInput => parseOrThrow(batchInputSchema(config, workflowId), raw, 'batch input');
