import { z } from 'zod';
import { KEY_SEGMENT } from './keys';
import { commonChecks, commonFuncs, querySchema, type AppSchema } from './task-common';
import { formatPath, parseOrThrow, ValidationError } from './validation';

/**
 * ScienceBoard tasks, one JSON file each (docs/formats.md). A task's `initialize` funcs and
 * `evaluate` types are read by its `type`: the funcs and checks every app has (core/task-common.ts)
 * and the app's own (apps/<slug>/schema.ts, listed in apps/index.ts). The applications reach this
 * module as data, the `apps` argument of each function that reads by software (the callers pass
 * the registry, apps/index.ts APPS), and as types through RegisteredApps. A known func or check with
 * a bad field is an error naming the field (a broken file); a func or check the pipeline does not
 * know — one a later ScienceBoard release may add — is not: the task loads with it listed in
 * `unknown`, and core/requirements.ts makes such a task unsupported on every host, with that reason.
 */

/**
 * The applications' task schemas as types: the registry (apps/index.ts) adds its apps here with
 * `declare module`, so that steps and checks are typed field by field for every app while core/
 * imports nothing above it.
 */
export interface RegisteredApps {}
type App = RegisteredApps[keyof RegisteredApps];

type ValueOf<T> = T[keyof T];
type StepOf<A extends { readonly funcs: object }> = z.output<ValueOf<A['funcs']> & z.ZodType>;
type CheckOf<A extends { readonly checks: object }> = z.output<ValueOf<A['checks']> & z.ZodType>;

/** Every func of every app, each shaped as its app defines it (ChimeraX's and Lean's `open` differ). */
export type InitializeStep = z.output<ValueOf<typeof commonFuncs>> | { [K in App['software']]: StepOf<Extract<App, { software: K }>> }[App['software']];

/** Every check of every app, each shaped as its app defines it (TeXstudio's and ChimeraX's `file` differ). */
export type Evaluator = z.output<ValueOf<typeof commonChecks>> | { [K in App['software']]: CheckOf<Extract<App, { software: K }>> }[App['software']];

/** The app whose task files have `type` = `software`, among `apps`. */
const appOf = (apps: readonly AppSchema[], software: string): AppSchema | undefined => apps.find((app) => app.software === software);

/** A step of any of `apps`' tasks, as generated task sets store the steps their tasks start with. */
export function initializeStepSchemaOf(apps: readonly AppSchema[]): z.ZodType<InitializeStep> {
  return z.union([...Object.values(commonFuncs), ...apps.flatMap((app) => Object.values(app.funcs))] as unknown as [z.ZodType<InitializeStep>, z.ZodType<InitializeStep>, ...z.ZodType<InitializeStep>[]]);
}

/** The evaluator types `apps` know, taken from their schemas (so results can be validated by the same list). */
export const evaluatorTypesOf = (apps: readonly AppSchema[]): [Evaluator['type'], ...Evaluator['type'][]] =>
  [...new Set([...Object.keys(commonChecks), ...apps.flatMap((app) => Object.keys(app.checks))])] as [Evaluator['type'], ...Evaluator['type'][]];

/** The funcs a task of `software` may use, by name (the common ones first). */
export function funcsOf(apps: readonly AppSchema[], software: string): Readonly<Record<string, z.ZodType>> {
  return { ...commonFuncs, ...(appOf(apps, software)?.funcs ?? {}) };
}

/** The checks a task of `software` may use, by name (`stop` first). */
export function checksOf(apps: readonly AppSchema[], software: string): Readonly<Record<string, z.ZodType>> {
  return { ...commonChecks, ...(appOf(apps, software)?.checks ?? {}) };
}

/** The app a func of a `software` task drives: the app's own funcs drive it, cross-app funcs another; common funcs none. */
export function funcDrives(apps: readonly AppSchema[], software: string, func: string): string | undefined {
  const app = appOf(apps, software);
  if (app === undefined || !Object.hasOwn(app.funcs, func)) return undefined;
  return app.drives?.[func] ?? app.software;
}

/**
 * Where a task written by the task-generator model came from (docs/method.md): the task set it
 * belongs to, the seed tasks it was written from, the model and the prompt version.
 */
export const generatedProvenanceSchema = z.strictObject({
  set: z.string().regex(KEY_SEGMENT),
  seedTaskIds: z.array(z.string().min(1)).min(1),
  model: z.string().min(1),
  promptVersion: z.string().min(1),
});

