import { z } from 'zod';
import type { CheckResult } from '../../core/evaluation';
import { parsePythonJson } from '../../core/python-json';
import type { VmHttp } from '../../io/vm-http';
import { VmHttpError } from '../../io/vm-http-error';
import { infoCheck, sandboxChecks, type VmApp } from '../vm-app';

/**
 * GRASS GIS on a ScienceBoard VM, as sci/GrassGIS/grass.py and task.py run it: the GUI's Flask
 * server (FLASK_PORT in the launch command; ScienceBoard's VMManager port) at the VM's address,
 * 240 s per request (the context's appTimeoutMs). Its funcs: `cmd` GET /init/cmd, `map` POST /init/map {grassdb, location,
 * mapset}, `layer` POST /init/layer {query}, `scale` POST /init/scale {scale}; each succeeds when
 * the app answers exactly "OK". After the stop one GET /dump answers the dump the `info` checks
 * read; each `db` check runs its GRASS module through POST /gcmd {cmd, kwargs} and reads the
 * answer's `stdout` with its `key` and `pred`. Both are read in Python's JSON dialect (NaN and
 * Infinity are numbers). A /gcmd that answers the text `ERROR` (the GUI timed out) or a 500 (the
 * module failed, e.g. on a missing map) fails its check, with the reason in its detail, as
 * ScienceBoard's `.json()` raising there fails the task (sci/GrassGIS/task.py).
 */

const dumpAnswer = z.record(z.string(), z.unknown());

async function expectOk(http: VmHttp, request: Parameters<VmHttp['text']>[0]): Promise<void> {
  const said = await http.text(request);
  if (said.trim() !== 'OK') throw http.protocolError(request, `expected "OK", got ${JSON.stringify(said.slice(0, 200))}`);
}

/** A GRASS module's run through /gcmd: its stdout, or why the check that asked for it fails. */
async function runModule(appHttp: VmHttp, cmd: unknown, kwargs: unknown): Promise<{ stdout: unknown } | { failed: string }> {
  let text: string;
  try {
    text = await appHttp.text({ method: 'POST', path: '/gcmd', json: { cmd, kwargs }, idempotent: false });
  } catch (err) {
    if (err instanceof VmHttpError && err.failure === 'status' && err.status === 500) return { failed: `the module failed (${err.message})` };
    throw err;
  }
  let answer: unknown;
  try {
    answer = parsePythonJson(text);
  } catch {
    return { failed: `/gcmd answered ${JSON.stringify(text.trim().slice(0, 200))}, not JSON (the GUI did not run the module in time)` };
  }
  if (answer === null || typeof answer !== 'object' || !Object.hasOwn(answer, 'stdout')) return { failed: `/gcmd answered no stdout: ${text.trim().slice(0, 200)}` };
  return { stdout: (answer as { stdout: unknown }).stdout };
}

export const grassVm: VmApp = {
  software: 'GrassGIS',
  session(_task, { appHttp, predicates }) {
    const post = (path: string, json: unknown) => expectOk(appHttp, { method: 'POST', path, json, idempotent: true });
    return {
      async initialize(func, step) {
        switch (func) {
          case 'cmd':
            await expectOk(appHttp, { method: 'GET', path: '/init/cmd', idempotent: true });
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
          const dump = await appHttp.json({ method: 'GET', path: '/dump', idempotent: true }, dumpAnswer, parsePythonJson);
          results.push(...(await sandboxChecks(predicates, info.map((c) => ({ ...c, python: infoCheck(c.check) })), dump, "GRASS GIS's /dump")));
        }
        // Each db check runs its module; its key and pred read the run's stdout (not retried once it reached the app: v.to.db may write).
        const db = [];
        for (const entry of checks.filter(({ check }) => check.type === 'db')) {
          const ran = await runModule(appHttp, entry.check.cmd, entry.check.kwargs);
          if ('failed' in ran) results.push({ index: entry.index, type: 'db' as CheckResult['type'], passed: false, detail: `${String(entry.check.cmd)}: ${ran.failed}` });
          else db.push({ ...entry, python: infoCheck(entry.check, ran.stdout) });
        }
        results.push(...(await sandboxChecks(predicates, db, null, 'the stdout of its GRASS module (/gcmd)')));
        return results.sort((a, b) => a.index - b.index);
      },
    };
  },
};
