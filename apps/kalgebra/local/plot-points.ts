/**
 * Whether a point lies on a plotted KAlgebra function, decided with the app's own engine
 * (calgebra). Pure: this module writes the expressions to evaluate and judges the printed
 * results; calgebra.ts runs them.
 *
 * A point is in the function's own coordinates, as ScienceBoard's tasks write them:
 * - an equation `lhs=rhs` (implicit curve in x,y; implicit surface in x,y,z): the point
 *   satisfies it;
 * - anything else is a function of the point's leading coordinates and the last coordinate is
 *   its value: `x->x^2` at (a, b) means f(a) = b, polar `q->6*sin(3*q)` at (q, r) means
 *   f(q) = r, `(x, y)->f` at (a, b, c) means f(a, b) = c. An expression without a lambda
 *   (`sin(x)`, or `diff(...)` which evaluates to one) is taken over its plot variable.
 *
 * Two numbers agree when |found - expected| <= 1e-6 * max(1, |found|, |expected|): ScienceBoard's
 * 1e-6 near zero, relative for large values, and far above calgebra's 12 printed digits.
 */

import { freeIdentifiers, splitEquation } from '../expressions';

export const ON_TOLERANCE = 1e-6;

export type Dimension = 2 | 3;

/** How to evaluate one function at a point. */
export type FunctionForm =
  | { readonly kind: 'equation'; readonly lhs: string; readonly rhs: string }
  /** `callable` applied to the leading coordinates gives the last one. */
  | { readonly kind: 'function'; readonly callable: string };

/** Variables KAlgebra plots over: y=f(x), x=f(y), polar r=f(q), and z=f(x,y) in 3D. */
const PLOT_VARIABLES_2D = ['x', 'y', 'q'] as const;

/** True when calgebra printed a lambda (`x->...`, `(x, y)->...`) for the bare expression. */
export const isLambda = (printed: string): boolean => /^(\(?\s*[A-Za-z_]\w*(\s*,\s*[A-Za-z_]\w*)*\s*\)?)\s*->/.test(printed.trim());

/**
 * The form of a plotted expression, given what calgebra printed for it alone (a lambda, or an
 * expression still in its plot variables).
 */
export function functionForm(expression: string, printed: string, dimension: Dimension): FunctionForm {
  const equation = splitEquation(expression);
  if (equation !== undefined) return { kind: 'equation', ...equation };
  if (isLambda(printed)) return { kind: 'function', callable: `(${expression})` };
  if (dimension === 3) return { kind: 'function', callable: `((x, y)->${expression})` };
  const used = freeIdentifiers(expression);
  const variable = PLOT_VARIABLES_2D.find((v) => used.has(v)) ?? 'x';
  return { kind: 'function', callable: `(${variable}->${expression})` };
}

/** A JavaScript number as Analitza reads it: no `1e+21` (Analitza reads `e` as Euler's number there). */
export function analitzaNumber(n: number): string {
  if (!Number.isFinite(n)) throw new Error(`${n} is not a finite number`);
  const text = String(n);
  const [mantissa = text, exponent] = text.split('e');
  const plain = exponent === undefined ? mantissa : `${mantissa}*10^(${Number(exponent)})`;
  return n < 0 || exponent !== undefined ? `(${plain})` : plain;
}

/** The calgebra lines that evaluate `form` at `point`: [value, expected] for a function, [lhs, rhs] for an equation. */
export function pointQueries(form: FunctionForm, point: readonly number[], dimension: Dimension): [string, string] {
  const coords = point.map(analitzaNumber);
  const vars = dimension === 2 ? 'x, y' : 'x, y, z';
  if (form.kind === 'equation') {
    const args = coords.join(', ');
    return [`((${vars})->${form.lhs})(${args})`, `((${vars})->${form.rhs})(${args})`];
  }
  const last = coords[coords.length - 1] ?? '0';
  return [`${form.callable}(${coords.slice(0, -1).join(', ')})`, last];
}

/** A real number calgebra printed, or undefined for anything else (nan, complex, symbolic, error text). */
export function printedNumber(printed: string): number | undefined {
  const text = printed.trim();
  if (!/^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(text)) return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

export function agrees(found: number, expected: number): boolean {
  return Math.abs(found - expected) <= ON_TOLERANCE * Math.max(1, Math.abs(found), Math.abs(expected));
}

/** A point written as ScienceBoard keys it, e.g. "(-0.37, -8.33, 14)", or undefined for other keys ("color"). */
export function parsePointKey(key: string): number[] | undefined {
  const match = /^\((.*)\)$/.exec(key.trim());
  if (match === null) return undefined;
  const parts = (match[1] ?? '').split(',').map((p) => p.trim());
  if (parts.length < 2 || parts.some((p) => p === '' || !Number.isFinite(Number(p)))) return undefined;
  return parts.map(Number);
}

export const samePoint = (a: readonly number[], b: readonly number[]): boolean =>
  a.length === b.length && a.every((v, i) => v === b[i]);

/** A point as people read it in a detail line. */
export const formatPoint = (p: readonly number[]): string => `(${p.join(', ')})`;
