import type { TaskRuns } from './metrics';
import { mulberry32, randomIndex } from './prng';

/**
 * How uncertain an evaluation's figures are (issue 18): with tens of tasks and a few attempts
 * each, two planners' Average@k differ by several points from noise alone, so a report says how
 * large that noise is.
 *
 * - Average@k's 95% interval is a two-level percentile bootstrap: resample the tasks with
 *   replacement (within each software, so Overall stays the mean over software), then within each
 *   resampled task resample its k attempts with replacement, and take the 2.5th and 97.5th
 *   percentiles of the resampled Average@k. Resampling both levels counts both sources of noise:
 *   which tasks the benchmark happens to hold and which attempts happened to succeed. It is a
 *   little conservative (the task level already carries some attempt noise).
 * - A row is compared with the base row over the tasks both ran (paired: the same task in both),
 *   on the per-task difference of success rates (the pairing cancels how hard each task is, which
 *   dominates the interval of a single row). The decision is a sign-flip permutation test of the
 *   mean difference: under "the mean difference is δ" each task's difference minus δ is as likely
 *   positive as negative; the two-sided p-value at δ = 0 says whether the rows differ, and the
 *   difference is "within noise" when it is 0.05 or more. The 95% interval is that same test
 *   inverted: every shift δ of the mean difference the test does not reject at 5% (with the same
 *   sign assignments), so it excludes 0 exactly when p < 0.05 and a report never shows an interval
 *   and a verdict that disagree. (A percentile bootstrap over tasks, used before, collapses with few
 *   tasks that differ alike — 2 tasks both 100 points worse gave [−100, −100] beside p 0.5 — and
 *   could exclude 0 beside "within noise".) Simulated on the local tasks (bench/evaluation-noise.ts),
 *   two copies of one planner are called different in at most the nominal 5% of evaluations
 *   (docs/evaluation-uncertainty.md has the figures).
 * Everything is seeded: the same data, seed and number of resamples give the same figures.
 * Figures are fractions in [0, 1] like core/metrics.ts's.
 */

/** A confidence interval of a fraction. */
export interface Interval {
  readonly lower: number;
  readonly upper: number;
}

export interface BootstrapSettings {
  readonly seed: number;
  readonly resamples: number;
}

/** A row against the base row over the tasks both ran. */
export interface Comparison {
  /** Mean over the paired tasks of (row's success rate − base's), Overall the mean over software. */
  readonly difference: number;
  /** The shifts of the difference the sign-flip test does not reject at 5%, within [−1, 1]: it holds 0 exactly when withinNoise. */
  readonly interval: Interval;
  /** Two-sided, from the sign-flip permutation test. */
  readonly pValue: number;
  /** Tasks in both rows. */
  readonly tasks: number;
  /** p >= 0.05 (see the module comment). */
  readonly withinNoise: boolean;
}

export const CONFIDENCE = 0.95;

/** What reports use unless told otherwise: 2,000 resamples keep the interval's ends stable to ~0.5 point. */
export const DEFAULT_BOOTSTRAP: BootstrapSettings = { seed: 20_181_124, resamples: 2_000 };

/** One task of both rows. */
export interface TaskPair {
  readonly row: TaskRuns;
  readonly base: TaskRuns;
}

const mean = (values: readonly number[]): number => (values.length === 0 ? 0 : values.reduce((sum, v) => sum + v, 0) / values.length);
const rate = (t: TaskRuns): number => (t.runs === 0 ? 0 : t.successes / t.runs);

/** The q-quantile of sorted values, interpolating between neighbours (R's type 7). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  const h = (sorted.length - 1) * q;
  const low = Math.floor(h);
  const next = sorted[Math.min(low + 1, sorted.length - 1)]!;
  return sorted[low]! + (h - low) * (next - sorted[low]!);
}

/** The central CONFIDENCE interval of bootstrap replicates. */
function percentileInterval(replicates: number[]): Interval {
  const sorted = replicates.sort((a, b) => a - b);
  const tail = (1 - CONFIDENCE) / 2;
  return { lower: quantile(sorted, tail), upper: quantile(sorted, 1 - tail) };
}

/** One task's success rate over its attempts resampled with replacement (a Binomial(runs, rate) draw / runs). */
function resampledRate(task: TaskRuns, random: () => number): number {
  if (task.runs === 0) return 0;
  const p = rate(task);
  let successes = 0;
  for (let i = 0; i < task.runs; i++) if (random() < p) successes++;
  return successes / task.runs;
}

/** `items` resampled with replacement, same size. */
const resample = <T>(items: readonly T[], random: () => number): T[] => items.map(() => items[randomIndex(random, items.length)]!);

/** The mean over groups of the mean over each group's resampled items of `value` (one bootstrap replicate). */
const replicate = <T>(groups: readonly (readonly T[])[], random: () => number, value: (item: T) => number): number =>
  mean(groups.filter((g) => g.length > 0).map((group) => mean(resample(group, random).map(value))));

