import { z } from 'zod';
import { wait, type AppSchema } from '../../core/task-common';

/** ScienceBoard's Lean tasks state exactly one theorem, with `query`, ending in `by sorry` (sci/Lean/task.py check_config). */
function leanProblems(initialize: ReadonlyArray<{ readonly func: string }>): string[] {
  const queries = [...initialize.entries()].filter(([, step]) => step.func === 'query');
  if (queries.length !== 1) return [`initialize: expected exactly one "query" func in a Lean task, found ${queries.length}`];
  // The step was read by the `query` schema below, which requires its `expr`.
  const [index, step] = queries[0] as [number, { readonly func: string; readonly expr?: string }];
  return step.expr?.endsWith('by sorry') === true ? [] : [`initialize[${index}].expr: expected the statement to end in "by sorry"`];
}

/**
 * Lean's funcs and checks (ScienceBoard sci/Lean/task.py). On a VM its funcs write the task's
 * file (/home/user/sci/Sci/Basic.lean, opened in VS Code): `import` and `open` lines, `def`s,
 * then the one `query` statement ending in `by sorry`. The verdict is the VM server's
 * `/lean/check` of that statement, so its checks are `placeholder`s (besides `stop`). Its tasks
 * name no snapshot (ScienceBoard then uses its default, "sci_bench").
 */
export const lean = {
  software: 'Lean',
  display: 'Lean',
  domain: 'Theorem proving',
  launch: /(^|[\s/])code(\s|$)/,
  funcs: {
    /** `import` of these libraries (the VM has Mathlib loaded, so ScienceBoard leaves it out). */
    import: z.strictObject({ func: z.literal('import'), libs: z.array(z.string().min(1)).min(1), wait }),
    /** `open` of these namespaces. */
    open: z.strictObject({ func: z.literal('open'), libs: z.array(z.string().min(1)).min(1), wait }),
    /** A definition the statement uses. */
    def: z.strictObject({ func: z.literal('def'), expr: z.string().min(1), wait }),
    /** The statement to prove, ending in `by sorry`. */
    query: z.strictObject({ func: z.literal('query'), expr: z.string().min(1), wait }),
  },
  checks: {
    /** Stands for the proof check of the query (ScienceBoard's Lean VMTask.eval). */
    placeholder: z.strictObject({ type: z.literal('placeholder') }),
  },
  initializeProblems: leanProblems,
} as const satisfies AppSchema;
