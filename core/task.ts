import { z } from 'zod';
import { KEY_SEGMENT } from './keys';
import { parseOrThrow } from './validation';

/**
 * ScienceBoard tasks, one JSON file each (REFERENCE.md §2). The schema is strict: an unknown
 * `initialize` func or `evaluate` type is reported by name instead of being silently dropped.
 */

const unknownVariant = (field: string) => (issue: { code: string; input?: unknown; options?: unknown }) => {
  if (issue.code !== 'invalid_union') return undefined;
  const got = (issue.input as Record<string, unknown> | undefined)?.[field];
  const expected = Array.isArray(issue.options) ? issue.options.join(', ') : '';
  return `unknown ${field} ${JSON.stringify(got)} (expected one of ${expected})`;
};

const wait = z.number().min(0).max(600).optional();

/** A command as ScienceBoard writes it: one line (run by a shell when `shell` is true) or an argv list. */
const command = z.union([z.string().min(1), z.array(z.string()).min(1)]);

/**
 * Every func ScienceBoard's tasks use, whatever app they drive. Which of them a desktop can run
 * is a property of the desktop (core/requirements.ts), not of the task.
 */
export const initializeStepSchema = z.discriminatedUnion(
  'func',
  [
    /** Starts an app (its VM command line; «PORTLIKE» is the app state server's port). */
    z.strictObject({ func: z.literal('launch'), command, shell: z.boolean().optional(), wait }),
    /** Runs a command in the VM and waits for it (TeXstudio's tasks remove files with it). */
    z.strictObject({ func: z.literal('execute'), command, shell: z.boolean().optional(), wait }),
    /** Writes `text` to the VM file `path`. */
    z.strictObject({ func: z.literal('touch'), text: z.string(), path: z.string().min(1), wait }),
    /** KAlgebra: 0 calculator, 1 2D graph, 2 3D graph, 3 dictionary. */
    z.strictObject({ func: z.literal('tab'), index: z.number().int().min(0).max(3), wait }),
    z.strictObject({ func: z.literal('func_2d'), expr: z.string().min(1), wait }),
    z.strictObject({ func: z.literal('func_3d'), expr: z.string().min(1), wait }),
    /** ChimeraX commands sent to its REST server (`log clear`, `open <name>`, `turn <axis> <angle>`). */
    z.strictObject({ func: z.literal('chimerax_clear_log'), wait }),
    z.strictObject({ func: z.literal('chimerax_open'), name: z.string().min(1), wait }),
    z.strictObject({ func: z.literal('chimerax_turn'), axis: z.string().min(1), angle: z.number(), wait }),
  ],
  { error: unknownVariant('func') },
);

/** A command as one line, for matching and messages (an argv list joined by spaces). */
export const commandLine = (command: string | readonly string[]): string => (typeof command === 'string' ? command : command.join(' '));

const point = z.array(z.number()).min(2).max(3);

