import { spawn, spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { stringifyPythonJson } from '../../core/python-json';
import { RUNNER } from './runner';

/**
 * ScienceBoard's Python predicates with Python's meaning, and nothing more: its checks' `key`,
 * `pred`, `find` and lambda `value`s are Python sources it runs with `eval` on the app's state.
 * Here they run in a python3 child of their own (runner.ts: isolated mode, a fixed list of
 * builtins, no imports but the datetime classes, math and the clock's readers, no underscore or
 * frame names), each check in a process of its own that python3 forks, with limits on CPU, memory,
 * files and descriptors and its own time; the state passed as JSON on stdin, the verdicts read as
 * JSON lines from stdout, python3 killed by the wall clock and when it writes too much. Whatever a
 * source does, the worst it can do is fail its own check.
 */

/**
 * One check to run. `info` (the default kind): Celestia's and GRASS GIS's `info` and GRASS's
 * `db` — `pred(key(dump), value)`. `states`: ChimeraX's states check over the states dump.
 * `file`: ChimeraX's file check — `value` (a lambda's result when it is one) is in `content`.
 * `dump`, when given, is what this check reads instead of the shared dump (a `db` check's stdout).
 */
export type PredicateCheck =
  | { readonly kind?: 'info'; readonly key: string; readonly value: unknown; readonly pred?: string; readonly dump?: unknown }
  | { readonly kind: 'states'; readonly key: string; readonly find?: string; readonly value?: unknown; readonly pattern?: string; readonly dump?: unknown }
  | { readonly kind: 'file'; readonly value: string; readonly content: string | null };

export interface PredicateResult {
  readonly ok: boolean;
  /** The check field whose source failed (`key`, `pred`, `find`, `value`), when one did. */
  readonly field?: string;
  /** Why the check could not be decided: the source raised, timed out, was refused, or the sandbox died. */
  readonly error?: string;
  /** What was compared, in words. */
  readonly detail?: string;
}

export interface SandboxOptions {
  /** Time for each check's sources, after which the check fails as timed out and the next one runs. */
  readonly timeoutMs?: number;
  /** Address space of each check's process. */
  readonly memoryBytes?: number;
  /** What the child may write to stdout before it is killed. */
  readonly maxOutputBytes?: number;
  /** The python3 to run. */
  readonly python?: string;
}

const DEFAULTS = { timeoutMs: 5000, memoryBytes: 1024 * 1024 * 1024, maxOutputBytes: 1024 * 1024, python: 'python3' } as const;

/** Time python3 takes to start and read its request, on a loaded machine. */
const START_ALLOWANCE_MS = 10_000;

/** Beyond a check's own time: the grace before python3 kills the check's process (runner.ts), and reaping it. */
const CHECK_ALLOWANCE_MS = 2_000;

/** Checks evaluated for one task (ScienceBoard's have at most 10): the time one evaluation may take stays bounded. */
export const MAX_CHECKS = 64;

const ARGS = ['-I', '-S', '-c', RUNNER];

/** Only PATH, to find python3; -I makes it ignore PYTHON* variables anyway. */
const CHILD_ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

/** Runs the checks against `dump` in one sandboxed python3 child; one result per check, in order. Never throws for what a check does. */
export async function evaluateChecks(checks: readonly PredicateCheck[], dump: unknown, options: SandboxOptions = {}): Promise<PredicateResult[]> {
  if (checks.length === 0) return [];
  if (checks.length > MAX_CHECKS) {
    const beyond = checks.slice(MAX_CHECKS).map((): PredicateResult => ({ ok: false, error: `not evaluated: at most ${MAX_CHECKS} checks of a task are evaluated` }));
    return [...(await evaluateChecks(checks.slice(0, MAX_CHECKS), dump, options)), ...beyond];
  }
  const { timeoutMs, memoryBytes, maxOutputBytes, python } = { ...DEFAULTS, ...options };
  const wallMs = (timeoutMs + CHECK_ALLOWANCE_MS) * checks.length + START_ALLOWANCE_MS;
  // A states check's `value: undefined` leaves the JSON, as an absent value should (null stays: it asks for absence).
  // Written as Python's json writes it, so that a dump's NaN and Infinity reach the predicates as float('nan') and float('inf'), not null.
  const request = stringifyPythonJson({ mode: 'evaluate', checks, dump, timeoutMs, memoryBytes });
  const results: PredicateResult[] = [];
  let started = -1;
  const lines = await runChild(python, request, wallMs, maxOutputBytes, (line) => {
    if (typeof line.start === 'number') started = line.start;
    else if (typeof line.i === 'number') results[line.i] = { ok: line.ok === true, ...(typeof line.field === 'string' ? { field: line.field } : {}), ...(typeof line.error === 'string' ? { error: line.error } : {}), ...(typeof line.detail === 'string' ? { detail: line.detail } : {}) };
  });
  return checks.map((_, i) => {
    const result = results[i];
    if (result !== undefined) return result;
    if (i === started) return { ok: false, error: `the sandbox was stopped during this check: ${lines.stopped}` };
    return { ok: false, error: `not evaluated: the sandbox was stopped during check ${started} (${lines.stopped})` };
  });
}

/** A line the child wrote. */
type Line = { start?: unknown; i?: unknown; ok?: unknown; field?: unknown; error?: unknown; detail?: unknown };

/** Runs the child to its end; `stopped` says why it ended early (killed, crashed), or is '' when it ended by itself. */
function runChild(python: string, request: string, wallMs: number, maxOutputBytes: number, onLine: (line: Line) => void): Promise<{ stopped: string }> {
  return new Promise((resolve) => {
    const child = spawn(python, ARGS, { cwd: tmpdir(), env: CHILD_ENV, stdio: ['pipe', 'pipe', 'pipe'] });
    let stopped = '';
    let written = 0;
    let pending = '';
    let stderr = '';
    const kill = (why: string): void => {
      if (stopped === '') stopped = why;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => kill(`it ran longer than ${wallMs} ms`), wallMs);
    child.stdout.on('data', (chunk: Buffer) => {
      written += chunk.length;
      if (written > maxOutputBytes) return kill(`it wrote more than ${maxOutputBytes} bytes`);
      pending += chunk.toString('utf8');
      let end: number;
      while ((end = pending.indexOf('\n')) >= 0) {
        const text = pending.slice(0, end);
        pending = pending.slice(end + 1);
        try {
          onLine(JSON.parse(text) as Line);
        } catch {
          kill(`it wrote a line that is not JSON: ${text.slice(0, 200)}`);
        }
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 2000) stderr += chunk.toString('utf8');
    });
    child.on('error', (err) => {
      if (stopped === '') stopped = `python3 could not run: ${err.message}`;
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (stopped === '' && (code !== 0 || signal !== null)) stopped = `python3 ended with ${signal ?? `exit code ${code}`}${stderr.trim() ? `: ${stderr.trim().split('\n').slice(-1)[0]}` : ''}`;
      resolve({ stopped });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(request);
  });
}

/**
 * Which of `sources` the sandbox would refuse to run: each that does not compile as a Python
 * expression, or names what predicates may not, with the error. One python3 child for all of
 * them; it runs synchronously, as task files are loaded. Throws only when python3 cannot run.
 */
export function compileErrors(sources: readonly string[], options: Pick<SandboxOptions, 'python' | 'timeoutMs'> = {}): Map<string, string> {
  const errors = new Map<string, string>();
  if (sources.length === 0) return errors;
  const { python, timeoutMs } = { ...DEFAULTS, ...options };
  const out = spawnSync(python, ARGS, {
    cwd: tmpdir(),
    env: CHILD_ENV,
    input: JSON.stringify({ mode: 'compile', sources }),
    timeout: timeoutMs + START_ALLOWANCE_MS,
    maxBuffer: 16 * 1024 * 1024,
  });
  if (out.error !== undefined || out.status !== 0) {
    throw new Error(`python3 could not check the predicates: ${out.error?.message ?? `exit ${out.status ?? out.signal}: ${out.stderr.toString('utf8').trim().split('\n').slice(-1)[0]}`}`);
  }
  const seen = new Set<number>();
  for (const text of out.stdout.toString('utf8').split('\n')) {
    if (text.trim() === '') continue;
    const line = JSON.parse(text) as { i: number; error?: string };
    seen.add(line.i);
    const source = sources[line.i];
    if (line.error !== undefined && source !== undefined) errors.set(source, line.error);
  }
  if (seen.size !== sources.length) throw new Error(`python3 checked ${seen.size} of ${sources.length} predicates`);
  return errors;
}

/**
 * A sandbox result in words for a check's detail, naming the task and the field: "task A-01
 * evaluate[0].pred: ZeroDivisionError: division by zero".
 */
export function describePredicate(taskId: string, index: number, result: PredicateResult): string {
  const where = `task ${taskId} evaluate[${index}]${result.field !== undefined ? `.${result.field}` : ''}`;
  if (result.error !== undefined) return `${where}: ${result.error}`;
  return `${where}: ${result.ok ? 'holds' : 'does not hold'}${result.detail !== undefined ? ` (${result.detail})` : ''}`;
}
