import { z } from 'zod';
import { judgePlanConfigSchema, type Config } from '../../config/schema';
import { judgeMeasurementSchema } from '../../core/judge/measurement';
import { parseOrThrow, ValidationError } from '../../core/validation';
import { attempts, plannerCheckpoint, runId, software, taskId } from '../fields';
import { judgePlanOf } from '../judging/contract';
import { baseEvaluationRun, runFromWorkflowId } from '../names';

/**
 * The training workflows' inputs, specialization's state carried from round to round with them:
 * one zod schema each, its defaults from the loaded temporal.yaml, its types inferred. The
 * workflow's first step and the CLI before it starts one check with them.
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

/**
 * A specialization: its defaults are temporal.yaml's specialization section; where every training
 * starts (training.basePlanner), the gpu queue and when a silent GPU worker's training is retried
 * elsewhere (training.heartbeatTimeoutSeconds) are the deployment's, read again every round.
 */
export function specializationInputSchema(config: Config, workflowId: string) {
  const s = config.specialization;
  const base = config.training.basePlanner;
  return z
    .strictObject({
      /** The software to specialize a planner on. */
      software,
      /** Run id (every round's runs, task sets and checkpoints are named after it). */
      run: runId.default(runFromWorkflowId(workflowId)),
      rounds: z.number().int().min(1, 'expected an integer >= 1').max(100).default(s.rounds),
      tasksPerRound: z.number().int().min(1, 'expected an integer >= 1').max(10_000).default(s.tasksPerRound),
      attempts: attempts.default(s.attempts),
      /** Also train on the rollouts of the real tasks (off: they are the evaluation set). */
      includeSeeds: z.boolean().default(s.includeSeeds),
      /** Minimum precision of the judge on the real tasks for a round to train on its data; 0: none. */
      judgePrecisionFloor: z.number().min(0, 'expected a precision from 0 to 1').max(1, 'expected a precision from 0 to 1').default(s.judgePrecisionFloor),
      evaluationAttempts: attempts.default(s.evaluationAttempts),
      /** The real tasks each round is evaluated on, whose rollouts measure the judge (default: all of the software's). */
      evaluationTaskIds: z.array(taskId).min(1, 'expected at least one task id').optional(),
      /**
       * The run of the base planner's rollouts every round's evaluation compares with (default:
       * named after the run): rolled out in the first round, reused by the later ones. Runs that
       * share it must evaluate the same tasks with the same k.
       */
      baseEvaluationRun: runId.optional(),
      /** The judge plan of this run (default: temporal.yaml's judging.plan). */
      judging: judgePlanConfigSchema.optional(),
      /**
       * How many checkpoints the planner rolling out a round's tasks may lag the round's parent: 0
       * runs the stages one after another; 1 collects round n+1 (tasks, rollouts, judging) with the
       * newest served checkpoint while round n trains, serves and is evaluated.
       */
      maxStaleness: z.number().int().min(0, 'expected 0 or 1').max(1, 'expected 0 or 1 (a staleness of 2 or more is not supported yet)').default(s.maxStaleness),
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
        .default({ round: 1, planner: { name: 'base', model: base.model }, history: [], stopRequested: false }),
    })
    .transform((request) => ({
      ...request,
      baseEvaluationRun: request.baseEvaluationRun ?? baseEvaluationRun(request.run),
      base,
      gpuQueue: config.taskQueues.gpu,
      gpuHeartbeatTimeoutSeconds: config.training.heartbeatTimeoutSeconds,
    }));
}

export type SpecializationRequest = z.input<ReturnType<typeof specializationInputSchema>>;
export type SpecializationInput = z.output<ReturnType<typeof specializationInputSchema>>;

export function resolveSpecializationInput(config: Config, raw: unknown, workflowId: string): SpecializationInput {
  const input = parseOrThrow(specializationInputSchema(config, workflowId), raw, 'specialization input');
  if (input.judging !== undefined) judgePlanOf(config, input.judging, 'judging');
  return input;
}

/** A generalization: its defaults are temporal.yaml's generalization section; the base planner and gpu queue are the deployment's. */
export function generalizationInputSchema(config: Config, workflowId: string) {
  const g = config.generalization;
  return z
    .strictObject({
      /** One specialist checkpoint per software (its name in checkpoints/, the model name it is served under). */
      specialists: z.array(z.strictObject({ software, checkpoint: runId })).min(1, 'expected at least one specialist'),
      run: runId.default(runFromWorkflowId(workflowId)),
      tasksPerSoftware: z.number().int().min(1, 'expected an integer >= 1').max(10_000).default(g.tasksPerSoftware),
      attempts: attempts.default(g.attempts),
      perSoftwareCap: z.number().int().min(1, 'expected an integer >= 1').default(g.perSoftwareCap),
      evaluationAttempts: attempts.default(g.evaluationAttempts),
      /** Also train on each specialist's rollouts of its real tasks, its specialization's evaluation (off: they are the evaluation set). */
      includeSeeds: z.boolean().default(g.includeSeeds),
      /** The real tasks of each software the evaluation runs (default: all of them). */
      evaluationTaskIds: z.record(z.string(), z.array(taskId).min(1)).optional(),
      /** The run of the base row's rollouts, to reuse the specializations' (their baseEvaluationRun; same tasks and k); default: this evaluation's own. */
      baseEvaluationRun: runId.optional(),
      /** Each specialist evaluated on every software too, not only on its own (the report's cross cells). */
      crossEvaluation: z.boolean().default(true),
      judging: judgePlanConfigSchema.optional(),
    })
    .transform((request) => ({ ...request, base: config.training.basePlanner, gpuQueue: config.taskQueues.gpu }));
}

export type GeneralizationRequest = z.input<ReturnType<typeof generalizationInputSchema>>;
export type GeneralizationInput = z.output<ReturnType<typeof generalizationInputSchema>>;

/** The schema's checks, then those across fields: known software, one specialist per software, tasks only of specialists' software. */
export function resolveGeneralizationInput(config: Config, raw: unknown, workflowId: string, knownSoftware: readonly string[]): GeneralizationInput {
  const input = parseOrThrow(generalizationInputSchema(config, workflowId), raw, 'generalization input');
  if (input.judging !== undefined) judgePlanOf(config, input.judging, 'judging');
  const problems: string[] = [];
  input.specialists.forEach((s, i) => {
    if (!knownSoftware.includes(s.software)) problems.push(`specialists[${i}].software: unknown software "${s.software}": expected one of ${knownSoftware.join(', ')}`);
    if (input.specialists.findIndex((o) => o.software === s.software) !== i) problems.push(`specialists[${i}].software: a second specialist of ${s.software}`);
  });
  for (const name of Object.keys(input.evaluationTaskIds ?? {})) {
    if (!input.specialists.some((s) => s.software === name)) problems.push(`evaluationTaskIds.${name}: "${name}" has no specialist here`);
  }
  if (problems.length > 0) throw parseError('generalization input', problems);
  return input;
}
