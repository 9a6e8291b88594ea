import type { LoadedConfig } from '../config/load';
import { attemptOfManifest, manifestKey } from '../core/keys';
import { ValidationError } from '../core/validation';
import { resolveEvaluationInput, type EvaluationRequest } from '../workflows/evaluation/contract';
import {
  resolveJudgeEvaluationInput,
  resolveJudgeInput,
  resolveJudgeRunInput,
  type JudgeEvaluationRequest,
  type JudgeRequest,
  type JudgeRunRequest,
} from '../workflows/judging/contract';
import { resolveBatchInput, type BatchRequest } from '../workflows/rollout/contract';
import { resolveTaskGenerationInput, type TaskGenerationRequest } from '../workflows/tasks/contract';
import { resolveGeneralizationInput, resolveSpecializationInput, type GeneralizationRequest, type SpecializationRequest } from '../workflows/training/contract';
import {
  batchWorkflowId,
  evaluationWorkflowId,
  generalizationWorkflowId,
  judgeEvaluationWorkflowId,
  judgeRunWorkflowId,
  judgeWorkflowId,
  specializationWorkflowId,
  taskGenerationWorkflowId,
} from '../workflows/names';

/**
 * What each `coda start <kind>` (and `coda judge-eval`) takes, written once: every option names
 * the field of its workflow's input it fills (a key of the contract's request type, so a renamed
 * field fails to compile here), how its text is read, and its help. The command line is built from
 * this table (cli/commands/start.ts) and so is the input (cli/start.ts), which the workflow's own
 * contract then checks (workflows/<family>/contract.ts) before anything starts.
 */

export interface StartContext {
  readonly config: LoadedConfig;
  /** The software the task library knows, to check `--software` and the evaluation's rows against. */
  readonly known: readonly string[];
}

/** An option's value as commander hands it over: text, a flag's `true`, or the texts of a repeatable option. */
export type OptionValue = string | boolean | string[];

/** Reads an option's value into its field's value; `flag` names the option in errors. */
type Reader = (value: OptionValue, flag: string, ctx: StartContext) => unknown;

/** One option: the input field it fills, how its text is read, and its help. */
export interface AnyStartOption {
  /** As commander spells it: `--name <value>`, `--name <value...>` (repeatable) or `--name` (a flag). */
  readonly flags: string;
  readonly help: string;
  readonly field: string;
  /** Default: the text as given. */
  readonly read?: Reader;
  readonly required?: true;
  /** The default commander shows in the help (the contract applies the same one). */
  readonly shownDefault?: string;
}

/** One kind of workflow the CLI starts, its fields plain names (what the command line and the input builder read). */
export interface AnyStartKind {
  readonly workflowType: string;
  readonly description: string;
  readonly options: readonly AnyStartOption[];
  /** The field (a run or version id) named `<prefix>-<time>` when its option is absent. */
  readonly fresh?: { readonly field: string; readonly prefix: string };
  /** Checks the input with the workflow's contract; returns the workflow id it starts under. */
  workflowId(ctx: StartContext, input: Record<string, unknown>): string;
}

/** A kind as the table writes it: each field a key of the workflow's request type. */
interface StartKind<Request> extends AnyStartKind {
  readonly options: ReadonlyArray<AnyStartOption & { readonly field: keyof Request & string }>;
  readonly fresh?: { readonly field: keyof Request & string; readonly prefix: string };
}

const text = (value: OptionValue): string => (Array.isArray(value) ? value.join(',') : String(value));

/** A comma-separated list. */
export const list: Reader = (value) =>
  text(value)
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');

export const integer: Reader = (value, flag) => {
  if (typeof value !== 'string' || !/^-?\d+$/.test(value.trim())) throw new ValidationError('options', [`${flag}: expected an integer, got ${JSON.stringify(value)}`]);
  return Number(value);
};

const fraction: Reader = (value, flag) => {
  if (typeof value !== 'string' || !/^\d+(\.\d+)?$/.test(value.trim())) throw new ValidationError('options', [`${flag}: expected a number from 0 to 1, got ${JSON.stringify(value)}`]);
  return Number(value);
};

