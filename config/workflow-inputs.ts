import { z } from 'zod';
import { attemptOfManifest, DEFAULT_VERDICT, KEY_SEGMENT, type AttemptRef } from '../core/keys';
import type { JudgePlan } from '../core/judge/voting';
import { parseOrThrow, ValidationError } from '../core/validation';
import type { TaskEntry } from '../core/rollout-types';
import { hostCapacity, judgePlanConfigSchema, type Config, type JudgePlanConfig } from './schema';

/**
 * The one place where workflow inputs are checked and completed from temporal.yaml. A starter may
 * send only what it cares about (`temporal workflow start --input '{"software":"KAlgebra"}'`); the
 * workflow's first step is a local activity that runs these functions on the orchestrator worker,
 * so a bad field fails the workflow at once with a non-retryable ValidationError naming it, and the
 * defaults come from the worker's deployment. The CLI runs the same functions before it starts
 * anything. Workflows import only the types from here (no zod in workflow code).
 */

const runId = z.string().regex(KEY_SEGMENT, 'expected an id of letters, digits, . _ - (at most 128, no "..")');
const software = z.string().min(1, 'expected a software name such as KAlgebra');
const taskId = z.string().regex(KEY_SEGMENT, 'expected a task id such as A-01');
const attempts = z.number({ error: 'expected an integer >= 1' }).int('expected an integer >= 1').min(1, 'expected an integer >= 1').max(64, 'expected at most 64');
const label = z.string().regex(/^[a-z0-9][a-z0-9-]{0,40}$/, 'expected a label (a-z, 0-9, -)');
const plannerCheckpoint = z.strictObject({
  /** The name the report gives it (a row of the evaluation table). */
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'expected a checkpoint name (letters, digits, . _ -)'),
  /** The model name the planner endpoint serves it under. */
  model: z.string().min(1),
});

// ---------------------------------------------------------------------------------------------
// Rollouts and batches

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

/** A run id from a workflow id (a scheduled start gets `<schedule id>-<time>` and no run). */
export const runFromWorkflowId = (workflowId: string): string => workflowId.replace(/[^A-Za-z0-9._-]/g, '').slice(0, 128);

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

// ---------------------------------------------------------------------------------------------
// Judging

export interface JudgeImages {
  readonly low: { readonly width: number; readonly height: number };
  readonly high: { readonly width: number; readonly height: number };
}

/** A judge plan from temporal.yaml's form (judge names) to the core's (names with their models). */
export function judgePlanOf(config: Config, plan: JudgePlanConfig, field = 'plan'): JudgePlan {
  const judges = plan.judges.map((name, i) => {
    const endpoint = config.models.judges.find((j) => j.name === name);
    if (endpoint === undefined) {
      throw parseError('judge plan', [`${field}.judges[${i}]: unknown judge "${name}": expected one of ${config.models.judges.map((j) => j.name).join(', ')}`]);
    }
    return { name, model: endpoint.model };
  });
  return { lowResolutionVotes: plan.lowResolutionVotes, highResolutionVotes: plan.highResolutionVotes, judges, temperatures: plan.temperatures };
}

const parseError = (source: string, problems: string[]): ValidationError => new ValidationError(source, problems);

export const judgeRequestSchema = z.strictObject({
  /** The trajectory: {prefix}/runs/{run}/{software}/{task}/{attempt}/manifest.json */
  manifestKey: z.string().min(1),
  /** `default` writes verdict.json; another label writes verdicts/{label}.json (judge strategies). */
  label: label.default(DEFAULT_VERDICT),
  /** Overrides temporal.yaml's judging.plan. */
  plan: judgePlanConfigSchema.optional(),
});

export type JudgeRequest = z.input<typeof judgeRequestSchema>;
export interface JudgeInput {
  readonly manifestKey: string;
  readonly ref: AttemptRef;
  readonly label: string;
  readonly plan: JudgePlan;
  readonly images: JudgeImages;
}

export function resolveJudgeInput(config: Config, raw: unknown): JudgeInput {
  const request = parseOrThrow(judgeRequestSchema, raw, 'judge input');
  let ref: AttemptRef;
  try {
    ref = attemptOfManifest(config.storage.prefix, request.manifestKey);
  } catch (err) {
    throw parseError('judge input', [`manifestKey: ${(err as Error).message}`]);
  }
  return {
    manifestKey: request.manifestKey,
    ref,
    label: request.label,
    plan: judgePlanOf(config, request.plan ?? config.judging.plan),
    images: config.judging.images,
  };
}

