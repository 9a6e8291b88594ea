import type { CheckResult } from '../core/evaluation';
import type { OsworldClient } from '../activities/desktop/osworld/client';
import type { VmHttp } from '../activities/desktop/osworld/http';

/**
 * What each application's `vm.ts` gives the OSWorld desktop: how a ScienceBoard VM runs the app's
 * own init funcs at reset and reads its state for the app's checks after the stop, as
 * ScienceBoard's sci/<App>/<app>.py and task.py do. Runs on the vm-host.
 */

/** One Python check as ScienceBoard's tasks write it: `key` and `pred` are lambda sources, run on the dump. */
export interface PythonCheck {
  readonly key: string;
  readonly value: unknown;
  readonly pred?: string;
}

/** Evaluates Python checks on a dump in the predicate sandbox; one outcome per check, in order. */
export type EvaluatePredicates = (checks: readonly PythonCheck[], dump: unknown) => Promise<Array<{ ok: boolean; error?: string }>>;

export interface VmAppContext {
  /** The VM's own server (OSWorld's, port 5000): /setup/*, /read, /write, /append, /chimerax/run, /lean/check. */
  readonly client: OsworldClient;
  /** The VM's server for routes its client does not wrap (same address, same retry policy). */
  readonly vmHttp: VmHttp;
  /** The app's own state server in the VM (the VM's address, its appStatePort). */
  readonly appHttp: VmHttp;
  /** The port the app's launch command got for «PORTLIKE». */
  readonly appPort: number;
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

/** A failed check naming the field and what Python said (a predicate that raised, timed out or did not compile). */
export function predicateFailure(index: number, type: CheckResult['type'], what: string, error: string): CheckResult {
  return { index, type, passed: false, detail: `${what}: ${error}` };
}

/** `key`/`pred` checks on one dump, one result per check, detail naming the key and the expected value. */
export async function checkPredicates(
  predicates: EvaluatePredicates,
  checks: ReadonlyArray<{ index: number; check: Readonly<Record<string, unknown>> }>,
  dump: unknown,
  source: string,
): Promise<CheckResult[]> {
  const python = checks.map(({ check }) => ({ key: String(check.key), value: check.value, ...(typeof check.pred === 'string' ? { pred: check.pred } : {}) }));
  const outcomes = await predicates(python, dump);
  return checks.map(({ index, check }, i) => {
    const outcome = outcomes[i] ?? { ok: false, error: 'no outcome from the predicate sandbox' };
    const what = `${check.pred === undefined ? 'expected' : `pred ${String(check.pred)} with`} key ${String(check.key)} ${check.pred === undefined ? '==' : 'and value'} ${JSON.stringify(check.value)} on ${source}`;
    return outcome.ok
      ? { index, type: check.type as CheckResult['type'], passed: true, detail: what }
      : predicateFailure(index, check.type as CheckResult['type'], what, outcome.error ?? 'the predicate is false');
  });
}
