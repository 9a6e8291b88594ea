import type { LoadedConfig } from '../config/load';
import { resolveEvaluationInput } from '../workflows/evaluation/contract';
import { resolveJudgeEvaluationInput, resolveJudgeInput, resolveJudgeRunInput } from '../workflows/judging/contract';
import { resolveBatchInput } from '../workflows/rollout/contract';
import { resolveTaskGenerationInput } from '../workflows/tasks/contract';
import { resolveGeneralizationInput, resolveSpecializationInput } from '../workflows/training/contract';
import { attemptOfManifest, manifestKey } from '../core/keys';
import { ValidationError } from '../core/validation';
import { TaskLibrary } from '../activities/tasks/library';
import { batchWorkflowId, evaluationWorkflowId, freshRun, generalizationWorkflowId, judgeEvaluationWorkflowId, judgeRunWorkflowId, judgeWorkflowId, specializationWorkflowId, taskGenerationWorkflowId } from '../workflows/names';

/**
 * What `coda start <kind>` starts: the workflow type, its id and its input, built from the
 * command's options and checked with the very functions the workflow runs first
 * (workflows/<family>/contract.ts), so bad input is refused before anything starts.
 */
export interface StartRequest {
  readonly workflowType: string;
  readonly workflowId: string;
  readonly input: Record<string, unknown>;
}

export type StartOptions = Readonly<Record<string, string | boolean | string[] | undefined>>;

const list = (value: unknown): string[] | undefined =>
  typeof value === 'string' ? value.split(',').map((v) => v.trim()).filter((v) => v !== '') : undefined;

const integer = (value: unknown, field: string): number | undefined => {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (typeof value !== 'string' || !/^-?\d+$/.test(value.trim())) throw new ValidationError('options', [`--${field}: expected an integer, got ${JSON.stringify(value)}`]);
  return n;
};

const fraction = (value: unknown, field: string): number | undefined => {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d+(\.\d+)?$/.test(value.trim())) throw new ValidationError('options', [`--${field}: expected a number from 0 to 1, got ${JSON.stringify(value)}`]);
  return Number(value);
};

/** `name=model` pairs (or a bare model, named after itself) as planner checkpoints. */
function planners(values: unknown): Array<{ name: string; model: string }> | undefined {
  if (!Array.isArray(values) || values.length === 0) return undefined;
  return values.map((v: string) => {
    const at = v.indexOf('=');
    return at < 0 ? { name: v.replace(/[^A-Za-z0-9._-]/g, '-'), model: v } : { name: v.slice(0, at), model: v.slice(at + 1) };
  });
}

/** `KAlgebra:A-01,C-05` (repeatable) as task ids per software. */
function taskIdsBySoftware(values: unknown, option = 'tasks'): Record<string, string[]> | undefined {
  if (!Array.isArray(values) || values.length === 0) return undefined;
  const out: Record<string, string[]> = {};
  for (const v of values as string[]) {
    const at = v.indexOf(':');
    if (at < 0) throw new ValidationError('options', [`--${option}: expected SOFTWARE:ID,ID (e.g. KAlgebra:A-01,C-05), got ${JSON.stringify(v)}`]);
    out[v.slice(0, at)] = list(v.slice(at + 1)) ?? [];
  }
  return out;
}

/** A trajectory named by its manifest key or as run/software/task/attempt. */
export function manifestKeyOf(config: LoadedConfig, trajectory: string): string {
  if (trajectory.endsWith('/manifest.json')) return trajectory;
  const parts = trajectory.split('/');
  if (parts.length !== 4 || !/^\d+$/.test(parts[3] ?? '')) {
    throw new ValidationError('options', [`trajectory: expected RUN/SOFTWARE/TASK/ATTEMPT or a manifest key, got ${JSON.stringify(trajectory)}`]);
  }
  const [run, software, task, attempt] = parts as [string, string, string, string];
  return manifestKey(config.storage.prefix, { run, software, task, attempt: Number(attempt) });
}

const drop = (record: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined));

/** What one kind of `coda start` needs: the software it knows, to check `--software` and the evaluation's rows against. */
interface StartContext {
  readonly config: LoadedConfig;
  readonly known: readonly string[];
}

/** Refuses a `--software` no task of the library has, before the input is built. */
function checkSoftware(ctx: StartContext, software: unknown): void {
  if (typeof software === 'string' && !ctx.known.includes(software)) {
    throw new ValidationError('options', [`--software: unknown software "${software}": expected one of ${ctx.known.join(', ')}`]);
  }
}

/** `SOFTWARE=CHECKPOINT` (repeatable) as a generalization's specialists. */
function specialistsOf(values: unknown): Array<{ software: string; checkpoint: string }> {
  return (Array.isArray(values) ? values : []).map((v: string) => {
    const at = v.indexOf('=');
    if (at < 0) throw new ValidationError('options', [`--specialist: expected SOFTWARE=CHECKPOINT, got ${JSON.stringify(v)}`]);
    return { software: v.slice(0, at), checkpoint: v.slice(at + 1) };
  });
}

