import { combineChecks, evaluateStop, UNDEFINED_VARIABLE, VAL_TOLERANCE, valueMatches, type CheckResult, type EvaluationResult, type StopInfo } from '../../../core/evaluation';
import type { Evaluator, Task } from '../../../core/task';
import type { CalgebraResult } from './calgebra';
import {
  agrees,
  analitzaNumber,
  formatPoint,
  functionForm,
  parsePointKey,
  pointQueries,
  printedNumber,
  samePoint,
  type Dimension,
} from './plot-points';
import type { ConsoleEntry, RunningKAlgebraState } from './state';

/**
 * ScienceBoard's KAlgebra checks on the stock app. Where each one reads the state:
 * - var: the Variables dock says whether the variable exists; its printed value is the result
 *   the calculator's log shows for the latest assignment to it (the dock shows only the real part
 *   of a complex number), used when it agrees with the dock; otherwise the dock's value as
 *   calgebra prints it.
 * - val: the Variables dock, which carries real numbers at full precision.
 * - eqn: `#SIZE` counts the 2D Graph's function list; points are checked against the shown 2D
 *   functions or the surface the 3D Graph plots (the driver saw it drawn; the 3D field's text
 *   alone proves nothing) with calgebra (plot-points.ts). As in ScienceBoard's
 *   own checker, one plotted function must agree with every listed point. `res` (the 2D plot
 *   resolution, in samples) is the checked item of the 2D Graph menu, which the stock app sets
 *   for every 2D function at once. The rest of a plot's look (`color`, `style`) is not exposed by
 *   the stock app and fails as unsupported.
 * - stop: how the agent ended (core/evaluation.ts).
 */

/** Evaluates expressions in one calgebra session, one result per line. */
export type Calgebra = (lines: readonly string[]) => Promise<CalgebraResult[]>;

/** The 2D Graph menu's resolutions and the samples KAlgebra plots with (kalgebra.cpp, set_res_*). */
const RESOLUTION_SAMPLES: Readonly<Record<string, number>> = { Poor: 416, Normal: 832, Fine: 1664, 'Very Fine': 3328 };

/** Whether one non-point entry of an eqn check holds, in words. */
interface Attribute {
  readonly ok: boolean;
  readonly detail: string;
}

/** Analitza's own constants: always defined, never worth redefining for calgebra. */
const BUILTIN_VARIABLES = new Set(['pi', 'e', 'euler', 'true', 'false', 'i']);

/** The app's state, and the expression of the 3D surface it plots (undefined: none was seen drawn). */
export type CheckedState = RunningKAlgebraState & { readonly plotted3d: string | undefined };

export async function evaluateKAlgebra(task: Task, stop: StopInfo, state: CheckedState, calgebra: Calgebra): Promise<EvaluationResult> {
  const checker = new KAlgebraChecker(state, calgebra);
  const checks: CheckResult[] = [];
  for (const [index, check] of task.evaluate.entries()) {
    try {
      checks.push(await checker.check(check, index, stop));
    } catch (err) {
      checks.push({ index, type: check.type, passed: false, detail: `could not check: ${(err as Error).message}` });
    }
  }
  return combineChecks(checks);
}

interface Candidate {
  readonly label: string;
  readonly expression: string;
}

class KAlgebraChecker {
  /** The user's variables as calgebra definitions, so plotted functions that use them evaluate. */
  private readonly definitions: string[];

  constructor(
    private readonly state: CheckedState,
    private readonly calgebra: Calgebra,
  ) {
    this.definitions = state.variables
      .filter((v) => !BUILTIN_VARIABLES.has(v.name) && /^[A-Za-z_]\w*$/.test(v.name))
      .map((v) => `${v.name} := ${asExpression(v.value)}`);
  }

  check(check: Evaluator, index: number, stop: StopInfo): Promise<CheckResult> | CheckResult {
    switch (check.type) {
      case 'stop':
        return evaluateStop(check, index, stop);
      case 'var':
        return this.variable(check, index);
      case 'val':
        return this.value(check, index);
      case 'eqn':
        return this.equation(check, index);
      case 'file':
      case 'include':
      case 'compile':
        return { index, type: check.type, passed: false, detail: `"${check.type}" checks a TeXstudio document, not KAlgebra's state` };
      default:
        return { index, type: check.type, passed: false, detail: `"${check.type}" is not a KAlgebra check` };
    }
  }

  private async variable(check: Extract<Evaluator, { type: 'var' }>, index: number): Promise<CheckResult> {
    const entry = this.state.variables.find((v) => v.name === check.key);
    const result = (passed: boolean, detail: string): CheckResult => ({ index, type: 'var', passed, detail });
    if (check.value === UNDEFINED_VARIABLE) {
      return entry === undefined
        ? result(true, `expected ${check.key} undefined, found it undefined`)
        : result(false, `expected ${check.key} undefined, found ${check.key} = ${entry.value}`);
    }
    if (entry === undefined) return result(false, `expected ${check.key} = ${JSON.stringify(check.value)}, found ${check.key} undefined`);
    const { printed, source } = await this.printedValue(check.key, entry.value);
    return result(printed === check.value, `expected ${check.key} = ${JSON.stringify(check.value)}, found ${JSON.stringify(printed)} (${source})`);
  }

