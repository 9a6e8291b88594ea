import { z } from 'zod';
import { judgePlanConfigSchema, type Config, type JudgePlanConfig } from '../../config/schema';
import { judgeMeasurementSchema } from '../../core/judge/measurement';
import { parseOrThrow, ValidationError } from '../../core/validation';
import { attempts, plannerCheckpoint, runId, software, taskId } from '../fields';
import { judgePlanOf } from '../judging/contract';
import { baseEvaluationRun, runFromWorkflowId } from '../names';

/**
 * The training workflows' inputs, specialization's state carried from round to round with them:
 * checked, and completed from temporal.yaml, by the workflow's first step and by the CLI before it
 * starts one.
 */

const parseError = (source: string, problems: string[]): ValidationError => new ValidationError(source, problems);


/** The planner a round rolls out with: its name in reports, its served model name, its checkpoint (none: the base). */
const currentPlanner = plannerCheckpoint.extend({ checkpointKey: z.string().min(1).optional() });
export type CurrentPlanner = z.output<typeof currentPlanner>;

const roundRecord = z.strictObject({
  round: z.number().int().min(1),
  checkpoint: z.string().min(1),
  tasks: z.number().int().min(0),
  rollouts: z.number().int().min(0),
  judged: z.number().int().min(0),
  positiveSteps: z.number().int().min(0),
  samples: z.number().int().min(0),
  /** The round's rollout runs: the dataset of every later round includes their approved steps. */
  sources: z.array(runId),
  /** Evaluation of the round's checkpoint on the real tasks, in percent. */
  averageAtK: z.number(),
  passAtK: z.number(),
  /** Average@k's 95% interval, in percent (absent in rounds recorded before it existed). */
  averageInterval: z.strictObject({ lower: z.number(), upper: z.number() }).optional(),
  /** The base planner's Average@k on the same tasks, in percent (its rollouts are shared by every round). */
  baseAverageAtK: z.number().optional(),
  /** Average@k minus the base's over the same tasks, in points: the paired comparison of the round's report. */
  vsBase: z
    .strictObject({ difference: z.number(), lower: z.number(), upper: z.number(), pValue: z.number(), withinNoise: z.boolean() })
    .optional(),
  /** Attempts of the round's evaluation not solved because the app was not running at evaluation (absent in older records). */
  appNotRunning: z.number().int().min(0).optional(),
  reportKey: z.string().min(1),
  /**
   * The planner that rolled out the round's generated tasks ('base' or a round's checkpoint name): the
   * previous round's checkpoint at maxStaleness 0, the one before it at 1 (absent in older records).
   */
  rolloutPlanner: z.string().min(1).optional(),
  /** Why training was skipped this round (no positive step), when it was. */
  skipped: z.string().optional(),
  /** The judge's precision and recall this round (absent in rounds recorded before it was measured). */
  judge: judgeMeasurementSchema.optional(),
});

export type RoundRecord = z.output<typeof roundRecord>;

/**
 * A round's collection stages done (task generation, rollouts, judging, the judge measured): with
 * maxStaleness 1 the round before it carries this across continue-as-new, so its round trains on it
 * without generating, rolling out or judging again.
 */
const collectedRound = z.strictObject({
  round: z.number().int().min(1),
  /** The planner that rolled out the generated tasks (the newest served checkpoint when they started). */
  planner: currentPlanner,
  tasks: z.number().int().min(0),
  rollouts: z.number().int().min(0),
  judged: z.number().int().min(0),
  /** Its rollout runs whose approved steps are trained on (the record's sources). */
  trainedOn: z.array(runId),
  /** The real tasks' batch the judge was measured on, and its rollouts and judged counts. */
  real: z.strictObject({ run: runId, rollouts: z.number().int().min(0), judged: z.number().int().min(0) }),
  judge: judgeMeasurementSchema,
});

export type CollectedRound = z.output<typeof collectedRound>;

