import assert from 'node:assert/strict';
import type { TaskRuns } from '../../core/metrics';
import { mulberry32 } from '../../core/prng';
import { averageInterval, compareWithBase, pairTasks, quantile, signFlipPValue } from '../../core/uncertainty';

const SETTINGS = { seed: 42, resamples: 1_000 };

/** `n` tasks of `software` with k attempts, `successes(i)` of them successful. */
const tasks = (n: number, k: number, successes: (i: number) => number, software = 'KAlgebra'): TaskRuns[] =>
  Array.from({ length: n }, (_, i) => ({ software, taskId: `T-${String(i).padStart(2, '0')}`, runs: k, successes: successes(i) }));

/** k simulated attempts of each task, succeeding with its probability. */
const simulate = (probabilities: readonly number[], k: number, random: () => number): TaskRuns[] =>
  probabilities.map((p, i) => {
    let successes = 0;
    for (let a = 0; a < k; a++) if (random() < p) successes++;
    return { software: 'KAlgebra', taskId: `T-${i}`, runs: k, successes };
  });

describe('evaluation uncertainty (core/uncertainty.ts)', () => {
  it('mulberry32 repeats its sequence for a seed and differs for another', () => {
    const draw = (seed: number) => Array.from({ length: 5 }, mulberry32(seed));
    assert.deepEqual(draw(7), draw(7));
    assert.notDeepEqual(draw(7), draw(8));
    assert.ok(draw(7).every((x) => x >= 0 && x < 1));
  });

  it('interpolates quantiles between neighbours', () => {
    assert.equal(quantile([0, 10], 0.5), 5);
    assert.equal(quantile([1, 2, 3, 4, 5], 0.25), 2);
    assert.equal(quantile([3], 0.975), 3);
  });

  it('gives [1, 1] when every attempt passed and [0, 0] when every attempt failed', () => {
    assert.deepEqual(averageInterval([tasks(20, 4, () => 4)], SETTINGS), { lower: 1, upper: 1 });
    assert.deepEqual(averageInterval([tasks(20, 4, () => 0)], SETTINGS), { lower: 0, upper: 0 });
  });

  it('contains the observed Average@k, and is the same for a seed and different for another', () => {
    const data = [tasks(20, 4, (i) => i % 5)];
    const interval = averageInterval(data, SETTINGS);
    assert.ok(interval.lower < 0.5 && interval.upper > 0.5, JSON.stringify(interval));
    assert.deepEqual(averageInterval(data, SETTINGS), interval);
    assert.notDeepEqual(averageInterval(data, { ...SETTINGS, seed: 43 }), interval);
  });

  it('narrows with more attempts per task', () => {
    const width = (k: number) => {
      const i = averageInterval([simulate(Array(20).fill(0.5), k, mulberry32(5))], SETTINGS);
      return i.upper - i.lower;
    };
    assert.ok(width(16) < width(2), `${width(16)} vs ${width(2)}`);
  });

  it('covers the known mean success probability in roughly 95% of 200 simulated evaluations (20 tasks x 4 attempts)', () => {
    // Each simulation draws 20 tasks from a population whose success probabilities are uniform on
    // [0, 1] (mean 0.5), then 4 attempts of each; fixed seeds, so the count is deterministic.
    let covered = 0;
    for (let s = 0; s < 200; s++) {
      const random = mulberry32(100 + s);
      const probabilities = Array.from({ length: 20 }, () => random());
      const interval = averageInterval([simulate(probabilities, 4, random)], { seed: s + 1, resamples: 1_000 });
      if (interval.lower <= 0.5 && 0.5 <= interval.upper) covered++;
    }
    assert.ok(covered >= 180 && covered <= 198, `covered ${covered} of 200`);
  });

  it('keeps Overall the mean over software: each software is resampled apart', () => {
    // KAlgebra always passes, TeXstudio never: any resample's Overall is exactly 0.5.
    assert.deepEqual(averageInterval([tasks(20, 4, () => 4), tasks(12, 4, () => 0, 'TeXstudio')], SETTINGS), { lower: 0.5, upper: 0.5 });
  });

  it('pairs tasks by software and id, leaving out those only one row ran', () => {
    const row = [...tasks(3, 2, () => 1), ...tasks(1, 2, () => 2, 'TeXstudio')];
    const base = tasks(2, 2, () => 0);
    assert.deepEqual(pairTasks(row, base).map((p) => `${p.row.software}/${p.row.taskId}:${p.base.successes}`), ['KAlgebra/T-00:0', 'KAlgebra/T-01:0']);
  });

  it('puts identical rows within noise, with p = 1', () => {
    const base = tasks(20, 4, (i) => i % 5);
    const same = compareWithBase([pairTasks(base, base)], SETTINGS);
    assert.equal(same.difference, 0);
    assert.equal(same.withinNoise, true);
    assert.equal(same.pValue, 1);
    assert.equal(same.tasks, 20);
    // Every shift away from 0 is rejected: 20 tasks cannot all flip one way by chance.
    assert.ok(Math.abs(same.interval.lower) < 1e-9 && Math.abs(same.interval.upper) < 1e-9, JSON.stringify(same.interval));
  });

  it('puts a 40-point difference over 20 tasks x 4 attempts outside the noise', () => {
    const random = mulberry32(11);
    const base = simulate(Array(20).fill(0.4), 4, random);
    const better = simulate(Array(20).fill(0.8), 4, random);
    const result = compareWithBase([pairTasks(better, base)], SETTINGS);
    assert.ok(result.difference > 0.25, `difference ${result.difference}`);
    assert.equal(result.withinNoise, false);
    assert.ok(result.interval.lower > 0 && result.interval.lower < result.difference && result.difference < result.interval.upper, JSON.stringify(result.interval));
    assert.ok(result.pValue < 0.01, `p ${result.pValue}`);
    // The other way round: the same size, negative.
    const worse = compareWithBase([pairTasks(base, better)], SETTINGS);
    assert.ok(Math.abs(worse.difference + result.difference) < 1e-12 && worse.interval.upper < 0 && !worse.withinNoise);
  });

  it('puts a one-task difference within noise', () => {
    const base = tasks(20, 4, () => 2);
    const row = tasks(20, 4, (i) => (i === 0 ? 3 : 2));
    const result = compareWithBase([pairTasks(row, base)], SETTINGS);
    assert.equal(result.difference, 0.25 / 20);
    assert.equal(result.withinNoise, true);
    assert.ok(result.pValue > 0.5, `p ${result.pValue}`);
  });

  it('keeps a difference within noise when too few tasks show it, though every one differs alike: the interval says so too', () => {
    const result = compareWithBase([pairTasks(tasks(2, 2, () => 0), tasks(2, 2, () => 2))], SETTINGS);
    // 2 tasks cannot reject any shift: the inverted test's interval is every possible difference.
    assert.deepEqual(result.interval, { lower: -1, upper: 1 });
    assert.ok(Math.abs(result.pValue - 0.5) < 0.05, `p ${result.pValue}`);
    assert.equal(result.withinNoise, true);
  });

  it('gives an interval that excludes 0 exactly when p < 0.05 and holds the difference, whatever the data (the sign-flip test inverted)', () => {
    const random = mulberry32(2026);
    let outside = 0;
    for (let trial = 0; trial < 300; trial++) {
      const n = 2 + Math.floor(random() * 20);
      const k = 1 + Math.floor(random() * 4);
      const gap = random() * 0.6 - 0.3;
      const p = Array.from({ length: n }, () => 0.1 + random() * 0.6);
      const groups = [pairTasks(simulate(p.map((x) => x + gap), k, random), simulate(p, k, random))];
      if (trial % 3 === 0) groups.push(pairTasks(simulate([0.5, 0.5, 0.9], k, random), simulate([0.5, 0.2, 0.9], k, random)).map((pair) => ({ row: { ...pair.row, software: 'TeXstudio' }, base: { ...pair.base, software: 'TeXstudio' } })));
      const c = compareWithBase(groups, { seed: trial, resamples: 400 });
      const holdsZero = c.interval.lower <= 0 && 0 <= c.interval.upper;
      assert.equal(holdsZero, c.pValue >= 0.05, `trial ${trial}: ${JSON.stringify(c)}`);
      assert.equal(c.withinNoise, holdsZero);
      assert.ok(c.interval.lower <= c.difference && c.difference <= c.interval.upper && c.interval.lower >= -1 && c.interval.upper <= 1, `trial ${trial}: ${JSON.stringify(c)}`);
      if (!holdsZero) outside++;
    }
    assert.ok(outside > 20 && outside < 280, `both verdicts occur (${outside} of 300 outside the noise)`);
  });

  it('puts the ends of the interval where the test starts to reject: just inside accepted, just outside rejected', () => {
    const random = mulberry32(5);
    const groups = [pairTasks(simulate(Array(16).fill(0.7), 4, random), simulate(Array(16).fill(0.4), 4, random))];
    const c = compareWithBase(groups, SETTINGS);
    const differences = groups[0]!.map((pair) => pair.row.successes / pair.row.runs - pair.base.successes / pair.base.runs);
    // Testing "the mean difference is δ" is testing the shifted differences against 0.
    const p = (shift: number): number => signFlipPValue([differences.map((d) => d - shift)], SETTINGS);
    for (const end of [c.interval.lower, c.interval.upper]) {
      const outward = Math.sign(end - c.difference) * 1e-6;
      assert.ok(p(end - outward) >= 0.05 && p(end + outward) < 0.05, `end ${end}: p inside ${p(end - outward)}, outside ${p(end + outward)}`);
    }
  });

  it('gives the sign-flip test a p-value of about 2^(1-n) when every one of n differences has the same sign', () => {
    const p = signFlipPValue([Array(6).fill(0.5)], { seed: 3, resamples: 20_000 });
    assert.ok(Math.abs(p - 2 / 64) < 0.01, `p ${p}`);
  });
});