  /** How KAlgebra prints the variable's value (see the module comment for where it comes from). */
  private async printedValue(name: string, docked: string): Promise<{ printed: string; source: string }> {
    const logged = lastAssignment(this.state.console, name);
    if (logged !== undefined && sameValue(logged.result, docked)) return { printed: logged.result, source: `calculator log: ${logged.input}` };
    const number = Number(docked);
    if (docked.trim() === '' || !Number.isFinite(number)) return { printed: docked, source: 'Variables dock' };
    const [printed] = await this.calgebra([analitzaNumber(number)]);
    if (printed === undefined || !printed.ok) throw new Error(`calgebra cannot print ${docked}`);
    return { printed: printed.value, source: `Variables dock ${docked}, as KAlgebra prints it` };
  }

  private value(check: Extract<Evaluator, { type: 'val' }>, index: number): CheckResult {
    const entry = this.state.variables.find((v) => v.name === check.key);
    const expected = `expected ${check.key} = ${check.value} (±${VAL_TOLERANCE})`;
    if (entry === undefined) return { index, type: 'val', passed: false, detail: `${expected}, found ${check.key} undefined` };
    return { index, type: 'val', passed: valueMatches(entry.value, check.value), detail: `${expected}, found ${entry.value}` };
  }

  private async equation(check: Extract<Evaluator, { type: 'eqn' }>, index: number): Promise<CheckResult> {
    const result = (passed: boolean, detail: string): CheckResult => ({ index, type: 'eqn', passed, detail });
    const functions = this.state.functions;
    if (check.key === '#SIZE') {
      const listed = functions.map((f) => `${f.name} ${f.expression}${f.shown ? '' : ' (hidden)'}`).join(', ');
      if (typeof check.value !== 'number') return result(false, `#SIZE expects a number, the task gives ${JSON.stringify(check.value)}`);
      return result(functions.length === check.value, `expected ${check.value} functions in the 2D list, found ${functions.length}${listed ? `: ${listed}` : ''}`);
    }
    if (typeof check.value !== 'object') return result(false, `points need a table of expected values, the task gives ${JSON.stringify(check.value)}`);
    // The task keeps the points as spelled for the VM's server; calgebra evaluates their values.
    const keyPoints = check.key.map((p) => p.map(Number));
    const dimension = keyPoints[0]?.length;
    if ((dimension !== 2 && dimension !== 3) || keyPoints.some((p) => p.length !== dimension)) {
      return result(false, `points must all have 2 or 3 coordinates, found ${keyPoints.map(formatPoint).join(' ')}`);
    }

    const expectations: { point: number[]; on: boolean }[] = [];
    const attributes: Attribute[] = [];
    for (const [key, expected] of Object.entries(check.value)) {
      const point = parsePointKey(key);
      if (point !== undefined && typeof expected === 'boolean') expectations.push({ point, on: expected });
      else attributes.push(this.attribute(key, expected, dimension));
    }
    const missing = keyPoints.filter((p) => !expectations.some((e) => samePoint(e.point, p)));
    if (missing.length > 0) attributes.push({ ok: false, detail: `no expected value for ${missing.map(formatPoint).join(', ')}` });
    const notes = attributes.map((a) => a.detail);

    const field = this.state.input3d?.text?.trim() ?? '';
    if (dimension === 3 && field !== '' && field !== this.state.plotted3d) notes.push(`the 3D field reads ${JSON.stringify(field)}, which is not plotted`);
    const candidates = this.candidates(dimension);
    if (candidates.length === 0) {
      return result(false, [`no ${dimension}D function is plotted`, ...notes].join('; '));
    }
    const outcomes = [];
    for (const candidate of candidates) outcomes.push({ candidate, wrong: await this.wrongPoints(candidate, expectations, dimension) });
    const best = outcomes.reduce((a, b) => (b.wrong.length < a.wrong.length ? b : a));
    const points = `${expectations.length} points`;
    const verdict =
      best.wrong.length === 0
        ? `${best.candidate.label} agrees with all ${points}`
        : `no plotted function agrees with all ${points}; closest ${best.candidate.label}: ${best.wrong.join('; ')}`;
    return result(best.wrong.length === 0 && attributes.every((a) => a.ok), [verdict, ...notes].join('; '));
  }

  private candidates(dimension: Dimension): Candidate[] {
    if (dimension === 2) {
      return this.state.functions.filter((f) => f.shown).map((f) => ({ label: `${f.name} ${f.expression}`, expression: f.expression }));
    }
    const surface = this.state.plotted3d;
    return surface === undefined || surface === '' ? [] : [{ label: `3D graph ${surface}`, expression: surface }];
  }