/** The snapshot a task without `snapshot` reverts to (ScienceBoard's VManager.INIT_NAME). */
export const SCIENCEBOARD_SNAPSHOT = 'sci_bench';

/** A func or check as the file holds it, before its app's schema reads it. */
const rawStep = z.looseObject({ func: z.string().min(1) });
const rawCheck = z.looseObject({ type: z.string().min(1) });

/** The fields of a task file; `initialize` and `evaluate` items are read by the task's app afterwards. */
const taskFileSchema = z.strictObject({
  type: z.string().min(1),
  sort: z.string().min(1),
  steps: z.number().int().min(1).max(100),
  instruction: z.string().min(1),
  version: z.string(),
  /** The VM snapshot to revert to; without it ScienceBoard uses "sci_bench" (Lean's tasks name none). */
  snapshot: z.string().optional(),
  initialize: z.array(rawStep),
  evaluate: z.array(rawCheck),
  /** Celestia: the bodies its state dump reports on. */
  query: z.array(querySchema).optional(),
  ans: z.string().optional(),
  penalty: z.unknown().optional(),
  /** Set on generated tasks, which have no `evaluate` checks: only the judge says whether a rollout solved one. */
  generated: generatedProvenanceSchema.optional(),
});

export type ScienceBoardTask = Omit<z.output<typeof taskFileSchema>, 'initialize' | 'evaluate'> & {
  initialize: InitializeStep[];
  evaluate: Evaluator[];
};

/** A task with the id it is known by (its file name without `.json`, e.g. `A-01`). */
export interface Task extends ScienceBoardTask {
  readonly id: string;
  /**
   * What the pipeline does not know or will not run in the file, each in words naming it
   * (`initialize[2]: func "frobnicate" is not known for Celestia (known: ...)`; the loader adds
   * Python predicates that do not compile); absent when there is nothing. Unknown items are left
   * out of `initialize` and `evaluate`: the task is never run.
   */
  readonly unknown?: readonly string[];
}

/** A task id is one segment of its storage keys (core/keys.ts). */
export const TASK_ID = KEY_SEGMENT;

/**
 * Validates one task, reading its funcs and checks by the schemas of `apps`; a broken file throws a
 * ValidationError naming the task and every bad field. Funcs and checks the task's app does not
 * know are listed in `unknown` instead.
 */
export function parseTask(apps: readonly AppSchema[], raw: unknown, id: string): Task {
  if (!TASK_ID.test(id)) throw new Error(`task id "${id}" is not a valid id (letters, digits, . _ -; no "..")`);
  const source = `task ${id}`;
  const file = parseOrThrow(taskFileSchema, raw, source);
  const problems: string[] = [];
  const unknown: string[] = [];
  const app = appOf(apps, file.type);
  if (app === undefined) unknown.push(`type: application "${file.type}" is not known (known: ${apps.map((a) => a.software).join(', ')})`);
  const read = <T>(items: ReadonlyArray<Record<string, unknown>>, field: 'initialize' | 'evaluate', by: 'func' | 'type', table: Readonly<Record<string, z.ZodType>>): T[] => {
    const known: T[] = [];
    for (const [i, item] of items.entries()) {
      const name = item[by] as string;
      const schema = Object.hasOwn(table, name) ? table[name] : undefined;
      if (schema === undefined) {
        unknown.push(`${field}[${i}]: ${by === 'func' ? 'func' : 'check'} "${name}" is not known for ${file.type} (known: ${Object.keys(table).join(', ')})`);
        continue;
      }
      const parsed = schema.safeParse(item);
      if (parsed.success) known.push(parsed.data as T);
      else problems.push(...parsed.error.issues.map((issue) => `${formatPath([field, i, ...issue.path])}: ${issue.message}`));
    }
    return known;
  };
  const initialize = read<InitializeStep>(file.initialize, 'initialize', 'func', funcsOf(apps, file.type));
  const evaluate = read<Evaluator>(file.evaluate, 'evaluate', 'type', checksOf(apps, file.type));
  if (file.evaluate.length === 0 && file.generated === undefined) problems.push('evaluate: expected at least one check (only generated tasks have none)');
  problems.push(...(app?.initializeProblems?.(initialize) ?? []));
  if (problems.length > 0) throw new ValidationError(source, problems);
  const task: Task = { id, ...file, initialize, evaluate };
  return unknown.length > 0 ? { ...task, unknown } : task;
}

