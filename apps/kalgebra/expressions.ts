/**
 * Reading KAlgebra (Analitza) expressions as text: where an equation, an assignment or a lambda
 * splits, and which identifiers are variables. Shared by the reference policy (which decides
 * where a line goes) and the desktop's evaluators (which decide how to evaluate a plot).
 */

/** Positions of `token` outside brackets, from the left. */
function topLevel(expression: string, accept: (i: number) => boolean): number | undefined {
  let depth = 0;
  for (let i = 0; i < expression.length; i += 1) {
    const c = expression[i];
    if (c === '(' || c === '{' || c === '[') depth += 1;
    else if (c === ')' || c === '}' || c === ']') depth -= 1;
    else if (depth === 0 && accept(i)) return i;
  }
  return undefined;
}

/** `a=b` split at its top-level `=` (not `:=`, `<=`, `>=`, `!=`, `==`, nor inside brackets). */
export function splitEquation(expression: string): { lhs: string; rhs: string } | undefined {
  const at = topLevel(expression, (i) => expression[i] === '=' && !':<>!='.includes(expression[i - 1] ?? '') && expression[i + 1] !== '=');
  return at === undefined ? undefined : { lhs: expression.slice(0, at).trim(), rhs: expression.slice(at + 1).trim() };
}

/** `name := value` split at its top-level `:=`. */
export function splitAssignment(expression: string): { name: string; value: string } | undefined {
  const at = topLevel(expression, (i) => expression[i] === ':' && expression[i + 1] === '=');
  if (at === undefined) return undefined;
  const name = expression.slice(0, at).trim();
  return /^[A-Za-z_]\w*$/.test(name) ? { name, value: expression.slice(at + 2).trim() } : undefined;
}

/** `x->body` or `(x, y)->body` split at its first top-level `->`. */
export function splitLambda(expression: string): { params: string[]; body: string } | undefined {
  const at = topLevel(expression, (i) => expression[i] === '-' && expression[i + 1] === '>');
  if (at === undefined) return undefined;
  const head = expression.slice(0, at).trim().replace(/^\((.*)\)$/, '$1');
  const params = head.split(',').map((p) => p.trim());
  if (params.some((p) => !/^[A-Za-z_]\w*$/.test(p))) return undefined;
  return { params, body: expression.slice(at + 2).trim() };
}

/** Identifiers used as variables (not called as functions) in an expression. */
export function freeIdentifiers(expression: string): Set<string> {
  const found = new Set<string>();
  for (const match of expression.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)) {
    const next = expression.slice((match.index ?? 0) + match[0].length).trimStart();
    if (!next.startsWith('(')) found.add(match[0]);
  }
  return found;
}