  /** A non-point entry of an eqn check: the look of the plot. */
  private attribute(key: string, expected: unknown, dimension: Dimension): Attribute {
    const wanted = `${key} ${JSON.stringify(expected)}`;
    if (key === 'res' && dimension === 2) {
      const menu = this.state.resolution2d;
      const samples = menu === null ? undefined : RESOLUTION_SAMPLES[menu];
      if (menu === null || samples === undefined) return { ok: false, detail: `${wanted} cannot be read: the 2D Graph menu has ${menu ?? 'no'} resolution checked` };
      if (samples === expected) return { ok: true, detail: `res ${samples} (${menu})` };
      const named = Object.entries(RESOLUTION_SAMPLES).find(([, n]) => n === expected)?.[0] ?? 'no menu item';
      return { ok: false, detail: `res expected ${JSON.stringify(expected)} (${named}), found ${samples} (${menu})` };
    }
    if (key === 'style') {
      return { ok: false, detail: `${wanted} unsupported: ScienceBoard's style code has no counterpart in the stock app (its 3D style menu reads ${this.state.plotStyle3d ?? 'nothing'})` };
    }
    if (key === 'color') return { ok: false, detail: `${wanted} unsupported: the stock app does not expose a plot's colour` };
    return { ok: false, detail: `${wanted} unsupported` };
  }

  /** The points where `candidate` disagrees with the expectation, in words. */
  private async wrongPoints(candidate: Candidate, expectations: readonly { point: number[]; on: boolean }[], dimension: Dimension): Promise<string[]> {
    const [bare] = await this.evaluate([candidate.expression]);
    if (bare === undefined || !bare.ok) return [`KAlgebra cannot evaluate it (${bare?.ok === false ? bare.error : 'no result'})`];
    const form = functionForm(candidate.expression, bare.value, dimension);
    const queries = expectations.flatMap((e) => pointQueries(form, e.point, dimension));
    const results = await this.evaluate(queries);
    const wrong: string[] = [];
    expectations.forEach((e, i) => {
      const found = printedNumber(resultText(results[2 * i]));
      const wanted = printedNumber(resultText(results[2 * i + 1]));
      const on = found !== undefined && wanted !== undefined && agrees(found, wanted);
      if (on !== e.on) wrong.push(`${formatPoint(e.point)} expected ${e.on ? 'on' : 'off'}, found ${on ? 'on' : 'off'}`);
    });
    return wrong;
  }

  /** Runs lines after the user's definitions and returns only their results. */
  private async evaluate(lines: readonly string[]): Promise<CalgebraResult[]> {
    const results = await this.calgebra([...this.definitions, ...lines]);
    return results.slice(this.definitions.length);
  }
}

const resultText = (r: CalgebraResult | undefined): string => (r !== undefined && r.ok ? r.value : '');

/** A dock value as calgebra input: numbers rewritten so Analitza reads them back exactly. */
function asExpression(value: string): string {
  const number = Number(value);
  return value.trim() !== '' && Number.isFinite(number) ? analitzaNumber(number) : value;
}

/** The latest executed `name := ...` line of the calculator log, with its printed result. */
function lastAssignment(log: readonly ConsoleEntry[], name: string): { input: string; result: string } | undefined {
  const assigns = new RegExp(`^\\s*${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*:=`);
  for (let i = log.length - 1; i >= 0; i -= 1) {
    const entry = log[i];
    if (entry !== undefined && 'input' in entry && assigns.test(entry.input)) return entry;
  }
  return undefined;
}

/**
 * Whether a printed result can be the value the dock shows: equal real numbers (the dock shows
 * a complex number's real part), or the same text for anything else (vectors, functions).
 */
export function sameValue(printed: string, docked: string): boolean {
  const real = realPart(printed);
  const number = Number(docked);
  if (real !== undefined && docked.trim() !== '' && Number.isFinite(number)) {
    return Math.abs(real - number) <= 1e-9 * Math.max(1, Math.abs(number));
  }
  return printed.trim() === docked.trim();
}

/** The real part of a number as Analitza prints it: `2`, `1+-i`, `3+-2*i`, `2*i`, `true`. */
export function realPart(printed: string): number | undefined {
  const text = printed.trim();
  if (text === 'true') return 1;
  if (text === 'false') return 0;
  const plain = printedNumber(text);
  if (plain !== undefined) return plain;
  const complex = /^(-?[\d.]+(?:e[+-]?\d+)?)\+-?(?:[\d.]+(?:e[+-]?\d+)?\*)?i$/.exec(text);
  if (complex !== null) return printedNumber(complex[1] ?? '');
  return /^-?(?:[\d.]+(?:e[+-]?\d+)?\*)?i$/.test(text) ? 0 : undefined;
}