export const specializationRequestSchema = z.strictObject({
  /** The software to specialize a planner on. */
  software,
  /** Run id (every round's runs, task sets and checkpoints are named after it); default: from the workflow id. */
  run: runId.optional(),
  rounds: z.number().int().min(1, 'expected an integer >= 1').max(100).optional(),
  tasksPerRound: z.number().int().min(1, 'expected an integer >= 1').max(10_000).optional(),
  attempts: attempts.optional(),
  /** Also train on the rollouts of the real tasks (default: temporal.yaml's, off: they are the evaluation set). */
  includeSeeds: z.boolean().optional(),
  /** Minimum precision of the judge on the real tasks for a round to train on its data; 0: none. */
  judgePrecisionFloor: z.number().min(0, 'expected a precision from 0 to 1').max(1, 'expected a precision from 0 to 1').optional(),
  evaluationAttempts: attempts.optional(),
  /** The real tasks each round is evaluated on, whose rollouts measure the judge (default: all of the software's). */
  evaluationTaskIds: z.array(taskId).min(1, 'expected at least one task id').optional(),
  /**
   * The run of the base planner's rollouts every round's evaluation compares with (default:
   * `<run>-base-eval`): rolled out in the first round, reused by the later ones. Runs that share it
   * must evaluate the same tasks with the same k.
   */
  baseEvaluationRun: runId.optional(),
  /** The judge plan of this run (default: temporal.yaml's judging.plan). */
  judging: judgePlanConfigSchema.optional(),
  /**
   * How many checkpoints the planner rolling out a round's tasks may lag the round's parent
   * (default: temporal.yaml's): 0 runs the stages one after another; 1 collects round n+1 (tasks,
   * rollouts, judging) with the newest served checkpoint while round n trains, serves and is evaluated.
   */
  maxStaleness: z.number().int().min(0, 'expected 0 or 1').max(1, 'expected 0 or 1 (a staleness of 2 or more is not supported yet)').optional(),
  /** Carried across continue-as-new (one run of the workflow per round). */
  carried: z
    .strictObject({
      round: z.number().int().min(1),
      planner: currentPlanner,
      history: z.array(roundRecord),
      stopRequested: z.boolean(),
      /** With maxStaleness 1: this round's collection stages, done by the previous run while its round trained. */
      collected: collectedRound.optional(),
    })
    .optional(),
});

export type SpecializationRequest = z.input<typeof specializationRequestSchema>;
export interface SpecializationInput {
  readonly software: string;
  readonly run: string;
  readonly rounds: number;
  readonly tasksPerRound: number;
  readonly attempts: number;
  readonly includeSeeds: boolean;
  readonly judgePrecisionFloor: number;
  readonly evaluationAttempts: number;
  readonly evaluationTaskIds?: readonly string[];
  readonly baseEvaluationRun: string;
  readonly judging?: JudgePlanConfig;
  readonly maxStaleness: number;
  /** Where every training starts (temporal.yaml training.basePlanner). */
  readonly base: { readonly model: string; readonly path: string };
  readonly gpuQueue: string;
  /** temporal.yaml training.heartbeatTimeoutSeconds: when a silent GPU worker's training is retried elsewhere. */
  readonly gpuHeartbeatTimeoutSeconds: number;
  readonly carried: { round: number; planner: CurrentPlanner; history: RoundRecord[]; stopRequested: boolean; collected?: CollectedRound };
}

export function resolveSpecializationInput(config: Config, raw: unknown, workflowId: string): SpecializationInput {
  const request = parseOrThrow(specializationRequestSchema, raw, 'specialization input');
  if (request.judging !== undefined) judgePlanOf(config, request.judging, 'judging');
  const s = config.specialization;
  const base = config.training.basePlanner;
  const run = request.run ?? runFromWorkflowId(workflowId);
  return {
    software: request.software,
    run,
    rounds: request.rounds ?? s.rounds,
    tasksPerRound: request.tasksPerRound ?? s.tasksPerRound,
    attempts: request.attempts ?? s.attempts,
    includeSeeds: request.includeSeeds ?? s.includeSeeds,
    judgePrecisionFloor: request.judgePrecisionFloor ?? s.judgePrecisionFloor,
    evaluationAttempts: request.evaluationAttempts ?? s.evaluationAttempts,
    ...(request.evaluationTaskIds === undefined ? {} : { evaluationTaskIds: request.evaluationTaskIds }),
    baseEvaluationRun: request.baseEvaluationRun ?? baseEvaluationRun(run),
    ...(request.judging === undefined ? {} : { judging: request.judging }),
    maxStaleness: request.maxStaleness ?? s.maxStaleness,
    base,
    gpuQueue: config.taskQueues.gpu,
    gpuHeartbeatTimeoutSeconds: config.training.heartbeatTimeoutSeconds,
    carried: request.carried ?? { round: 1, planner: { name: 'base', model: base.model }, history: [], stopRequested: false },
  };
}

