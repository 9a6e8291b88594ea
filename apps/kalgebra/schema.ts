import { z } from 'zod';
import { verbatimNumber, wait, type AppSchema } from '../../core/task-common';

/**
 * KAlgebra's funcs and checks (ScienceBoard sci/KAlgebra/task.py): its funcs drive ScienceBoard's
 * modified KAlgebra through its state server; its checks read the app's variables and plots.
 */

/** A plot point: its coordinates as the task file spells them (`verbatimNumbers` below). */
const point = z.array(verbatimNumber).min(2).max(3);

export const kalgebra = {
  software: 'KAlgebra',
  display: 'KAlgebra',
  domain: 'Algebra',
  launch: /(^|[\s/])kalgebra(\s|$)/,
  funcs: {
    /** 0 calculator, 1 2D graph, 2 3D graph, 3 dictionary. */
    tab: z.strictObject({ func: z.literal('tab'), index: z.number().int().min(0).max(3), wait }),
    func_2d: z.strictObject({ func: z.literal('func_2d'), expr: z.string().min(1), wait }),
    func_3d: z.strictObject({ func: z.literal('func_3d'), expr: z.string().min(1), wait }),
  },
  checks: {
    /** Variable `key` prints exactly `value`; "#UNDEF" means it must not exist. */
    var: z.strictObject({ type: z.literal('var'), key: z.string().min(1), value: z.string() }),
    /** Variable `key` is numerically `value` within 1e-6. */
    val: z.strictObject({ type: z.literal('val'), key: z.string().min(1), value: z.number() }),
    /**
     * The plotted functions: `#SIZE` = how many; or points with, per point, whether it lies on a
     * plotted function. `value` is keyed by the point as the app's server names it, "(x, y)" from
     * the numbers as sent (so `key` keeps the file's spelling: `-1.0` stays `-1.0`); extra keys
     * (e.g. "color", "style") ask about the plot's look.
     */
    eqn: z.strictObject({
      type: z.literal('eqn'),
      key: z.union([z.literal('#SIZE'), z.array(point).min(1)]),
      value: z.union([z.number().int().min(0), z.record(z.string(), z.union([z.boolean(), z.string(), z.number()]))]),
    }),
  },
  verbatimNumbers: { eqn: 'key' },
} as const satisfies AppSchema;
