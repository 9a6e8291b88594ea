import { z } from 'zod';
import type { CheckResult } from '../../core/evaluation';
import type { VmHttp } from '../../activities/desktop/osworld/http';
import type { EvaluatePredicates, VmApp, VmAppContext } from '../vm-app';

/**
 * ChimeraX on a ScienceBoard VM, as sci/ChimeraX/chimerax.py and task.py run it: every command
 * goes through the VM server's POST /chimerax/run {command, port}, which forwards it to ChimeraX's
 * REST server (`remotecontrol rest start json true port «PORTLIKE»`) and returns its JSON answer;
 * a command succeeded when the answer's `error` is null. Funcs: `clear_log` (log clear), `open`
 * (open <name>), `turn` (turn <axis> <angle>), `alphafold_match` (alphafold match <name>), `color`
 * (color <style>, or `rainbow`), `destroy`. After the stop, `states /home/user/Downloads <stamp>`
 * has ChimeraX write its states dump (a flat JSON object) that /read then fetches; `states`
 * checks read it (`key` a dotted path or a lambda choosing keys, `find` a lambda choosing entries,
 * `value` compared with Python's ==, `pattern` searched in the value, `value: null` meaning no
 * such key), `info` checks compare the note lines of `info <key>` as a set, `file` checks look
 * for `value` (or what its lambda returns) in a VM file.
 */

export const REST_TIMEOUT_MS = 240_000;
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
  const answer = await vmHttp.json({ method: 'POST', path: '/chimerax/run', json: { command, port }, idempotent: false, timeoutMs: REST_TIMEOUT_MS }, restAnswer);
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

const isLambda = (source: unknown): source is string => typeof source === 'string' && source.trimStart().startsWith('lambda');
/** A Python string literal of `text` (JSON's escapes are Python's). */
const py = (text: string): string => JSON.stringify(text);

