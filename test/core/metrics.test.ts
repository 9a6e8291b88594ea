import assert from 'node:assert/strict';
import { passAtK, percent, successRate, summarizeRuns, taskRuns, type RunRecord } from '../../core/metrics';

/** Records for `tasks` tasks of `software`, 8 runs each; task i succeeds in successes[i] of them. */
function records(software: string, tasks: number, successes: number[]): RunRecord[] {
  return Array.from({ length: tasks }, (_, t) =>
    Array.from({ length: 8 }, (_, run) => ({ software, taskId: `T-${String(t + 1).padStart(2, '0')}`, run, success: run < (successes[t] ?? 0) })),
  ).flat();
}

/** successes per task: `solved` tasks share `total` successes (at least one each), the rest none. */
function spread(solved: number, total: number): number[] {
  const counts = Array.from({ length: solved }, () => 1);
  for (let left = total - solved, i = 0; left > 0; left--, i = (i + 1) % solved) counts[i] = (counts[i] as number) + 1;
  return counts;
}

const binomial = (n: number, k: number): bigint => {
  let result = 1n;
  for (let i = 0; i < k; i++) result = (result * BigInt(n - i)) / BigInt(i + 1);
  return result;
};

describe('metrics', () => {
  it('prints success rates as the paper does: 1 of 31 is 3.23%', () => {
    assert.equal(percent(successRate(1, 31)), 3.23);
    assert.equal(percent(successRate(0, 0)), 0);
    assert.equal(percent(successRate(31, 31)), 100);
  });

  it('estimates pass@k without bias (Chen et al.)', () => {
    assert.equal(passAtK(8, 0, 8), 0);
    assert.equal(passAtK(8, 1, 8), 1);
    assert.ok(Math.abs(passAtK(10, 2, 1) - 0.2) < 1e-12);
    for (const [n, c, k] of [[10, 2, 8], [16, 2, 8], [40, 7, 8], [8, 3, 4]] as const) {
      const exact = 1 - Number(binomial(n - c, k)) / Number(binomial(n, k));
      assert.ok(Math.abs(passAtK(n, c, k) - exact) < 1e-12, `n=${n} c=${c} k=${k}`);
    }
  });

  it('refuses pass@k from fewer than k runs, and nonsense counts', () => {
    assert.throws(() => passAtK(4, 1, 8), /pass@8 needs at least 8 runs, got 4/);
    assert.throws(() => passAtK(8, 9, 8), RangeError);
    assert.throws(() => passAtK(8, 1, 0), RangeError);
    assert.throws(() => summarizeRuns(records('KAlgebra', 2, [1, 0]), 16), /needs at least 16 runs/);
  });

  it('reproduces CODA stage-2 on KAlgebra: Average@8 20.16 (50/248), Pass@8 48.39 (15/31)', () => {
    const report = summarizeRuns(records('KAlgebra', 31, spread(15, 50)), 8);
    const algebra = report.bySoftware.KAlgebra;
    assert.ok(algebra);
    assert.deepEqual([algebra.taskCount, algebra.runs, algebra.successes], [31, 248, 50]);
    assert.equal(percent(algebra.averageAtK), 20.16);
    assert.equal(percent(algebra.passAtK), 48.39);
  });

  it('computes Overall as the mean over software, as the paper\'s table does', () => {
    // The paper's Overall column (Pass@8 39.96) is the mean of its per-software figures; pooling all tasks would not give it.

    const report = summarizeRuns(
      [
        ...records('KAlgebra', 31, spread(15, 50)),
        // 32.23% of 29 x 8 runs is not a whole number of runs; 75/232 = 32.33% is the nearest.
        ...records('ChimeraX', 29, spread(15, 75)),
        ...records('GRASS', 34, spread(10, 40)),
        ...records('Celestia', 33, spread(10, 45)),
      ],
      8,
    );
    const figures = Object.entries(report.bySoftware).map(([software, s]) => [software, percent(s.averageAtK), percent(s.passAtK)]);
    assert.deepEqual(figures, [
      ['Celestia', 17.05, 30.3],
      ['ChimeraX', 32.33, 51.72],
      ['GRASS', 14.71, 29.41],
      ['KAlgebra', 20.16, 48.39],
    ]);
    assert.equal(percent(report.overall.passAtK), 39.96);
    assert.equal(percent(report.overall.averageAtK), 21.06);
    assert.equal(percent(report.overall.successes / report.overall.runs), 20.67, 'pooled, for contrast');
    assert.deepEqual([report.overall.taskCount, report.overall.runs, report.k], [127, 1016, 8]);
  });

  it('lists success per task and refuses a run counted twice', () => {
    const runs: RunRecord[] = [
      { software: 'KAlgebra', taskId: 'B-01', run: 0, success: true },
      { software: 'KAlgebra', taskId: 'A-01', run: 0, success: false },
      { software: 'KAlgebra', taskId: 'A-01', run: 1, success: true },
      { software: 'Celestia', taskId: 'A-01', run: 0, success: false },
    ];
    assert.deepEqual(taskRuns(runs), [
      { software: 'Celestia', taskId: 'A-01', runs: 1, successes: 0 },
      { software: 'KAlgebra', taskId: 'A-01', runs: 2, successes: 1 },
      { software: 'KAlgebra', taskId: 'B-01', runs: 1, successes: 1 },
    ]);
    assert.throws(() => taskRuns([...runs, { software: 'KAlgebra', taskId: 'A-01', run: 1, success: false }]), /run 1 of KAlgebra\/A-01 is counted twice/);
    const report = summarizeRuns(runs, 1);
    assert.equal(report.bySoftware.KAlgebra?.averageAtK, 0.75);
    assert.equal(report.bySoftware.KAlgebra?.passAtK, 0.75);
  });

  it('summarises nothing as zeros', () => {
    assert.deepEqual(summarizeRuns([], 8).overall, { taskCount: 0, runs: 0, successes: 0, averageAtK: 0, passAtK: 0 });
  });
});