export const generalizationRequestSchema = z.strictObject({
  /** One specialist checkpoint per software (its name in checkpoints/, the model name it is served under). */
  specialists: z
    .array(z.strictObject({ software, checkpoint: runId }))
    .min(1, 'expected at least one specialist'),
  run: runId.optional(),
  tasksPerSoftware: z.number().int().min(1, 'expected an integer >= 1').max(10_000).optional(),
  attempts: attempts.optional(),
  perSoftwareCap: z.number().int().min(1, 'expected an integer >= 1').optional(),
  evaluationAttempts: attempts.optional(),
  /** The real tasks of each software the evaluation runs (default: all of them). */
  evaluationTaskIds: z.record(z.string(), z.array(taskId).min(1)).optional(),
  /** The run of the base row's rollouts, to reuse the specializations' (their baseEvaluationRun; same tasks and k); default: this evaluation's own. */
  baseEvaluationRun: runId.optional(),
  /** Each specialist evaluated on every software too, not only on its own (the report's cross cells); default: true. */
  crossEvaluation: z.boolean().optional(),
  judging: judgePlanConfigSchema.optional(),
});

export type GeneralizationRequest = z.input<typeof generalizationRequestSchema>;
export interface GeneralizationInput {
  readonly run: string;
  readonly specialists: ReadonlyArray<{ readonly software: string; readonly checkpoint: string }>;
  readonly tasksPerSoftware: number;
  readonly attempts: number;
  readonly perSoftwareCap: number;
  readonly evaluationAttempts: number;
  readonly evaluationTaskIds?: Readonly<Record<string, string[]>>;
  readonly baseEvaluationRun?: string;
  readonly crossEvaluation: boolean;
  readonly judging?: JudgePlanConfig;
  readonly base: { readonly model: string; readonly path: string };
  readonly gpuQueue: string;
}

export function resolveGeneralizationInput(config: Config, raw: unknown, workflowId: string, knownSoftware: readonly string[]): GeneralizationInput {
  const request = parseOrThrow(generalizationRequestSchema, raw, 'generalization input');
  if (request.judging !== undefined) judgePlanOf(config, request.judging, 'judging');
  const problems: string[] = [];
  request.specialists.forEach((s, i) => {
    if (!knownSoftware.includes(s.software)) problems.push(`specialists[${i}].software: unknown software "${s.software}": expected one of ${knownSoftware.join(', ')}`);
    if (request.specialists.findIndex((o) => o.software === s.software) !== i) problems.push(`specialists[${i}].software: a second specialist of ${s.software}`);
  });
  for (const name of Object.keys(request.evaluationTaskIds ?? {})) {
    if (!request.specialists.some((s) => s.software === name)) problems.push(`evaluationTaskIds.${name}: "${name}" has no specialist here`);
  }
  if (problems.length > 0) throw parseError('generalization input', problems);
  const g = config.generalization;
  return {
    run: request.run ?? runFromWorkflowId(workflowId),
    specialists: request.specialists,
    tasksPerSoftware: request.tasksPerSoftware ?? g.tasksPerSoftware,
    attempts: request.attempts ?? g.attempts,
    perSoftwareCap: request.perSoftwareCap ?? g.perSoftwareCap,
    evaluationAttempts: request.evaluationAttempts ?? g.evaluationAttempts,
    ...(request.evaluationTaskIds === undefined ? {} : { evaluationTaskIds: request.evaluationTaskIds }),
    ...(request.baseEvaluationRun === undefined ? {} : { baseEvaluationRun: request.baseEvaluationRun }),
    crossEvaluation: request.crossEvaluation ?? true,
    ...(request.judging === undefined ? {} : { judging: request.judging }),
    base: config.training.basePlanner,
    gpuQueue: config.taskQueues.gpu,
  };
}
