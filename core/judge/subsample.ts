/**
 * Which screenshots a judge sees when a trajectory has more than its endpoint accepts (vLLM's
 * `--limit-mm-per-prompt`): the first (where the task started), the last (where it ended) and
 * evenly spaced ones between, so the whole course of the episode stays visible. Indices are
 * 0-based positions in the trajectory's screenshot sequence, ascending and distinct.
 */
export function subsampleIndices(count: number, max: number): number[] {
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`screenshot count must be an integer >= 0, got ${count}`);
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`the most screenshots a judge accepts must be an integer >= 1, got ${max}`);
  if (count <= max) return Array.from({ length: count }, (_, i) => i);
  // One screenshot only: the final state is what says whether the task was done.
  if (max === 1) return [count - 1];
  return Array.from({ length: max }, (_, i) => Math.round((i * (count - 1)) / (max - 1)));
}
