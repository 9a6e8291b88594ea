import { z } from 'zod';
import { pythonSource, type AppSchema } from '../../core/task-common';

/**
 * Celestia's checks (ScienceBoard sci/Celestia/task.py). It has no funcs of its own: its tasks
 * set the VM's tree depth (`opt`) and launch ScienceBoard's modified celestia-qt6, whose state
 * server answers `/dump` with the task's `query` (the bodies it should report on). Each `info`
 * check takes `key` of that dump — a Python lambda applied to it, or else the key itself — and
 * holds when `pred(found, value)` (a Python lambda; default equality) is true.
 */

export const celestia = {
  software: 'Celestia',
  display: 'Celestia',
  domain: 'Astronomy',
  launch: /(^|[\s/])celestia(-qt\d)?(\s|$)/,
  funcs: {},
  checks: {
    info: z.strictObject({ type: z.literal('info'), key: pythonSource, value: z.json(), pred: pythonSource.optional() }),
  },
  python: { info: { key: 'always', pred: 'always' } },
} as const satisfies AppSchema;
