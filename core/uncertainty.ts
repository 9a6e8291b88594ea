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
 *   on the per-task difference of success rates: its 95% interval is a percentile bootstrap of
 *   the mean difference resampling the tasks (each task's difference already carries its attempts'
 *   noise, and the pairing cancels how hard each task is, which dominates the interval of a single
 *   row); the p-value is a sign-flip permutation test of the mean difference (under "no difference"
 *   each task's difference is as likely positive as negative). A difference is "within noise" when
 *   its interval contains 0, or when the test's p-value is 0.05 or more: with few tasks that all
 *   differ alike the bootstrap's interval collapses to a point (2 tasks, both 100 points worse:
 *   [−100, −100]) while the permutation test rightly says 2 tasks cannot show anything (p 0.5). Simulated on the local tasks (bench/evaluation-noise.ts), two copies of
 *   one planner are called different in 3–4.5% of evaluations, at most the nominal 5%.
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
  readonly interval: Interval;
  /** Two-sided, from the sign-flip permutation test. */
  readonly pValue: number;
  /** Tasks in both rows. */
  readonly tasks: number;
  /** The interval contains 0 or p >= 0.05 (see the module comment). */
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
 * The sign-flip permutation test's two-sided p-value of the mean per-task difference: the share of
 * random sign assignments whose |mean| is at least the observed one (counting the observed one, so
 * never 0).
 */
export function signFlipPValue(groups: readonly (readonly number[])[], settings: BootstrapSettings): number {
  const observed = Math.abs(meanDifference(groups));
  const random = mulberry32(settings.seed ^ 0x5bd1e995);
  let atLeast = 0;
  for (let i = 0; i < settings.resamples; i++) {
    const flipped = groups.map((g) => g.map((d) => (random() < 0.5 ? -d : d)));
    if (Math.abs(meanDifference(flipped)) >= observed - 1e-12) atLeast++;
  }
  return (atLeast + 1) / (settings.resamples + 1);
}

/** A row against the base over paired tasks, grouped by software (see the module comment). */
export function compareWithBase(groups: readonly (readonly TaskPair[])[], settings: BootstrapSettings): Comparison {
  const differences = groups.map((g) => g.map((pair) => rate(pair.row) - rate(pair.base)));
  const random = mulberry32(settings.seed);
  const replicates = Array.from({ length: settings.resamples }, () => replicate(differences, random, (d) => d));
  const interval = percentileInterval(replicates);
  const pValue = signFlipPValue(differences, settings);
  return {
    difference: meanDifference(differences),
    interval,
    pValue,
    tasks: groups.reduce((sum, g) => sum + g.length, 0),
    withinNoise: (interval.lower <= 0 && interval.upper >= 0) || pValue >= 1 - CONFIDENCE,
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