/** `--software`: one the task library has. */
const software: Reader = (value, flag, ctx) => {
  const name = text(value);
  if (!ctx.known.includes(name)) throw new ValidationError('options', [`${flag}: unknown software "${name}": expected one of ${ctx.known.join(', ')}`]);
  return name;
};

/** `name=model` pairs (or a bare model, named after itself) as planner checkpoints. */
const planners: Reader = (value) =>
  (Array.isArray(value) ? value : [text(value)]).map((v) => {
    const at = v.indexOf('=');
    return at < 0 ? { name: v.replace(/[^A-Za-z0-9._-]/g, '-'), model: v } : { name: v.slice(0, at), model: v.slice(at + 1) };
  });

/** One planner checkpoint: the first `name=model` given. */
const planner: Reader = (value, flag, ctx) => (planners(value, flag, ctx) as unknown[])[0];

/** `KAlgebra:A-01,C-05` (repeatable) as task ids per software. */
const taskIdsBySoftware: Reader = (value, flag, ctx) => {
  const out: Record<string, unknown> = {};
  for (const v of Array.isArray(value) ? value : [text(value)]) {
    const at = v.indexOf(':');
    if (at < 0) throw new ValidationError('options', [`${flag}: expected SOFTWARE:ID,ID (e.g. KAlgebra:A-01,C-05), got ${JSON.stringify(v)}`]);
    out[v.slice(0, at)] = list(v.slice(at + 1), flag, ctx);
  }
  return out;
};

/** `SOFTWARE=CHECKPOINT` (repeatable) as a generalization's specialists. */
const specialists: Reader = (value, flag) =>
  (Array.isArray(value) ? value : [text(value)]).map((v) => {
    const at = v.indexOf('=');
    if (at < 0) throw new ValidationError('options', [`${flag}: expected SOFTWARE=CHECKPOINT, got ${JSON.stringify(v)}`]);
    return { software: v.slice(0, at), checkpoint: v.slice(at + 1) };
  });

/** A trajectory named by its manifest key or as run/software/task/attempt. */
export function manifestKeyOf(config: LoadedConfig, trajectory: string): string {
  if (trajectory.endsWith('/manifest.json')) return trajectory;
  const parts = trajectory.split('/');
  if (parts.length !== 4 || !/^\d+$/.test(parts[3] ?? '')) {
    throw new ValidationError('options', [`trajectory: expected RUN/SOFTWARE/TASK/ATTEMPT or a manifest key, got ${JSON.stringify(trajectory)}`]);
  }
  const [run, soft, task, attempt] = parts as [string, string, string, string];
  return manifestKey(config.storage.prefix, { run, software: soft, task, attempt: Number(attempt) });
}

const trajectory: Reader = (value, _flag, ctx) => manifestKeyOf(ctx.config, text(value));
/** A flag that sets its field to true when given. */
const on: Reader = () => true;

/** `--software <name>`, required, checked against the task library: the same row in every kind that takes one software. */
const SOFTWARE_OPTION = { flags: '--software <name>', help: 'e.g. KAlgebra', field: 'software', read: software, required: true } as const;
const LABEL_HELP = 'write verdicts/<label>.json instead of verdict.json';

/** A kind whose options are typed by its workflow's request. */
const kind = <Request>(definition: StartKind<Request>): AnyStartKind => definition;