export const evaluatorSchema = z.discriminatedUnion(
  'type',
  [
    /** Variable `key` prints exactly `value`; "#UNDEF" means it must not exist. */
    z.strictObject({ type: z.literal('var'), key: z.string().min(1), value: z.string() }),
    /** Variable `key` is numerically `value` within 1e-6. */
    z.strictObject({ type: z.literal('val'), key: z.string().min(1), value: z.number() }),
    /**
     * The plotted functions: `#SIZE` = how many; or points with, per point, whether it lies on a
     * plotted function. `value` is keyed by the point written as "(x, y)"; extra keys (e.g.
     * "color", "style") ask about the plot's look.
     */
    z.strictObject({
      type: z.literal('eqn'),
      key: z.union([z.literal('#SIZE'), z.array(point).min(1)]),
      value: z.union([z.number().int().min(0), z.record(z.string(), z.union([z.boolean(), z.string(), z.number()]))]),
    }),
    /**
     * TeXstudio: the file equals its initial `touch` text with every `source` replaced by
     * `target`; without them, the file is unchanged.
     */
    z
      .strictObject({ type: z.literal('file'), path: z.string().min(1), source: z.string().min(1).optional(), target: z.string().optional() })
      .refine((c) => (c.source === undefined) === (c.target === undefined), { message: 'source and target come together', path: ['target'] }),
    /** TeXstudio: the regular expression `pattern` is found in the file. */
    z.strictObject({ type: z.literal('include'), path: z.string().min(1), pattern: z.string().min(1) }),
    /** TeXstudio: `file`.tex in the folder `path` compiles with pdflatex (and bibtex when the task wrote a .bib). */
    z.strictObject({ type: z.literal('compile'), path: z.string().min(1), file: z.string().min(1) }),
    /** How the agent ended: DONE, FAIL, or ANS with `args` equal to the submitted answer. */
    z.strictObject({
      type: z.literal('stop'),
      value: z.enum(['DONE', 'FAIL', 'ANS']),
      args: z.array(z.string()).optional(),
    }),
  ],
  { error: unknownVariant('type') },
);

/**
 * Where a task written by the task-generator model came from (REFERENCE.md §1): the task set it
 * belongs to, the seed tasks it was written from, the model and the prompt version.
 */
export const generatedProvenanceSchema = z.strictObject({
  set: z.string().regex(KEY_SEGMENT),
  seedTaskIds: z.array(z.string().min(1)).min(1),
  model: z.string().min(1),
  promptVersion: z.string().min(1),
});

export const scienceBoardTaskSchema = z
  .strictObject({
    type: z.string().min(1),
    sort: z.string().min(1),
    steps: z.number().int().min(1).max(100),
    instruction: z.string().min(1),
    version: z.string(),
    snapshot: z.string(),
    initialize: z.array(initializeStepSchema),
    evaluate: z.array(evaluatorSchema),
    ans: z.string().optional(),
    penalty: z.unknown().optional(),
    /** Set on generated tasks, which have no `evaluate` checks: only the judge says whether a rollout solved one. */
    generated: generatedProvenanceSchema.optional(),
  })
  .superRefine((task, ctx) => {
    if (task.evaluate.length === 0 && task.generated === undefined) {
      ctx.addIssue({ code: 'custom', path: ['evaluate'], message: 'expected at least one check (only generated tasks have none)' });
    }
  });

export type InitializeStep = z.output<typeof initializeStepSchema>;
export type Evaluator = z.output<typeof evaluatorSchema>;

/** The evaluator types the schema knows, taken from it (so results can be validated by the same list). */
export const EVALUATOR_TYPES = evaluatorSchema.options.map((option) => option.shape.type.value) as [Evaluator['type'], ...Evaluator['type'][]];
export type ScienceBoardTask = z.output<typeof scienceBoardTaskSchema>;

/** A task with the id it is known by (its file name without `.json`, e.g. `A-01`). */
export interface Task extends ScienceBoardTask {
  readonly id: string;
}

/** A task id is one segment of its storage keys (core/keys.ts). */
export const TASK_ID = KEY_SEGMENT;

/** Validates one task; a failure throws a ValidationError naming the task and every bad field. */
export function parseTask(raw: unknown, id: string): Task {
  if (!TASK_ID.test(id)) throw new Error(`task id "${id}" is not a valid id (letters, digits, . _ -; no "..")`);
  return { id, ...parseOrThrow(scienceBoardTaskSchema, raw, `task ${id}`) };
}

/** Whether rollouts of the task can be scored by its own checks (generated tasks are judged instead). */
export const hasEvaluators = (task: ScienceBoardTask): boolean => task.evaluate.length > 0;

/** The `ans` values that mean "no replayable reference answer". */
export const hasReferenceAnswer = (task: ScienceBoardTask): boolean =>
  task.ans !== undefined && task.ans.trim() !== '' && task.ans.trim() !== 'N/A';
