import type { CheckResult } from '../core/evaluation';
import type { OsworldClient } from '../io/osworld-client';
import type { VmHttp } from '../io/vm-http';
import type { PredicateCheck, PredicateResult } from '../io/predicates/sandbox';

/**
 * What each application's `vm.ts` gives the OSWorld desktop: how a ScienceBoard VM runs the app's
 * own init funcs at reset and reads its state for the app's checks after the stop, as
 * ScienceBoard's sci/<App>/<app>.py and task.py do. Runs on the vm-host.
 */

/** One check for the predicate sandbox (io/predicates/): `info` (the default), `states` or `file`. */
export type PythonCheck = PredicateCheck;

/** Evaluates checks on a dump in the predicate sandbox; one outcome per check, in order. */
export type EvaluatePredicates = (checks: readonly PredicateCheck[], dump: unknown) => Promise<PredicateResult[]>;

export interface VmAppContext {
  /** The VM's own server (OSWorld's, port 5000): /setup/*, /read, /write, /append, /chimerax/run, /lean/check. */
  readonly client: OsworldClient;
  /** The VM's server for routes its client does not wrap (same address, same retry policy). */
  readonly vmHttp: VmHttp;
  /** The app's own state server in the VM (the VM's address, its appStatePort). */
  readonly appHttp: VmHttp;
  /** The port the app's launch command got for «PORTLIKE». */
  readonly appPort: number;
  /**
   * How long each request to the app's server, or to the VM's server on the app's behalf (a dump's
   * /read, /chimerax/run, /lean/check), may take: ScienceBoard's Manager.HOMO_TIMEOUT (240 s) by
   * default, the host's `appTimeoutSeconds`. `appHttp` and `vmHttp` use it.
   */
  readonly appTimeoutMs: number;
  readonly predicates: EvaluatePredicates;
}

/** One reset's session with the app: Lean's header buffer lives here between its funcs. */
export interface VmAppSession {
  /** Runs one of the app's own init funcs (fields as the task file has them); false when the func is not the app's. */
  initialize(func: string, step: Readonly<Record<string, unknown>>): Promise<boolean>;
  /** After every init func: the app's server must answer, else the VM (not the agent) is at fault. */
  ready?(timeoutMs: number): Promise<void>;
  /** The app's checks (every non-`stop` entry of `evaluate`, with their indexes), read after the stop. */
  evaluate(checks: ReadonlyArray<{ index: number; check: Readonly<Record<string, unknown>> }>): Promise<CheckResult[]>;
}

export interface VmApp {
  /** The task `type` it serves, e.g. "GrassGIS". */
  readonly software: string;
  session(task: { readonly id: string; readonly query?: unknown; readonly initialize: readonly unknown[] }, context: VmAppContext): VmAppSession;
}

/**
 * Checks run in the sandbox, one result per check: passed when the sandbox says ok; the detail is
 * what the sandbox compared, or why the check could not be decided (the source raised, timed out,
 * was refused), naming the check's fields.
 */
export async function sandboxChecks(
  predicates: EvaluatePredicates,
  checks: ReadonlyArray<{ index: number; check: Readonly<Record<string, unknown>>; python: PythonCheck }>,
  dump: unknown,
  source: string,
): Promise<CheckResult[]> {
  if (checks.length === 0) return [];
  const outcomes = await predicates(checks.map((c) => c.python), dump);
  return checks.map(({ index, check }, i) => {
    const outcome = outcomes[i] ?? { ok: false, error: 'no outcome from the predicate sandbox' };
    const fields = ['key', 'find', 'pred', 'pattern'].filter((f) => typeof check[f] === 'string').map((f) => `${f} ${String(check[f])}`);
    const what = `${fields.join(', ')}${Object.hasOwn(check, 'value') ? ` value ${JSON.stringify(check.value)?.slice(0, 200)}` : ''} on ${source}`;
    const detail = outcome.error !== undefined ? `${what}: ${outcome.error}` : `${what}${outcome.detail === undefined ? '' : `: ${outcome.detail}`}`;
    return { index, type: check.type as CheckResult['type'], passed: outcome.ok && outcome.error === undefined, detail };
  });
}

/** An `info` (or `db`) check as the sandbox takes it. */
export const infoCheck = (check: Readonly<Record<string, unknown>>, dump?: unknown): PythonCheck => ({
  key: String(check.key),
  value: check.value,
  ...(typeof check.pred === 'string' ? { pred: check.pred } : {}),
  ...(dump === undefined ? {} : { dump }),
});
