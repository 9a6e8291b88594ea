import { z } from 'zod';
import type { CheckResult } from '../../core/evaluation';
import type { VmHttp } from '../../activities/desktop/osworld/http';
import { infoCheck, sandboxChecks, type VmApp } from '../vm-app';

/**
 * GRASS GIS on a ScienceBoard VM, as sci/GrassGIS/grass.py and task.py run it: the GUI's Flask
 * server (FLASK_PORT in the launch command; ScienceBoard's VMManager port) at the VM's address,
 * 240 s per request. Its funcs: `cmd` GET /init/cmd, `map` POST /init/map {grassdb, location,
 * mapset}, `layer` POST /init/layer {query}, `scale` POST /init/scale {scale}; each succeeds when
 * the app answers exactly "OK". After the stop one GET /dump answers the dump the `info` checks
 * read; each `db` check runs its GRASS module through POST /gcmd {cmd, kwargs} and reads the
 * answer's `stdout` with its `key` and `pred`.
 */

export const APP_TIMEOUT_MS = 240_000;

const dumpAnswer = z.record(z.string(), z.unknown());
const gcmdAnswer = z.looseObject({ stdout: z.unknown() });

async function expectOk(http: VmHttp, request: Parameters<VmHttp['text']>[0]): Promise<void> {
  const said = await http.text(request);
  if (said.trim() !== 'OK') throw http.protocolError(request, `expected "OK", got ${JSON.stringify(said.slice(0, 200))}`);
}

export const grassVm: VmApp = {
  software: 'GrassGIS',
  session(_task, { appHttp, predicates }) {
    const post = (path: string, json: unknown) => expectOk(appHttp, { method: 'POST', path, json, idempotent: true, timeoutMs: APP_TIMEOUT_MS });
    return {
      async initialize(func, step) {
        switch (func) {
          case 'cmd':
            await expectOk(appHttp, { method: 'GET', path: '/init/cmd', idempotent: true, timeoutMs: APP_TIMEOUT_MS });
            return true;
          case 'map':
            await post('/init/map', { grassdb: step.grassdb, location: step.location, mapset: step.mapset });
            return true;
          case 'layer':
            await post('/init/layer', { query: step.query });
            return true;
          case 'scale':
            await post('/init/scale', { scale: step.scale });
            return true;
          default:
            return false;
        }
      },
      async ready(timeoutMs) {
        await appHttp.text({ method: 'GET', path: '/version', idempotent: true, timeoutMs, retries: 0 });
      },
      async evaluate(checks) {
        const results: CheckResult[] = [];
        const info = checks.filter(({ check }) => check.type === 'info');
        if (info.length > 0) {
          const dump = await appHttp.json({ method: 'GET', path: '/dump', idempotent: true, timeoutMs: APP_TIMEOUT_MS }, dumpAnswer);
          results.push(...(await sandboxChecks(predicates, info.map((c) => ({ ...c, python: infoCheck(c.check) })), dump, "GRASS GIS's /dump")));
        }
        // Each db check runs its module; its key and pred read the run's stdout (not retried once it reached the app: v.to.db may write).
        const db = [];
        for (const entry of checks.filter(({ check }) => check.type === 'db')) {
          const { cmd, kwargs } = entry.check;
          const ran = await appHttp.json({ method: 'POST', path: '/gcmd', json: { cmd, kwargs }, idempotent: false, timeoutMs: APP_TIMEOUT_MS }, gcmdAnswer);
          db.push({ ...entry, python: infoCheck(entry.check, ran.stdout ?? null) });
        }
        results.push(...(await sandboxChecks(predicates, db, null, 'the stdout of its GRASS module (/gcmd)')));
        return results.sort((a, b) => a.index - b.index);
      },
    };
  },
};