/** Python's ==, for JSON values: numbers and booleans by value (True == 1), lists and dicts deeply. */
export function pythonEquals(a: unknown, b: unknown): boolean {
  const numeric = (v: unknown) => typeof v === 'number' || typeof v === 'boolean';
  if (numeric(a) && numeric(b)) return Number(a) === Number(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => pythonEquals(v, b[i]));
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && pythonEquals((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return a === b;
}

/** json.dumps with Python's default separators, for searching a pattern in a value that is not a string. */
export function pythonJsonDumps(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(', ')}]`;
  if (value !== null && typeof value === 'object') return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${pythonJsonDumps(v)}`).join(', ')}}`;
  if (value === null) return 'null';
  if (typeof value === 'number' && Number.isInteger(value) && !Object.is(value, -0)) return String(value);
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * The state keys a one-argument lambda (`key`) or a two-argument one (`find`) is true for, in the
 * dump's order: one sandbox run with one check per key. A key for which the lambda raises is not
 * picked (in ScienceBoard the raise fails the whole check; here the check fails for lack of a key).
 */
async function keysWhere(predicates: EvaluatePredicates, states: Record<string, unknown>, source: string, withValue: boolean): Promise<string[]> {
  const keys = Object.keys(states);
  const call = (k: string) => (withValue ? `(${source})(${py(k)}, states[${py(k)}])` : `(${source})(${py(k)})`);
  const outcomes = await predicates(keys.map((k) => ({ key: `lambda states: bool(${call(k)})`, value: true })), states);
  return keys.filter((_, i) => outcomes[i]?.ok === true);
}

/** The key `key(meta)` names (a lambda returning a key), found among the dump's keys. */
async function keyNamed(predicates: EvaluatePredicates, states: Record<string, unknown>, source: string, meta: string): Promise<string | undefined> {
  const keys = Object.keys(states);
  const outcomes = await predicates(keys.map((k) => ({ key: `lambda states: (${source})(${py(meta)}) == ${py(k)}`, value: true })), states);
  return keys.find((_, i) => outcomes[i]?.ok === true);
}

/** One `states` check as task.py's _eval_states reads the dump. */
export async function checkStates(predicates: EvaluatePredicates, index: number, check: Readonly<Record<string, unknown>>, states: Record<string, unknown>): Promise<CheckResult> {
  const result = (passed: boolean, detail: string): CheckResult => ({ index, type: 'states' as CheckResult['type'], passed, detail });
  const key = String(check.key);
  const checkNull = Object.hasOwn(check, 'value') && check.value === null;
  let rawKey: string | undefined;
  if (typeof check.find === 'string') {
    const found = await keysWhere(predicates, states, check.find, true);
    if (checkNull) return result(found.length === 0, `expected no state that find ${check.find} picks, found ${found.length}`);
    const meta = found[0];
    if (meta === undefined) return result(false, `no state matches find ${check.find}`);
    rawKey = isLambda(key) ? await keyNamed(predicates, states, key, meta) : key;
    if (rawKey === undefined) return result(false, `key ${key} of ${meta} names no state`);
  } else if (isLambda(key)) {
    const found = await keysWhere(predicates, states, key, false);
    if (checkNull) return result(found.length === 0, `expected no state that key ${key} picks, found ${found.slice(0, 3).join(', ') || 'none'}`);
    rawKey = found[0];
    if (rawKey === undefined) return result(false, `no state matches key ${key}`);
  } else {
    // ScienceBoard tests `None not in states` here (always true); a null value means the key is absent.
    if (checkNull) return result(!Object.hasOwn(states, key), `expected no state ${key}, ${Object.hasOwn(states, key) ? 'found one' : 'none'}`);
    rawKey = key;
  }
  if (!Object.hasOwn(states, rawKey)) return result(false, `no state ${rawKey}`);
  const raw = states[rawKey];
  const shown = JSON.stringify(raw)?.slice(0, 200);
  if (typeof check.pattern === 'string') {
    const text = typeof raw === 'string' ? raw : pythonJsonDumps(raw);
    return result(new RegExp(check.pattern, 'u').test(text), `expected ${rawKey} to contain /${check.pattern}/, found ${shown}`);
  }
  if (check.value !== undefined && check.value !== null) return result(pythonEquals(check.value, raw), `expected ${rawKey} == ${JSON.stringify(check.value)}, found ${shown}`);
  return result(false, `${rawKey}: the check has neither value nor pattern`);
}

async function readStates(context: VmAppContext): Promise<Record<string, unknown>> {
  const stamp = String(Date.now());
  const ran = await runChimerax(context.vmHttp, context.appPort, `states ${STATES_DIR} ${stamp}`);
  if (ran.error !== null) throw new Error(`ChimeraX refused its states dump: ${ran.error}`);
  const text = await context.client.readFile(`${STATES_DIR}/${stamp}.json`);
  const states: unknown = JSON.parse(text);
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
        const ran = await context.vmHttp.json({ method: 'POST', path: '/chimerax/run', json: { command: 'version', port: context.appPort }, idempotent: true, timeoutMs, retries: 0 }, restAnswer);
        void ran;
      },
      async evaluate(checks) {
        const results: CheckResult[] = [];
        let states: Promise<Record<string, unknown>> | undefined;
        for (const { index, check } of checks) {
          switch (check.type) {
            case 'states':
              states ??= readStates(context);
              results.push(await checkStates(context.predicates, index, check, await states));
              break;
            case 'info': {
              const ran = await runChimerax(context.vmHttp, context.appPort, `info ${String(check.key)}`);
              const lines = new Set(ran.notes.flatMap((note) => note.trim().split('\n')).filter((line) => line !== ''));
              const wanted = new Set(Array.isArray(check.value) ? check.value.map(String) : []);
              const passed = lines.size === wanted.size && [...wanted].every((line) => lines.has(line));
              const missing = [...wanted].filter((line) => !lines.has(line));
              const extra = [...lines].filter((line) => !wanted.has(line));
              results.push({ index, type: 'info' as CheckResult['type'], passed, detail: `info ${String(check.key)}: ${passed ? `all ${wanted.size} lines` : `missing ${JSON.stringify(missing.slice(0, 3))}, unexpected ${JSON.stringify(extra.slice(0, 3))}`}` });
              break;
            }
            case 'file': {
              const file = String(check.key);
              let content: string | undefined;
              try {
                content = await context.client.readFile(file);
              } catch {
                content = undefined; // read_file answers None on any failure: the check fails
              }
              const value = String(check.value);
              const probe = isLambda(value) ? `lambda content: (${value})() in content` : `lambda content: ${py(value)} in content`;
              const [outcome] = content === undefined ? [{ ok: false, error: `cannot read ${file}` }] : await context.predicates([{ key: probe, value: true }], content);
              results.push({ index, type: 'file' as CheckResult['type'], passed: outcome?.ok === true, detail: `${file} contains ${value}${outcome?.ok === true ? '' : `: ${outcome?.error ?? 'no'}`}` });
              break;
            }
          }
        }
        return results;
      },
    };
  },
};
