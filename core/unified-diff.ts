/**
 * A short unified diff between two texts, for check results a person reads: which lines differ,
 * with a line of context, and long lines (a LaTeX paragraph is one line) cut to the part around
 * the first differing character.
 */

export interface DiffOptions {
  /** Unchanged lines shown around each change. */
  readonly context?: number;
  /** Diff lines kept before the excerpt is cut. */
  readonly maxLines?: number;
  /** Longest line shown; longer ones are cut around where the pair differs. */
  readonly width?: number;
}

type Op = { readonly kind: ' ' | '-' | '+'; readonly text: string; readonly a: number; readonly b: number };

/** `-` lines are `expected`'s, `+` lines `found`'s; empty when the texts are equal. */
export function unifiedDiff(expected: string, found: string, options: DiffOptions = {}): string {
  if (expected === found) return '';
  const context = options.context ?? 1;
  const maxLines = options.maxLines ?? 12;
  const width = options.width ?? 120;
  const a = expected.split('\n');
  const b = found.split('\n');
  const ops = lineOps(a, b);

  const changed = ops.map((op, i) => (op.kind === ' ' ? -1 : i)).filter((i) => i >= 0);
  const shown = new Set<number>();
  for (const i of changed) for (let j = Math.max(0, i - context); j <= Math.min(ops.length - 1, i + context); j++) shown.add(j);

  const out: string[] = [];
  let previous = -2;
  for (const i of [...shown].sort((x, y) => x - y)) {
    const op = ops[i] as Op;
    if (i !== previous + 1) out.push(`@@ -${op.a + 1} +${op.b + 1} @@`);
    previous = i;
    out.push(`${op.kind}${clip(op, ops, i, width)}`);
  }
  if (out.length > maxLines) return [...out.slice(0, maxLines), `… ${out.length - maxLines} more diff lines`].join('\n');
  return out.join('\n');
}

/** Line operations turning `a` into `b`: common prefix and suffix first, LCS on what is left. */
function lineOps(a: readonly string[], b: readonly string[]): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  // lcs[i][j]: the longest common subsequence of midA[i..] and midB[j..].
  const lcs = Array.from({ length: midA.length + 1 }, () => new Array<number>(midB.length + 1).fill(0));
  for (let i = midA.length - 1; i >= 0; i--) {
    for (let j = midB.length - 1; j >= 0; j--) {
      lcs[i]![j] = midA[i] === midB[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const ops: Op[] = a.slice(0, start).map((text, i) => ({ kind: ' ', text, a: i, b: i }));
  let i = 0;
  let j = 0;
  while (i < midA.length || j < midB.length) {
    if (i < midA.length && j < midB.length && midA[i] === midB[j]) {
      ops.push({ kind: ' ', text: midA[i]!, a: start + i++, b: start + j++ });
    } else if (i < midA.length && (j === midB.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      ops.push({ kind: '-', text: midA[i]!, a: start + i++, b: start + j });
    } else {
      ops.push({ kind: '+', text: midB[j]!, a: start + i, b: start + j++ });
    }
  }
  for (let k = 0; k < a.length - endA; k++) ops.push({ kind: ' ', text: a[endA + k]!, a: endA + k, b: endB + k });
  return ops;
}

/** A long line cut around where it first differs from its counterpart (the nearest line of the other side). */
function clip(op: Op, ops: readonly Op[], index: number, width: number): string {
  if (op.text.length <= width) return op.text;
  const other = op.kind === ' ' ? undefined : ops.slice(index + 1).concat(ops.slice(0, index).reverse()).find((o) => o.kind !== ' ' && o.kind !== op.kind);
  let at = 0;
  if (other !== undefined) while (at < op.text.length && op.text[at] === other.text[at]) at++;
  const from = Math.max(0, Math.min(at - Math.floor(width / 3), op.text.length - width));
  const to = Math.min(op.text.length, from + width);
  return `${from > 0 ? '…' : ''}${op.text.slice(from, to)}${to < op.text.length ? '…' : ''}`;
}