/** Each kind: its input from the options, checked with its workflow's contract, and the id it starts under. */
const KINDS: Readonly<Record<string, (ctx: StartContext, options: StartOptions) => StartRequest>> = {
  batch(ctx, options) {
    checkSoftware(ctx, options.software);
    const input = drop({
      run: (options.run as string | undefined) ?? freshRun('batch'),
      stage: options.stage,
      software: options.software,
      attempts: integer(options.attempts, 'attempts'),
      taskIds: list(options.tasks),
      taskSet: options.taskSet,
      planner: planners(options.planner)?.[0],
    });
    const resolved = resolveBatchInput(ctx.config, input, 'cli');
    return { workflowType: 'rolloutBatch', workflowId: batchWorkflowId(resolved.run, resolved.software), input };
  },
  evaluation(ctx, options) {
    const run = (options.run as string | undefined) ?? freshRun('eval');
    const input = drop({ run, series: options.series, software: list(options.software), attempts: integer(options.attempts, 'attempts'), taskIds: taskIdsBySoftware(options.tasks), planners: planners(options.planner) });
    resolveEvaluationInput(ctx.config, input, 'cli', ctx.known);
    return { workflowType: 'evaluation', workflowId: evaluationWorkflowId(run), input };
  },
  'task-generation'(ctx, options) {
    checkSoftware(ctx, options.software);
    const version = (options.version as string | undefined) ?? freshRun('v');
    const input = drop({ software: options.software, version, count: integer(options.count, 'count'), seedTaskIds: list(options.seeds) });
    const resolved = resolveTaskGenerationInput(ctx.config, input, 'cli');
    return { workflowType: 'taskGeneration', workflowId: taskGenerationWorkflowId(resolved.software, resolved.version), input };
  },
  judge(ctx, options) {
    if (typeof options.trajectory !== 'string') throw new ValidationError('options', ['--trajectory: expected RUN/SOFTWARE/TASK/ATTEMPT or a manifest key']);
    const input = drop({ manifestKey: manifestKeyOf(ctx.config, options.trajectory), label: options.label });
    const resolved = resolveJudgeInput(ctx.config, input);
    return { workflowType: 'judgeTrajectory', workflowId: judgeWorkflowId(attemptOfManifest(ctx.config.storage.prefix, resolved.manifestKey), resolved.label), input };
  },
  'judge-run'(ctx, options) {
    checkSoftware(ctx, options.software);
    const input = drop({ run: options.run, software: options.software, label: options.label, concurrency: integer(options.concurrency, 'concurrency') });
    const resolved = resolveJudgeRunInput(ctx.config, input);
    return { workflowType: 'judgeRun', workflowId: judgeRunWorkflowId(resolved.run, resolved.software, resolved.label), input };
  },
  'judge-eval'(ctx, options) {
    checkSoftware(ctx, options.software);
    const id = (options.id as string | undefined) ?? freshRun('je');
    const input = drop({ id, run: options.run, software: options.software, strategies: list(options.strategies) });
    resolveJudgeEvaluationInput(ctx.config, input, 'cli');
    return { workflowType: 'judgeEvaluation', workflowId: judgeEvaluationWorkflowId(id), input };
  },
  specialization(ctx, options) {
    checkSoftware(ctx, options.software);
    const input = drop({
      software: options.software,
      run: (options.run as string | undefined) ?? freshRun('spec'),
      rounds: integer(options.rounds, 'rounds'),
      tasksPerRound: integer(options.tasksPerRound, 'tasks-per-round'),
      attempts: integer(options.attempts, 'attempts'),
      evaluationAttempts: integer(options.evaluationAttempts, 'evaluation-attempts'),
      evaluationTaskIds: list(options.evaluationTasks),
      judgePrecisionFloor: fraction(options.judgePrecisionFloor, 'judge-precision-floor'),
      maxStaleness: integer(options.maxStaleness, 'max-staleness'),
      ...(options.trainOnRealTasks === true ? { includeSeeds: true } : {}),
    });
    const resolved = resolveSpecializationInput(ctx.config, input, 'cli');
    return { workflowType: 'specialization', workflowId: specializationWorkflowId(resolved.software, resolved.run), input };
  },
  generalization(ctx, options) {
    const specialists = specialistsOf(options.specialist);
    const input = drop({
      specialists,
      run: (options.run as string | undefined) ?? freshRun('gen'),
      tasksPerSoftware: integer(options.tasksPerSoftware, 'tasks-per-software'),
      attempts: integer(options.attempts, 'attempts'),
      perSoftwareCap: integer(options.perSoftwareCap, 'per-software-cap'),
      evaluationAttempts: integer(options.evaluationAttempts, 'evaluation-attempts'),
      evaluationTaskIds: taskIdsBySoftware(options.evaluationTasks, 'evaluation-tasks'),
    });
    const resolved = resolveGeneralizationInput(ctx.config, input, 'cli', ctx.known);
    return { workflowType: 'generalization', workflowId: generalizationWorkflowId(resolved.run), input };
  },
};

/** The workflow a `coda start` would start; throws a ValidationError naming each bad option. */
export function startRequest(config: LoadedConfig, kind: string, options: StartOptions, library = new TaskLibrary()): StartRequest {
  const build = Object.hasOwn(KINDS, kind) ? KINDS[kind] : undefined;
  if (build === undefined) {
    throw new ValidationError('options', [`unknown kind "${kind}": expected batch, evaluation, task-generation, judge, judge-run, judge-eval, specialization or generalization`]);
  }
  return build({ config, known: library.software() }, options);
}