/**
 * Average@k's CONFIDENCE interval by the two-level bootstrap, tasks grouped by software (one group
 * for a software's column, every software for Overall).
 */
export function averageInterval(groups: readonly (readonly TaskRuns[])[], settings: BootstrapSettings): Interval {
  const random = mulberry32(settings.seed);
  const replicates = Array.from({ length: settings.resamples }, () => replicate(groups, random, (t) => resampledRate(t, random)));
  return percentileInterval(replicates);
}

/** The observed mean difference: per software the mean over its pairs, then the mean over software. */
const meanDifference = (groups: readonly (readonly number[])[]): number => mean(groups.filter((g) => g.length > 0).map(mean));

/**
 * The sign-flip test of a mean per-task difference, ready to test any shift of it: its random sign
 * assignments and, for each, the mean of the flipped differences (`flipped`) and of the signs alone
 * (`signs`). Under "the mean difference is δ" an assignment's statistic is flipped − δ·signs (the
 * mean is linear), against the observed `observed` − δ.
 */
interface SignFlips {
  readonly observed: number;
  readonly flipped: Float64Array;
  readonly signs: Float64Array;
}

function signFlips(groups: readonly (readonly number[])[], settings: BootstrapSettings): SignFlips {
  const random = mulberry32(settings.seed ^ 0x5bd1e995);
  const flipped = new Float64Array(settings.resamples);
  const signs = new Float64Array(settings.resamples);
  for (let i = 0; i < settings.resamples; i++) {
    const drawn = groups.map((g) => g.map(() => (random() < 0.5 ? -1 : 1)));
    flipped[i] = meanDifference(groups.map((g, j) => g.map((d, t) => (drawn[j]![t]! < 0 ? -d : d))));
    signs[i] = meanDifference(drawn);
  }
  return { observed: meanDifference(groups), flipped, signs };
}

/** The test's two-sided p-value for "the mean difference is `shift`": the share of assignments at least as extreme as the observed, counting the observed (so never 0). */
function pValueAt(test: SignFlips, shift: number): number {
  const observed = Math.abs(test.observed - shift);
  let atLeast = 0;
  for (let i = 0; i < test.flipped.length; i++) if (Math.abs(test.flipped[i]! - shift * test.signs[i]!) >= observed - 1e-12) atLeast++;
  return (atLeast + 1) / (test.flipped.length + 1);
}

const accepted = (test: SignFlips, shift: number): boolean => pValueAt(test, shift) >= 1 - CONFIDENCE;

/**
 * The end of the test's acceptance region between the observed difference (always accepted) and
 * `bound` (±1): the region is one interval around the observed difference (each assignment's
 * statistic moves with the shift at most as fast as the observed one), so bisection finds its end;
 * 0 is decided by the test itself first, so the interval holds 0 exactly when p at 0 is 0.05 or more.
 */
function acceptedEnd(test: SignFlips, bound: number): number {
  if (accepted(test, bound)) return bound;
  let inside = test.observed;
  let outside = bound;
  if ((0 - inside) * (bound - inside) > 0) {
    if (accepted(test, 0)) inside = 0;
    else outside = 0;
  }
  for (let i = 0; i < 50; i++) {
    const mid = (inside + outside) / 2;
    if (accepted(test, mid)) inside = mid;
    else outside = mid;
  }
  return inside;
}

/**
 * The sign-flip permutation test's two-sided p-value of the mean per-task difference: the share of
 * random sign assignments whose |mean| is at least the observed one (counting the observed one, so
 * never 0).
 */
export function signFlipPValue(groups: readonly (readonly number[])[], settings: BootstrapSettings): number {
  return pValueAt(signFlips(groups, settings), 0);
}

/** A row against the base over paired tasks, grouped by software (see the module comment). */
export function compareWithBase(groups: readonly (readonly TaskPair[])[], settings: BootstrapSettings): Comparison {
  const differences = groups.map((g) => g.map((pair) => rate(pair.row) - rate(pair.base)));
  const test = signFlips(differences, settings);
  const pValue = pValueAt(test, 0);
  return {
    difference: test.observed,
    interval: { lower: acceptedEnd(test, -1), upper: acceptedEnd(test, 1) },
    pValue,
    tasks: groups.reduce((sum, g) => sum + g.length, 0),
    withinNoise: pValue >= 1 - CONFIDENCE,
  };
}

/** Tasks of `row` also in `base`, paired by software and task id. */
export function pairTasks(row: readonly TaskRuns[], base: readonly TaskRuns[]): TaskPair[] {
  const byKey = new Map(base.map((t) => [`${t.software}\u0000${t.taskId}`, t]));
  return row.flatMap((t) => {
    const other = byKey.get(`${t.software}\u0000${t.taskId}`);
    return other === undefined ? [] : [{ row: t, base: other }];
  });
}
