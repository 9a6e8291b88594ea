import { z } from 'zod';
import { hostCapacity, type Config } from '../../config/schema';
import { parseOrThrow } from '../../core/validation';
import type { TaskEntry } from '../../core/rollout-types';
import { attempts, plannerCheckpoint, runId, software, taskId } from '../fields';
import { runFromWorkflowId } from '../names';

/**
 * The rollout and batch workflows' inputs: checked, and completed from temporal.yaml, by the
 * workflow's first step (workflows/inputs.ts) and by the CLI before it starts one.
 */


/** The settings of temporal.yaml a rollout needs; the starter reads the file, the workflow cannot. */
export interface RolloutSettings {
  readonly leaseQueue: string;
  readonly resume: 'replay' | 'restart';
  readonly heartbeatTimeoutSeconds: number;
  readonly hostScheduleToStartSeconds: number;
  readonly maxMalformedReplies: number;
  /** Host losses a rollout survives before it ends with ERROR. */
  readonly maxResumes: number;
  /** Tries of one model decision before the rollout ends with ERROR. */
  readonly modelAttempts: number;
  /** The planner model to ask for instead of the endpoint's (a checkpoint under evaluation). */
  readonly plannerModel?: string;
}

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

const rolloutSettingsSchema = z.strictObject({
  leaseQueue: z.string().min(1),
  resume: z.enum(['replay', 'restart']),
  heartbeatTimeoutSeconds: z.number().positive(),
  hostScheduleToStartSeconds: z.number().positive(),
  maxMalformedReplies: z.number().int().min(0),
  maxResumes: z.number().int().min(0),
  modelAttempts: z.number().int().min(1),
  plannerModel: z.string().min(1).optional(),
});

const taskEntrySchema = z.strictObject({
  id: taskId,
  software,
  key: z.string().min(1),
  maxSteps: z.number().int().min(1),
  evaluated: z.boolean(),
});

export const rolloutRequestSchema = z.strictObject({
  run: runId,
  stage: z.string().min(1),
  task: taskEntrySchema,
  attempt: z.number().int().min(0),
  settings: rolloutSettingsSchema.optional(),
});

export type RolloutRequest = z.input<typeof rolloutRequestSchema>;
export interface RolloutInput {
  readonly run: string;
  /** e.g. 'specialization', 'evaluation', 'demo': becomes the CodaStage search attribute. */
  readonly stage: string;
  readonly task: TaskEntry;
  readonly attempt: number;
  readonly settings: RolloutSettings;
}

export function resolveRolloutInput(config: Config, raw: unknown): RolloutInput {
  const request = parseOrThrow(rolloutRequestSchema, raw, 'rollout input');
  return { ...request, settings: request.settings ?? rolloutSettings(config) };
}

export interface BatchTotals {
  readonly started: number;
  readonly completed: number;
  /** Evaluators passed. */
  readonly passed: number;
  /** Ended normally but the evaluators failed, the app running. */
  readonly failed: number;
  /** Ended normally but the app was not running at evaluation: not solved either, counted apart (docs/scoring.md). */
  readonly appNotRunning: number;
  /** Ended normally on a task without evaluators (generated): the judge says whether it passed. */
  readonly unevaluated: number;
  /** Ended in ERROR (model endpoint down, desktop lost too often, ...). */
  readonly errors: number;
}

export const batchRequestSchema = z.strictObject({
  /** Run id (a storage key segment); default: derived from the workflow id, as for scheduled runs. */
  run: runId.optional(),
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
  /** Rollouts in flight at once. Default: every desktop of every host, up to limits.maxConcurrentRollouts. */
  concurrency: z.number().int().min(1).max(1000).optional(),
  /** After starting this many rollouts, drain and continue as new (keeps history small). */
  rolloutsPerRun: z.number().int().min(1).max(1000).optional(),
  settings: rolloutSettingsSchema.optional(),
  /** Carried across continue-as-new; absent on the first run. */
  carried: z
    .strictObject({
      entries: z.array(taskEntrySchema),
      unsupported: z.array(z.strictObject({ software: z.string(), taskId: z.string(), reason: z.string() })),
      cursor: z.number().int().min(0),
      totals: z.strictObject({
        started: z.number().int().min(0),
        completed: z.number().int().min(0),
        passed: z.number().int().min(0),
        failed: z.number().int().min(0),
        // Absent in a batch carried over by a version that did not count it.
        appNotRunning: z.number().int().min(0).default(0),
        unevaluated: z.number().int().min(0),
        errors: z.number().int().min(0),
      }),
      runs: z.number().int().min(0),
    })
    .optional(),
});

export type BatchRequest = z.input<typeof batchRequestSchema>;
export type BatchInput = Omit<z.output<typeof batchRequestSchema>, 'run' | 'concurrency' | 'rolloutsPerRun' | 'settings'> & {
  readonly run: string;
  readonly concurrency: number;
  readonly rolloutsPerRun: number;
  readonly settings: RolloutSettings;
};

export function resolveBatchInput(config: Config, raw: unknown, workflowId: string): BatchInput {
  const request = parseOrThrow(batchRequestSchema, raw, 'batch input');
  const settings = request.settings ?? rolloutSettings(config);
  const concurrency = request.concurrency ?? Math.max(1, Math.min(config.limits.maxConcurrentRollouts, desktopCapacity(config)));
  return {
    ...request,
    run: request.run ?? runFromWorkflowId(workflowId),
    concurrency,
    // A run drains before it continues as new: it must be able to start at least `concurrency` rollouts.
    rolloutsPerRun: request.rolloutsPerRun ?? Math.max(config.limits.rolloutsPerBatchRun, concurrency),
    settings: request.planner === undefined ? settings : { ...settings, plannerModel: request.planner.model },
  };
}
