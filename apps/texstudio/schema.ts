import { z } from 'zod';
import { wait, type AppSchema } from '../../core/task-common';
import type { Evaluator } from '../../core/task';

/**
 * TeXstudio's funcs and checks (ScienceBoard sci/TeXstudio/task.py). Its documents are about the
 * other apps, so some tasks also start ChimeraX and drive it with `chimerax_*` funcs, which its
 * VMTask sends to ChimeraX's REST server (`log clear`, `open <name>`, `turn <axis> <angle>`).
 */
export const texstudio = {
  software: 'TeXstudio',
  display: 'TeXstudio',
  domain: 'Documents',
  launch: /(^|[\s/])texstudio(\s|$)/,
  funcs: {
    chimerax_clear_log: z.strictObject({ func: z.literal('chimerax_clear_log'), wait }),
    chimerax_open: z.strictObject({ func: z.literal('chimerax_open'), name: z.string().min(1), wait }),
    chimerax_turn: z.strictObject({ func: z.literal('chimerax_turn'), axis: z.string().min(1), angle: z.number(), wait }),
  },
  drives: { chimerax_clear_log: 'ChimeraX', chimerax_open: 'ChimeraX', chimerax_turn: 'ChimeraX' },
  checks: {
    /**
     * The file equals its initial `touch` text with every `source` replaced by `target`; without
     * them, the file is unchanged.
     */
    file: z
      .strictObject({ type: z.literal('file'), path: z.string().min(1), source: z.string().min(1).optional(), target: z.string().optional() })
      .refine((c) => (c.source === undefined) === (c.target === undefined), { message: 'source and target come together', path: ['target'] }),
    /** The regular expression `pattern` is found in the file. */
    include: z.strictObject({ type: z.literal('include'), path: z.string().min(1), pattern: z.string().min(1) }),
    /** `file`.tex in the folder `path` compiles with pdflatex (and bibtex when the task wrote a .bib). */
    compile: z.strictObject({ type: z.literal('compile'), path: z.string().min(1), file: z.string().min(1) }),
  },
} as const satisfies AppSchema;

/** TeXstudio's `file` check (ChimeraX has another). */
export type TeXFileCheck = z.output<typeof texstudio.checks.file>;
export const isTeXFileCheck = (check: Evaluator): check is TeXFileCheck => check.type === 'file' && 'path' in check;
