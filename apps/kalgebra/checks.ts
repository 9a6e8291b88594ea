import { UNDEFINED_VARIABLE, VAL_TOLERANCE, valueMatches, type CheckResult } from '../../core/evaluation';
import type { Evaluator } from '../../core/task';
import type { PlottedFunction } from './vm';

/**
 * ScienceBoard's KAlgebra checks (sci/KAlgebra/task.py) applied to what the app's state server
 * answered. Pure: the desktop fetches, these compare.
 */

type VarCheck = Extract<Evaluator, { type: 'var' }>;
type ValCheck = Extract<Evaluator, { type: 'val' }>;
type EqnCheck = Extract<Evaluator, { type: 'eqn' }>;

/** `var`: the variable prints exactly `value`, or is absent for "#UNDEF". */
export function checkVariable(check: VarCheck, index: number, variables: Readonly<Record<string, string>>): CheckResult {
  const found = Object.hasOwn(variables, check.key) ? variables[check.key] : undefined;
  const shown = found === undefined ? 'undefined' : JSON.stringify(found);
  if (check.value === UNDEFINED_VARIABLE) {
    return { index, type: 'var', passed: found === undefined, detail: `expected ${check.key} undefined, found ${shown}` };
  }
  return {
    index,
    type: 'var',
    passed: found === check.value,
    detail: `expected ${check.key} = ${JSON.stringify(check.value)}, found ${shown}`,
  };
}

/** `val`: the variable's value is numerically within 1e-6 of `value`. */
export function checkValue(check: ValCheck, index: number, variables: Readonly<Record<string, string>>): CheckResult {
  const found = Object.hasOwn(variables, check.key) ? variables[check.key] : undefined;
  return {
    index,
    type: 'val',
    passed: valueMatches(found, check.value),
    detail: `expected ${check.key} = ${check.value} (±${VAL_TOLERANCE}), found ${found === undefined ? 'undefined' : JSON.stringify(found)}`,
  };
}

/** The points an `eqn` check asks about, as the task file spells them, and in how many dimensions (from its first point, as ScienceBoard does). */
export function plotQuery(check: EqnCheck): { dimensions: 2 | 3; points: readonly (readonly string[])[] } {
  if (check.key === '#SIZE') return { dimensions: 2, points: [] };
  return { dimensions: check.key[0]?.length === 3 ? 3 : 2, points: check.key };
}

/**
 * `eqn`: with key "#SIZE", how many functions are plotted; otherwise some plotted function
 * agrees with every entry of `value` (each point on it or not, and its look such as `color`).
 */
export function checkPlot(check: EqnCheck, index: number, functions: readonly PlottedFunction[]): CheckResult {
  if (check.key === '#SIZE') {
    const passed = typeof check.value === 'number' && functions.length === check.value;
    return { index, type: 'eqn', passed, detail: `expected ${JSON.stringify(check.value)} plotted functions, found ${functions.length}` };
  }
  if (typeof check.value === 'number') {
    return { index, type: 'eqn', passed: false, detail: `a count (${check.value}) cannot describe points; the task is malformed` };
  }
  const wanted = check.value;
  const expected = Object.entries(wanted);
  const mismatches = functions.map((fn) => expected.filter(([key, value]) => fn[key] !== value).map(([key]) => key));
  const matched = mismatches.findIndex((keys) => keys.length === 0);
  if (matched !== -1) {
    return { index, type: 'eqn', passed: true, detail: `plotted function ${matched + 1} of ${functions.length} agrees on all ${expected.length} entries` };
  }
  if (functions.length === 0) {
    return { index, type: 'eqn', passed: false, detail: `expected a plotted function agreeing on ${expected.length} entries, none is plotted` };
  }
  const closest = mismatches.reduce((best, keys, i) => (keys.length < (mismatches[best]?.length ?? Infinity) ? i : best), 0);
  const differs = mismatches[closest] ?? [];
  const fn = functions[closest] ?? {};
  const shown = differs
    .slice(0, 3)
    .map((key) => `${key} expected ${JSON.stringify(wanted[key])}, found ${fn[key] === undefined ? 'nothing' : JSON.stringify(fn[key])}`)
    .join('; ');
  return {
    index,
    type: 'eqn',
    passed: false,
    detail: `no plotted function (of ${functions.length}) agrees; closest is function ${closest + 1}, off on ${differs.length}: ${shown}`,
  };
}
