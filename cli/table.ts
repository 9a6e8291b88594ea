/**
 * The one plain-text table of the CLI and the benchmarks: rows as columns two spaces apart, the
 * first row the header, trailing spaces trimmed. Text columns are padded on the right; with
 * `numbers`, every column but the first is padded on the left, so figures line up.
 */
export function textTable(rows: ReadonlyArray<readonly string[]>, options: { numbers?: boolean } = {}): string {
  const widths = (rows[0] ?? []).map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  const pad = (cell: string, c: number): string => (options.numbers && c > 0 ? cell.padStart(widths[c] ?? 0) : cell.padEnd(widths[c] ?? 0));
  return rows.map((r) => r.map(pad).join('  ').trimEnd()).join('\n');
}