/** Every kind, in the order `coda start --help` lists them (judge-eval is a command of its own). */
export const START_KINDS = {
  batch: kind<BatchRequest>({
    workflowType: 'rolloutBatch',
    description: 'rollouts of a task set: tasks x attempts',
    options: [
      SOFTWARE_OPTION,
      { flags: '--attempts <k>', help: 'attempts per task', field: 'attempts', read: integer, shownDefault: '1' },
      { flags: '--tasks <ids>', help: 'comma-separated task ids (default: all)', field: 'taskIds', read: list },
      { flags: '--task-set <version>', help: 'a generated task set instead of the real tasks', field: 'taskSet' },
      { flags: '--run <id>', help: 'run id (default: batch-<time>)', field: 'run' },
      { flags: '--stage <name>', help: 'CodaStage of the rollouts', field: 'stage', shownDefault: 'evaluation' },
      { flags: '--planner <name=model...>', help: 'the planner checkpoint to run', field: 'planner', read: planner },
    ],
    fresh: { field: 'run', prefix: 'batch' },
    workflowId: (ctx, input) => {
      const resolved = resolveBatchInput(ctx.config, input, 'cli');
      return batchWorkflowId(resolved.run, resolved.software);
    },
  }),
  specialization: kind<SpecializationRequest>({
    workflowType: 'specialization',
    description: 'specialize a planner on one software: rounds of task generation, rollouts, judging, GRPO training, evaluation',
    options: [
      SOFTWARE_OPTION,
      { flags: '--rounds <n>', help: 'rounds (default: specialization.rounds)', field: 'rounds', read: integer },
      { flags: '--tasks-per-round <n>', help: 'generated tasks per round', field: 'tasksPerRound', read: integer },
      { flags: '--attempts <k>', help: 'rollouts per task per round', field: 'attempts', read: integer },
      { flags: '--evaluation-attempts <k>', help: 'k of the evaluation after each round', field: 'evaluationAttempts', read: integer },
      { flags: '--evaluation-tasks <ids>', help: 'comma-separated real task ids each round is evaluated on (default: all)', field: 'evaluationTaskIds', read: list },
      { flags: '--train-on-real-tasks', help: 'also train on the rollouts of the real tasks (off by default: they are the evaluation set)', field: 'includeSeeds', read: on },
      {
        flags: '--judge-precision-floor <p>',
        help: "stop a round before training when the judge's precision on the real tasks is below p (0: never; default: specialization.judgePrecisionFloor)",
        field: 'judgePrecisionFloor',
        read: fraction,
      },
      {
        flags: '--max-staleness <n>',
        help: '1: collect round n+1 with the served planner while round n trains (0: one stage after another; default: specialization.maxStaleness)',
        field: 'maxStaleness',
        read: integer,
      },
      { flags: '--run <id>', help: 'run id (default: spec-<time>)', field: 'run' },
    ],
    fresh: { field: 'run', prefix: 'spec' },
    workflowId: (ctx, input) => {
      const resolved = resolveSpecializationInput(ctx.config, input, 'cli');
      return specializationWorkflowId(resolved.software, resolved.run);
    },
  }),
  generalization: kind<GeneralizationRequest>({
    workflowType: 'generalization',
    description: 'train one generalist by SFT on the judged trajectories of the specialists, and evaluate them all',
    options: [
      { flags: '--specialist <software=checkpoint...>', help: 'one specialist checkpoint per software', field: 'specialists', read: specialists, required: true },
      { flags: '--tasks-per-software <n>', help: 'generated tasks each specialist rolls out on', field: 'tasksPerSoftware', read: integer },
      { flags: '--attempts <k>', help: 'rollouts per task', field: 'attempts', read: integer },
      { flags: '--per-software-cap <n>', help: 'most successful trajectories of one software in the SFT data', field: 'perSoftwareCap', read: integer },
      { flags: '--evaluation-attempts <k>', help: 'k of the final evaluation', field: 'evaluationAttempts', read: integer },
      { flags: '--evaluation-tasks <software:ids...>', help: 'the real tasks of a software the evaluation runs, e.g. KAlgebra:A-01,C-03 (default: all)', field: 'evaluationTaskIds', read: taskIdsBySoftware },
      { flags: '--train-on-real-tasks', help: "also train on each specialist's rollouts of its real tasks (off by default: they are the evaluation set)", field: 'includeSeeds', read: on },
      { flags: '--run <id>', help: 'run id (default: gen-<time>)', field: 'run' },
    ],
    fresh: { field: 'run', prefix: 'gen' },
    workflowId: (ctx, input) => generalizationWorkflowId(resolveGeneralizationInput(ctx.config, input, 'cli', ctx.known).run),
  }),
  evaluation: kind<EvaluationRequest>({
    workflowType: 'evaluation',
    description: 'Average@k / Pass@k of planner checkpoints on the real tasks, with a report',
    options: [
      { flags: '--series <name>', help: 'reports of a series are compared with the previous one', field: 'series' },
      { flags: '--software <names>', help: 'comma-separated (default: every software)', field: 'software', read: list },
      { flags: '--attempts <k>', help: 'k (default: evaluation.attempts)', field: 'attempts', read: integer },
      { flags: '--tasks <software:ids...>', help: 'e.g. KAlgebra:A-01,C-05', field: 'taskIds', read: taskIdsBySoftware },
      { flags: '--planner <name=model...>', help: 'rows of the report (default: the planner endpoint)', field: 'planners', read: planners },
      { flags: '--run <id>', help: 'run id (default: eval-<time>)', field: 'run' },
    ],
    fresh: { field: 'run', prefix: 'eval' },
    workflowId: (ctx, input) => evaluationWorkflowId(resolveEvaluationInput(ctx.config, input, 'cli', ctx.known).run),
  }),
  'task-generation': kind<TaskGenerationRequest>({
    workflowType: 'taskGeneration',
    description: 'a versioned task set written by the task-generator model',
    options: [
      SOFTWARE_OPTION,
      { flags: '--count <n>', help: 'most tasks to keep (default: taskGeneration.maxTasks)', field: 'count', read: integer },
      { flags: '--version <id>', help: 'the set version (default: v-<time>)', field: 'version' },
      { flags: '--seeds <ids>', help: 'comma-separated seed task ids (default: all)', field: 'seedTaskIds', read: list },
    ],
    fresh: { field: 'version', prefix: 'v' },
    workflowId: (ctx, input) => {
      const resolved = resolveTaskGenerationInput(ctx.config, input, 'cli');
      return taskGenerationWorkflowId(resolved.software, resolved.version);
    },
  }),
  judge: kind<JudgeRequest>({
    workflowType: 'judgeTrajectory',
    description: 'judge one trajectory (verdict.json beside its manifest)',
    options: [
      { flags: '--trajectory <ref>', help: 'RUN/SOFTWARE/TASK/ATTEMPT or a manifest key', field: 'manifestKey', read: trajectory, required: true },
      { flags: '--label <label>', help: LABEL_HELP, field: 'label' },
    ],
    workflowId: (ctx, input) => {
      const resolved = resolveJudgeInput(ctx.config, input);
      return judgeWorkflowId(attemptOfManifest(ctx.config.storage.prefix, resolved.manifestKey), resolved.label);
    },
  }),
  'judge-run': kind<JudgeRunRequest>({
    workflowType: 'judgeRun',
    description: 'judge every trajectory of a run',
    options: [
      { flags: '--run <id>', help: 'the run', field: 'run', required: true },
      SOFTWARE_OPTION,
      { flags: '--label <label>', help: LABEL_HELP, field: 'label' },
      { flags: '--concurrency <n>', help: 'trajectories judged at once', field: 'concurrency', read: integer },
    ],
    workflowId: (ctx, input) => {
      const resolved = resolveJudgeRunInput(ctx.config, input);
      return judgeRunWorkflowId(resolved.run, resolved.software, resolved.label);
    },
  }),
  'judge-eval': kind<JudgeEvaluationRequest>({
    workflowType: 'judgeEvaluation',
    description: "compare judge strategies on a run's labelled trajectories; prints precision and recall (the paper's table 2)",
    options: [
      { flags: '--run <id>', help: 'the rollouts to judge (their evaluators give the truth)', field: 'run', required: true },
      SOFTWARE_OPTION,
      { flags: '--strategies <labels>', help: 'comma-separated labels of judging.strategies (default: all)', field: 'strategies', read: list },
      { flags: '--id <id>', help: 'the comparison id (default: je-<time>)', field: 'id' },
    ],
    fresh: { field: 'id', prefix: 'je' },
    workflowId: (ctx, input) => judgeEvaluationWorkflowId(resolveJudgeEvaluationInput(ctx.config, input, 'cli').id),
  }),
} as const satisfies Record<string, AnyStartKind>;

export type StartKindName = keyof typeof START_KINDS;