/** JSON.parse with the source text of each primitive value (ES2025; Node 22 and later). */
type Reviver = (this: unknown, key: string, value: unknown, context?: { readonly source?: string }) => unknown;
const parseJsonWithSource = JSON.parse as (text: string, reviver: Reviver) => unknown;

/**
 * A task file's text read as parseTask reads its object, except that the numbers of the fields its
 * app lists in `verbatimNumbers` (KAlgebra's plot points) keep the file's spelling, as text: the
 * app receives them as written (ScienceBoard sends them with Python's json, which keeps `-1.0`),
 * which JavaScript's numbers would not. A file that is not JSON throws a ValidationError naming the task.
 */
export function parseTaskText(apps: readonly AppSchema[], text: string, id: string): Task {
  const spellings = new WeakMap<object, Map<string, string>>();
  let raw: unknown;
  try {
    raw = parseJsonWithSource(text, function (key, value, context) {
      if (typeof value !== 'number') return value;
      if (context?.source === undefined) throw new Error('this JavaScript engine does not give JSON source text (Node 22 or later does)');
      const holder = this as object;
      const map = spellings.get(holder) ?? new Map<string, string>();
      spellings.set(holder, map.set(key, context.source));
      return value;
    });
  } catch (err) {
    throw new ValidationError(`task ${id}`, [`the file is not JSON: ${(err as Error).message}`]);
  }
  return parseTask(apps, withVerbatimNumbers(apps, raw, spellings, id), id);
}

/** The task file's object with the numbers of its app's `verbatimNumbers` fields replaced by their spelling. */
function withVerbatimNumbers(apps: readonly AppSchema[], raw: unknown, spellings: WeakMap<object, Map<string, string>>, id: string): unknown {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const file = raw as { type?: unknown; evaluate?: unknown };
  const table = typeof file.type === 'string' ? appOf(apps, file.type)?.verbatimNumbers : undefined;
  if (table === undefined || !Array.isArray(file.evaluate)) return raw;
  const problems: string[] = [];
  // Numbers become their spelling; a string among them would reach ScienceBoard's app as a string, so it is refused.
  const spell = (value: unknown, path: ReadonlyArray<string | number>): unknown => {
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value).map(([key, item]): [string, unknown] => {
      const at = [...path, Array.isArray(value) ? Number(key) : key];
      if (typeof item === 'number') return [key, spellings.get(value)?.get(key) ?? item];
      if (typeof item === 'string') problems.push(`${formatPath(at)}: expected a number, found the string ${JSON.stringify(item)}`);
      return [key, spell(item, at)];
    });
    return Array.isArray(value) ? entries.map(([, item]) => item) : Object.fromEntries(entries);
  };
  const evaluate = file.evaluate.map((check: unknown, i) => {
    const type = (check as { type?: unknown } | null)?.type;
    const field = typeof type === 'string' && Object.hasOwn(table, type) ? table[type] : undefined;
    if (field === undefined || !Object.hasOwn(check as object, field)) return check;
    return { ...(check as object), [field]: spell((check as Record<string, unknown>)[field], ['evaluate', i, field]) };
  });
  if (problems.length > 0) throw new ValidationError(`task ${id}`, problems);
  return { ...file, evaluate };
}

/**
 * The Python sources of a task, by where they are (`evaluate[0].key`), as its app's `python`
 * table says ScienceBoard evaluates them: checked to compile when the task is loaded, run in the
 * predicate sandbox (io/predicates/) when it is evaluated.
 */
export function pythonSources(apps: readonly AppSchema[], task: ScienceBoardTask): Array<{ readonly field: string; readonly source: string }> {
  const table = appOf(apps, task.type)?.python ?? {};
  const out: Array<{ field: string; source: string }> = [];
  for (const [i, check] of task.evaluate.entries()) {
    const fields = Object.hasOwn(table, check.type) ? table[check.type] : undefined;
    for (const [name, when] of Object.entries(fields ?? {})) {
      const source = (check as Record<string, unknown>)[name];
      if (typeof source === 'string' && (when === 'always' || isLambda(source))) out.push({ field: `evaluate[${i}].${name}`, source });
    }
  }
  return out;
}

/** Whether ScienceBoard treats the text as a lambda to evaluate (ChimeraX tests `startswith("lambda")`). */
export const isLambda = (source: string): boolean => source.trimStart().startsWith('lambda');

/** Whether rollouts of the task can be scored by its own checks (generated tasks are judged instead). */
export const hasEvaluators = (task: ScienceBoardTask): boolean => task.evaluate.length > 0;