export const judgeRunRequestSchema = z.strictObject({
  /** Every trajectory of this run and software is judged. */
  run: runId,
  software,
  label: label.default(DEFAULT_VERDICT),
  plan: judgePlanConfigSchema.optional(),
  /** Trajectories judged at once; default: judging.concurrency. */
  concurrency: z.number().int().min(1).max(1000).optional(),
  /** Carried across continue-as-new. */
  carried: z.strictObject({ cursor: z.string().min(1), judged: z.number().int().min(0), succeeded: z.number().int().min(0), runs: z.number().int().min(0) }).optional(),
});

export type JudgeRunRequest = z.input<typeof judgeRunRequestSchema>;
export type JudgeRunInput = Omit<z.output<typeof judgeRunRequestSchema>, 'plan' | 'concurrency'> & {
  readonly plan?: JudgePlanConfig;
  readonly concurrency: number;
};

export function resolveJudgeRunInput(config: Config, raw: unknown): JudgeRunInput {
  const request = parseOrThrow(judgeRunRequestSchema, raw, 'judge run input');
  if (request.plan !== undefined) judgePlanOf(config, request.plan);
  return { ...request, concurrency: request.concurrency ?? config.judging.concurrency };
}

export const judgeEvaluationRequestSchema = z.strictObject({
  /** The rollouts whose trajectories are judged (their evaluators give the truth). */
  run: runId,
  software,
  /** Labels of judging.strategies to compare; default: all of them. */
  strategies: z.array(label).min(1).optional(),
  /** The comparison's id (its report key); default: from the workflow id. */
  id: runId.optional(),
});

export type JudgeEvaluationRequest = z.input<typeof judgeEvaluationRequestSchema>;

export interface JudgeStrategy {
  readonly label: string;
  readonly title: string;
  readonly plan: JudgePlanConfig;
  /** For a multi-resolution strategy: the label of the all-high-resolution plan with the same votes. */
  readonly allHighTwin?: string;
}

export interface JudgeEvaluationInput {
  readonly id: string;
  readonly run: string;
  readonly software: string;
  /** The strategies of the table, then any all-high twins they need that are not among them. */
  readonly strategies: JudgeStrategy[];
}

const samePlan = (a: JudgePlanConfig, b: JudgePlanConfig): boolean => JSON.stringify(a) === JSON.stringify(b);

export function resolveJudgeEvaluationInput(config: Config, raw: unknown, workflowId: string): JudgeEvaluationInput {
  const request = parseOrThrow(judgeEvaluationRequestSchema, raw, 'judge evaluation input');
  const configured = config.judging.strategies ?? [];
  if (configured.length === 0) throw parseError('judge evaluation input', ['strategies: temporal.yaml has no judging.strategies to compare']);
  const unknown = (request.strategies ?? []).filter((l) => !configured.some((s) => s.label === l));
  if (unknown.length > 0) {
    throw parseError('judge evaluation input', unknown.map((l) => `strategies: unknown strategy "${l}": expected one of ${configured.map((s) => s.label).join(', ')}`));
  }
  const chosen: JudgeStrategy[] = configured.filter((s) => request.strategies === undefined || request.strategies.includes(s.label)).map((s) => ({ ...s }));
  const twins: JudgeStrategy[] = [];
  for (const strategy of chosen) {
    if (strategy.plan.lowResolutionVotes === 0) continue;
    const allHigh: JudgePlanConfig = { ...strategy.plan, lowResolutionVotes: 0, highResolutionVotes: strategy.plan.lowResolutionVotes + strategy.plan.highResolutionVotes };
    const twin = [...configured, ...twins].find((s) => samePlan(s.plan, allHigh));
    if (twin !== undefined) {
      Object.assign(strategy, { allHighTwin: twin.label });
      if (!chosen.some((s) => s.label === twin.label) && !twins.includes(twin as JudgeStrategy)) twins.push({ ...twin });
    } else {
      const made = { label: `${strategy.label}-allhigh`.slice(0, 41), title: `${strategy.title}, all high resolution`, plan: allHigh };
      twins.push(made);
      Object.assign(strategy, { allHighTwin: made.label });
    }
  }
  return { id: request.id ?? runFromWorkflowId(workflowId), run: request.run, software: request.software, strategies: [...chosen, ...twins] };
}

// ---------------------------------------------------------------------------------------------
// Task generation

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

// ---------------------------------------------------------------------------------------------
// Evaluation

/**
 * A row of an evaluation: a planner checkpoint, and optionally the run its rollouts go to. A row
 * with its own run is rolled out once and reused by every evaluation that names the same run (the
 * batch awaits finished rollouts instead of running them again): a specialization's base row.
 */
const evaluationPlanner = plannerCheckpoint.extend({
  run: runId.optional(),
  /** The software this row is evaluated on (a specialist on its own); default: every software of the evaluation. */
  software: z.array(software).min(1, 'expected at least one software').optional(),
});

