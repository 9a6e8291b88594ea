import { z } from 'zod';
import { parsePythonJson } from '../../core/python-json';
import type { CheckResult } from '../../core/evaluation';
import type { VmHttp } from '../../io/vm-http';
import { VmHttpError } from '../../io/vm-http-error';
import { sandboxChecks, type PythonCheck, type VmApp, type VmAppContext } from '../vm-app';

/**
 * ChimeraX on a ScienceBoard VM, as sci/ChimeraX/chimerax.py and task.py run it: every command
 * goes through the VM server's POST /chimerax/run {command, port}, which forwards it to ChimeraX's
 * REST server (`remotecontrol rest start json true port «PORTLIKE»`) and returns its JSON answer;
 * a command succeeded when the answer's `error` is null. Funcs: `clear_log` (log clear), `open`
 * (open <name>), `turn` (turn <axis> <angle>), `alphafold_match` (alphafold match <name>), `color`
 * (color <style>, or `rainbow`), `destroy`. After the stop, whatever the checks (as ScienceBoard's
 * eval does first), `states /home/user/Downloads <stamp>` has ChimeraX write its states dump (a flat
 * JSON object, Python's json.dump) that /read then fetches; the `states`
 * checks run on it in the predicate sandbox (their `key`, `find` and `pattern` are Python's), the
 * `file` checks there too on the VM file's text (`value` may be a lambda); `info` checks compare
 * the note lines ChimeraX logs for `info <key>` with `value` as sets.
 */

export const STATES_DIR = '/home/user/Downloads';

const restAnswer = z.looseObject({
  'log messages': z.looseObject({ note: z.array(z.string()).default([]) }).optional(),
  error: z.unknown(),
});

export interface ChimeraxReply {
  readonly notes: string[];
  /** ChimeraX's error message, or null when the command ran. */
  readonly error: string | null;
}

export async function runChimerax(vmHttp: VmHttp, port: number, command: string): Promise<ChimeraxReply> {
  // The VM server's client waits the context's appTimeoutMs (ScienceBoard's 240 s) for ChimeraX's answer.
  const answer = await vmHttp.json({ method: 'POST', path: '/chimerax/run', json: { command, port }, idempotent: false }, restAnswer);
  const error = answer.error;
  const message = error === null || error === undefined ? null : typeof (error as { message?: unknown }).message === 'string' ? (error as { message: string }).message : JSON.stringify(error);
  return { notes: answer['log messages']?.note ?? [], error: message };
}

/** The ChimeraX command of one of its funcs, as task.py builds it; undefined when the func is not ChimeraX's. */
export function chimeraxCommand(func: string, step: Readonly<Record<string, unknown>>): string | undefined {
  switch (func) {
    case 'clear_log':
      return 'log clear';
    case 'destroy':
      return 'destroy';
    case 'open':
      return `open ${String(step.name)}`;
    case 'turn':
      return `turn ${String(step.axis)} ${String(step.angle)}`;
    case 'alphafold_match':
      return `alphafold match ${String(step.name)}`;
    case 'color':
      return step.style === 'rainbow' ? 'rainbow' : `color ${String(step.style)}`;
    default:
      return undefined;
  }
}

async function readStates(context: VmAppContext): Promise<Record<string, unknown>> {
  const stamp = String(Date.now());
  const ran = await runChimerax(context.vmHttp, context.appPort, `states ${STATES_DIR} ${stamp}`);
  if (ran.error !== null) throw new Error(`ChimeraX refused its states dump: ${ran.error}`);
  const text = await context.client.readFile(`${STATES_DIR}/${stamp}.json`, { timeoutMs: context.appTimeoutMs });
  // The bundle writes it with Python's json.dump: NaN and Infinity are numbers there, and reach the sandbox as such.
  let states: unknown;
  try {
    states = parsePythonJson(text);
  } catch (err) {
    throw new Error(`the states dump is not JSON: ${(err as Error).message}`);
  }
  if (states === null || typeof states !== 'object' || Array.isArray(states)) throw new Error('the states dump is not a JSON object');
  return states as Record<string, unknown>;
}

export const chimeraxVm: VmApp = {
  software: 'ChimeraX',
  session(_task, context) {
    return {
      async initialize(func, step) {
        const command = chimeraxCommand(func, step);
        if (command === undefined) return false;
        const ran = await runChimerax(context.vmHttp, context.appPort, command);
        if (ran.error !== null) throw new Error(`ChimeraX refused ${JSON.stringify(command)}: ${ran.error}`);
        return true;
      },
      async ready(timeoutMs) {
        // Any REST answer proves ChimeraX runs; the VM server answers 500 while nothing listens on the port.
        await context.vmHttp.json({ method: 'POST', path: '/chimerax/run', json: { command: 'version', port: context.appPort }, idempotent: true, timeoutMs, retries: 0 }, restAnswer);
      },
      async evaluate(checks) {
        if (checks.length === 0) return [];
        const results: CheckResult[] = [];
        // As ScienceBoard's eval, the states dump comes first whatever the checks: a ChimeraX that is not running fails here.
        const dump = await readStates(context);
        const states = checks.filter(({ check }) => check.type === 'states');
        if (states.length > 0) {
          const python = ({ check }: (typeof states)[number]): PythonCheck => ({
            kind: 'states',
            key: String(check.key),
            ...(typeof check.find === 'string' ? { find: check.find } : {}),
            // A null value asks that no such state exists; an absent one means the check has a pattern.
            ...(Object.hasOwn(check, 'value') ? { value: check.value } : {}),
            ...(typeof check.pattern === 'string' ? { pattern: check.pattern } : {}),
          });
          results.push(...(await sandboxChecks(context.predicates, states.map((c) => ({ ...c, python: python(c) })), dump, "ChimeraX's states dump")));
        }
        const files = [];
        for (const entry of checks.filter(({ check }) => check.type === 'file')) {
          let content: string | null;
          try {
            content = await context.client.readFile(String(entry.check.key), { timeoutMs: context.appTimeoutMs });
          } catch (err) {
            // ScienceBoard's read_file answers None on a failed read, which fails the check; a VM that does not answer is its own fault.
            if (!(err instanceof VmHttpError && err.failure === 'status')) throw err;
            content = null;
          }
          files.push({ ...entry, python: { kind: 'file', value: String(entry.check.value), content } as PythonCheck });
        }
        results.push(...(await sandboxChecks(context.predicates, files, null, 'the VM file')));
        for (const { index, check } of checks.filter(({ check }) => check.type === 'info')) {
          const ran = await runChimerax(context.vmHttp, context.appPort, `info ${String(check.key)}`);
          const lines = new Set(ran.notes.flatMap((note) => note.trim().split('\n')).filter((line) => line !== ''));
          const wanted = new Set(Array.isArray(check.value) ? check.value.map(String) : []);
          const missing = [...wanted].filter((line) => !lines.has(line));
          const extra = [...lines].filter((line) => !wanted.has(line));
          const passed = missing.length === 0 && extra.length === 0;
          results.push({ index, type: 'info' as CheckResult['type'], passed, detail: `info ${String(check.key)}: ${passed ? `all ${wanted.size} lines` : `missing ${JSON.stringify(missing.slice(0, 3))}, unexpected ${JSON.stringify(extra.slice(0, 3))}`}` });
        }
        return results.sort((a, b) => a.index - b.index);
      },
    };
  },
};
