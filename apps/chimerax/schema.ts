import { z } from 'zod';
import { pythonSource, wait, type AppSchema } from '../../core/task-common';

/**
 * ChimeraX's funcs and checks (ScienceBoard sci/ChimeraX/task.py). Each func is one ChimeraX
 * command sent to its REST server's `run`; the checks read the states dump of ScienceBoard's
 * SessionStates bundle (`states`), the log of an `info` command (`info`), or a file (`file`).
 */
export const chimerax = {
  software: 'ChimeraX',
  display: 'ChimeraX',
  domain: 'Biochemistry',
  launch: /(^|[\s/])chimerax(-daily)?(\s|$)/,
  funcs: {
    /** `log clear`. */
    clear_log: z.strictObject({ func: z.literal('clear_log'), wait }),
    /** `open <name>`: a PDB id or a file. */
    open: z.strictObject({ func: z.literal('open'), name: z.string().min(1), wait }),
    /** `turn <axis> <angle>`. */
    turn: z.strictObject({ func: z.literal('turn'), axis: z.string().min(1), angle: z.number(), wait }),
    /** `color <style>`, or `rainbow` for the style "rainbow". */
    color: z.strictObject({ func: z.literal('color'), style: z.string().min(1), wait }),
    /** `alphafold match <name>`: a UniProt id. */
    alphafold_match: z.strictObject({ func: z.literal('alphafold_match'), name: z.string().min(1), wait }),
    /** `destroy`. */
    destroy: z.strictObject({ func: z.literal('destroy'), wait }),
  },
  checks: {
    /**
     * An entry of the states dump. `key` is the entry's name, or a Python lambda choosing names
     * (the first that matches is read; with a null `value`, that none matches). With `find`, a
     * lambda `(name, value) -> bool` picks the first entry and `key` maps its name to the one
     * read. It holds when the entry equals `value`, or when `pattern` is found in it (as JSON
     * unless it is a string).
     */
    states: z
      .strictObject({ type: z.literal('states'), key: pythonSource, find: pythonSource.optional(), value: z.json().optional(), pattern: z.string().optional() })
      .refine((c) => c.value !== undefined || c.pattern !== undefined, { message: 'expected value or pattern', path: ['value'] }),
    /** The lines logged by `info <key>` are, as a set, `value`. */
    info: z.strictObject({ type: z.literal('info'), key: z.string().min(1), value: z.array(z.string()) }),
    /** The VM file `key` contains `value` (or what the Python lambda `value`, taking no argument, returns). */
    file: z.strictObject({ type: z.literal('file'), key: z.string().min(1), value: z.string().min(1) }),
  },
  python: { states: { key: 'lambda', find: 'always' }, file: { value: 'lambda' } },
} as const satisfies AppSchema;