export const evaluationRequestSchema = z.strictObject({
  /** Run id of this evaluation; default: from the workflow id (scheduled runs). */
  run: runId.optional(),
  /** Reports of a series are compared with the previous one; default: evaluation.series. */
  series: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'expected a series name (a-z, 0-9, -)').optional(),
  /** Software to evaluate; default: every software with tasks. */
  software: z.array(software).min(1, 'expected at least one software').optional(),
  /** k of Average@k and Pass@k; default: evaluation.attempts. */
  attempts: attempts.optional(),
  /** Task ids per software; default: all. */
  taskIds: z.record(z.string(), z.array(taskId).min(1)).optional(),
  /** The rows of the report; default: the planner endpoint's model, named after it. */
  planners: z.array(evaluationPlanner).min(1, 'expected at least one planner').optional(),
});

export type EvaluationRequest = z.input<typeof evaluationRequestSchema>;
export interface EvaluationInput {
  readonly run: string;
  readonly series: string;
  readonly software: string[];
  readonly attempts: number;
  readonly taskIds?: Readonly<Record<string, string[]>>;
  readonly planners: Array<z.output<typeof evaluationPlanner>>;
}

export function resolveEvaluationInput(config: Config, raw: unknown, workflowId: string, knownSoftware: readonly string[]): EvaluationInput {
  const request = parseOrThrow(evaluationRequestSchema, raw, 'evaluation input');
  const problems = [
    ...(request.software ?? []).filter((s) => !knownSoftware.includes(s)).map((s) => `software: unknown software "${s}": expected one of ${knownSoftware.join(', ')}`),
    ...Object.keys(request.taskIds ?? {})
      .filter((s) => !(request.software ?? knownSoftware).includes(s))
      .map((s) => `taskIds.${s}: "${s}" is not among the software evaluated`),
  ];
  const names = (request.planners ?? []).map((p) => p.name);
  names.forEach((name, i) => names.indexOf(name) !== i && problems.push(`planners[${i}].name: duplicate planner "${name}"`));
  (request.planners ?? []).forEach((p, i) =>
    (p.software ?? [])
      .filter((s) => !(request.software ?? knownSoftware).includes(s))
      .forEach((s) => problems.push(`planners[${i}].software: "${s}" is not among the software evaluated`)),
  );
  const runs = (request.planners ?? []).map((p) => p.run);
  runs.forEach((run, i) => run !== undefined && runs.indexOf(run) !== i && problems.push(`planners[${i}].run: run "${run}" is another planner's too`));
  if (problems.length > 0) throw parseError('evaluation input', problems);
  return {
    run: request.run ?? runFromWorkflowId(workflowId),
    series: request.series ?? config.evaluation.series,
    software: [...(request.software ?? knownSoftware)],
    attempts: request.attempts ?? config.evaluation.attempts,
    ...(request.taskIds === undefined ? {} : { taskIds: request.taskIds }),
    planners: request.planners ?? [{ name: config.models.planner.model.replace(/[^A-Za-z0-9._-]/g, '-'), model: config.models.planner.model }],
  };
}

// ---------------------------------------------------------------------------------------------
// Training

/** The planner a round rolls out with: its name in reports, its served model name, its checkpoint (none: the base). */
const currentPlanner = plannerCheckpoint.extend({ checkpointKey: z.string().min(1).optional() });
export type CurrentPlanner = z.output<typeof currentPlanner>;

const count = z.number().int().min(0);
/** A ratio, null when there is nothing to divide by (core/judge/calibration.ts). */
const ratio = z.number().min(0).max(1).nullable();
const agreement = z.strictObject({
  trajectories: count,
  approved: count,
  passed: count,
  truePositives: count,
  falsePositives: count,
  falseNegatives: count,
  trueNegatives: count,
  precision: ratio,
  recall: ratio,
});

/** The judge measured on a round's rollouts of the real tasks against their evaluators. */
export const judgeMeasurementSchema = z.strictObject({
  /** The real-task rollout run it was measured on. */
  run: runId,
  /** The run's judgePrecisionFloor (0: none). */
  floor: z.number().min(0).max(1),
  /** The final, voted verdict. */
  final: agreement,
  /** Each judge at each resolution, on the trajectories it voted on there. */
  votes: z.array(agreement.extend({ judge: z.string().min(1), resolution: z.enum(['low', 'high']) })),
});

export type JudgeMeasurement = z.output<typeof judgeMeasurementSchema>;

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
    baseEvaluationRun: request.baseEvaluationRun ?? `${run}-base-eval`,
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
