import { z } from 'zod';

/**
 * The parts of a ScienceBoard task that every application shares (docs/formats.md), and the shape
 * in which each application (apps/<slug>/schema.ts) lists its own funcs and checks. ScienceBoard
 * runs an `initialize` item by its `func` name: the app task class's `_<func>` method if it has
 * one, else VTask's (`execute`, `launch`, `opt`, `append`), else base/init.py's `vm_<func>`
 * (`touch`, `download`). Every `evaluate` item of type `stop` is judged by base/task.py whatever
 * the app; the other types are the app's `_eval_<type>`.
 */

/** Seconds ScienceBoard pauses after the func (its `func(func, wait=0, **kwargs)`). */
export const wait = z.number().min(0).max(600).optional();

/** A command as ScienceBoard writes it: one line (run by a shell when `shell` is true) or an argv list. */
export const command = z.union([z.string().min(1), z.array(z.string()).min(1)]);

/** A Python lambda's source, as ScienceBoard writes `key`, `pred` and `find` (evaluated with `eval`). */
export const pythonSource = z.string().min(1);

/**
 * The funcs of every ScienceBoard VM task, whatever its app: VTask's and base/init.py's. Which of
 * them a desktop can run is a property of the desktop (core/requirements.ts), not of the task.
 */
export const commonFuncs = {
  /** Starts an app (its VM command line; «PORTLIKE» is the app state server's port). */
  launch: z.strictObject({ func: z.literal('launch'), command, shell: z.boolean().optional(), wait }),
  /** Runs a command in the VM and waits for it (tasks remove files with it). */
  execute: z.strictObject({ func: z.literal('execute'), command, shell: z.boolean().optional(), wait }),
  /** Writes `text` to the VM file `path`. */
  touch: z.strictObject({ func: z.literal('touch'), text: z.string(), path: z.string().min(1), wait }),
  /** Downloads `url` on the host running the task and copies it to the VM file `path` (needs the internet). */
  download: z.strictObject({ func: z.literal('download'), url: z.url(), path: z.string().min(1), wait }),
  /** Sets the VM server's accessibility-tree depth (its `/opt`): Celestia's tree is deep and slow to walk. */
  opt: z.strictObject({ func: z.literal('opt'), depth: z.number().int().min(1), wait }),
  /** Appends `content` to the VM file `path` (its `/append`). */
  append: z.strictObject({ func: z.literal('append'), path: z.string().min(1), content: z.string(), wait }),
} as const;

/** The checks of every app: how the agent ended, DONE, FAIL, or ANS with `args` equal to the submitted answer. */
export const commonChecks = {
  stop: z.strictObject({
    type: z.literal('stop'),
    value: z.enum(['DONE', 'FAIL', 'ANS']),
    args: z.array(z.string()).optional(),
  }),
} as const;

/** Funcs or checks by name; each schema's discriminant (`func` or `type`) is its name. */
export type SchemaTable = Readonly<Record<string, z.ZodType>>;

/**
 * One ScienceBoard application as the task schema sees it: its name in task files (`type`, data
 * folder), how people call it, its domain (the paper's table 1), what its launch commands run,
 * and its own funcs and checks. A func that drives another app (TeXstudio's `chimerax_open`)
 * names that app in `drives`.
 */
export interface AppSchema {
  /** As in task files' `type` and data/scienceboard/<software>/ (e.g. "GrassGIS"). */
  readonly software: string;
  /** How reports and people name it (e.g. "GRASS GIS"). */
  readonly display: string;
  /** Its ScienceBoard domain (e.g. "GIS"). */
  readonly domain: string;
  /** Matches the command lines of its launch steps. */
  readonly launch: RegExp;
  /** Its own `initialize` funcs, beyond the common ones. */
  readonly funcs: SchemaTable;
  /** Its own `evaluate` types, beyond `stop`. */
  readonly checks: SchemaTable;
  /** Funcs that drive another app, by func name: that app's software name. */
  readonly drives?: Readonly<Record<string, string>>;
  /**
   * The check fields ScienceBoard evaluates as Python, by check type and field: 'always' (it
   * calls `eval` on the text whatever it is) or 'lambda' (only text starting with "lambda").
   */
  readonly python?: Readonly<Record<string, Readonly<Record<string, 'always' | 'lambda'>>>>;
  /**
   * The check field, by check type, whose numbers reach the app as the task file spells them
   * (KAlgebra's plot points: its server names a point from the numbers as it received them, so
   * `-1.0` must not become `-1`). Task files are read with their spelling (core/task.ts
   * parseTaskText) and these numbers are kept as text from there to the request.
   */
  readonly verbatimNumbers?: Readonly<Record<string, string>>;
  /**
   * What is wrong with a task's `initialize` as a whole, beyond each func's own schema, in words
   * naming the field (Lean's tasks state exactly one theorem); nothing when it is right.
   */
  readonly initializeProblems?: (initialize: ReadonlyArray<{ readonly func: string }>) => string[];
}

/** One body a Celestia task's state dump reports on (the task file's `query`): its name and Celestia's selection type (1 star, 2 planet or moon, ...). */
export const querySchema = z.strictObject({ name: z.string(), type: z.number().int() });

/** A JSON number as text, e.g. `-1.0`, `33`, `1e-5`: how a task file spells a number kept verbatim. */
export const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * A number of a field listed in `verbatimNumbers`: its spelling in the task file, or (for a task
 * made in code) JavaScript's spelling of the number given.
 */
export const verbatimNumber = z.union([
  z.string().regex(JSON_NUMBER, 'expected a number as JSON writes it'),
  z.number().refine(Number.isFinite, 'expected a finite number').transform(String),
]);

/** A command as one line, for matching and messages (an argv list joined by spaces). */
export const commandLine = (command: string | readonly string[]): string => (typeof command === 'string' ? command : command.join(' '));

/** Whether a task has a replayable reference answer: an `ans` that is not empty and not "N/A". */
export const hasReferenceAnswer = (task: { readonly ans?: string }): boolean => task.ans !== undefined && task.ans.trim() !== '' && task.ans.trim() !== 'N/A';
