import { z } from 'zod';
import { pythonSource, wait, type AppSchema } from '../../core/task-common';

/**
 * GRASS GIS's funcs and checks (ScienceBoard sci/GrassGIS/task.py and grass.py): its funcs call
 * the state server of ScienceBoard's modified GRASS GIS (`/init/map`, `/init/layer`,
 * `/init/scale`, `/init/cmd`); `info` checks read its `/dump`, `db` checks the output of a GRASS
 * command run through `/gcmd`. Both take `key` of what was read — a Python lambda applied to it,
 * or else the key itself — and hold when `pred(found, value)` (default equality) is true.
 */
export const grassgis = {
  software: 'GrassGIS',
  display: 'GRASS GIS',
  domain: 'GIS',
  launch: /(^|[\s/"])grass(\s|$)/,
  funcs: {
    /** Opens the mapset `grassdb`/`location`/`mapset`. */
    map: z.strictObject({ func: z.literal('map'), grassdb: z.string().min(1), location: z.string().min(1), mapset: z.string().min(1), wait }),
    /** Adds the layer the query names (e.g. `{"name": "countries"}`). */
    layer: z.strictObject({ func: z.literal('layer'), query: z.record(z.string(), z.string()), wait }),
    /** Sets the map display's scale. */
    scale: z.strictObject({ func: z.literal('scale'), scale: z.number(), wait }),
    /** Opens the command console. */
    cmd: z.strictObject({ func: z.literal('cmd'), wait }),
  },
  checks: {
    info: z.strictObject({ type: z.literal('info'), key: pythonSource, value: z.json(), pred: pythonSource.optional() }),
    /** `cmd` run with `kwargs` (GRASS's `gs.read_command(cmd, **kwargs)`); `key` applies to its stdout. */
    db: z.strictObject({
      type: z.literal('db'),
      cmd: z.string().min(1),
      kwargs: z.record(z.string(), z.json()),
      key: pythonSource,
      value: z.json(),
      pred: pythonSource.optional(),
    }),
  },
  python: { info: { key: 'always', pred: 'always' }, db: { key: 'always', pred: 'always' } },
} as const satisfies AppSchema;
