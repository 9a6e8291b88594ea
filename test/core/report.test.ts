import assert from 'node:assert/strict';
import { confusion } from '../../core/judge/metrics';
import { totalCost } from '../../core/judge/verdict-file';
import type { RunRecord } from '../../core/metrics';
import { mulberry32 } from '../../core/prng';
import { buildEvaluationReport, columnOrder, COMPARISON_NOTE, formatComparison, noiseSummary, renderReportMarkdown, withDiff, type EvaluationReport } from '../../core/report';
import { APPS } from '../../apps/index';

/** k runs of `task`, the first `successes` of them successful. */
const runs = (software: string, task: string, successes: number, k = 2): RunRecord[] =>
  Array.from({ length: k }, (_, run) => ({ software, taskId: task, run, success: run < successes }));

const report = (run: string, createdAt: string, records: RunRecord[], planner = 'base') =>
  buildEvaluationReport(APPS, {
    series: 'nightly',
    run,
    k: 2,
    createdAt,
    rows: [{ planner, model: 'coda-planner', runs: { KAlgebra: `${run}-KAlgebra`, TeXstudio: `${run}-TeXstudio` }, records }],
    unsupported: [{ software: 'TeXstudio', taskId: 'A-01', reason: 'needs ChimeraX, which this deployment does not run' }],
  });

describe('evaluation reports', () => {
  const first = report('n1', '2026-11-20T02:00:00.000Z', [...runs('KAlgebra', 'A-01', 2), ...runs('KAlgebra', 'C-01', 0), ...runs('TeXstudio', 'D-01', 1)]);
  const second = report('n2', '2026-11-21T02:00:00.000Z', [...runs('KAlgebra', 'A-01', 0), ...runs('KAlgebra', 'C-01', 1), ...runs('TeXstudio', 'D-01', 2), ...runs('KAlgebra', 'C-03', 2)]);

  it('has one row per planner and one column per software, Overall the mean over software', () => {
    assert.deepEqual(first.softwares, ['KAlgebra', 'TeXstudio']);
    const row = first.rows[0]!;
    assert.equal(row.metrics.bySoftware.KAlgebra?.averageAtK, 0.5);
    assert.equal(row.metrics.bySoftware.TeXstudio?.averageAtK, 0.5);
    assert.equal(row.metrics.bySoftware.KAlgebra?.passAtK, 0.5);
    assert.equal(row.metrics.overall.passAtK, 0.75);
    assert.throws(() => buildEvaluationReport(APPS, { series: 's', run: 'r', k: 3, createdAt: 'x', rows: [{ planner: 'p', model: 'm', runs: {}, records: runs('K', 'A', 1) }] }), /at least 3 runs/);
  });

  it('puts the columns in the paper\'s layout: ScienceBoard domain and software, in the registry\'s order, Overall last', () => {
    const six = ['TeXstudio', 'Lean', 'Celestia', 'GrassGIS', 'ChimeraX', 'KAlgebra'];
    const all = buildEvaluationReport(APPS, {
      series: 's',
      run: 'r',
      k: 1,
      createdAt: 't',
      rows: [{ planner: 'base', model: 'm', runs: {}, records: [...six, 'InHouseApp'].flatMap((software, i) => runs(software, 'A-01', i % 2, 1)) }],
    });
    assert.deepEqual(all.softwares, ['KAlgebra', 'ChimeraX', 'GrassGIS', 'Celestia', 'TeXstudio', 'Lean', 'InHouseApp']);
    assert.match(
      renderReportMarkdown(APPS, all),
      /\| Planner \| Algebra \(KAlgebra\) \| Biochemistry \(ChimeraX\) \| GIS \(GRASS GIS\) \| Astronomy \(Celestia\) \| Documents \(TeXstudio\) \| Theorem proving \(Lean\) \| InHouseApp \| Overall \|\n\| --- \| ---: \| ---: \| ---: \| ---: \| ---: \| ---: \| ---: \| ---: \|\n\| base \(`m`\) \| 100\.00 \| 0\.00 \| 100\.00 \| 0\.00 \| 0\.00 \| 100\.00 \| 0\.00 \| 42\.86 \|/,
    );
    assert.deepEqual(columnOrder(APPS, ['Zeta', 'Lean', 'Alpha', 'KAlgebra']), ['KAlgebra', 'Lean', 'Alpha', 'Zeta']);
  });

  it('names the tasks that started and stopped passing since the previous report, among those both ran', () => {
    const diffed = withDiff(second, first, 'coda/reports/nightly/x-n1.json');
    assert.deepEqual(diffed.previous, { key: 'coda/reports/nightly/x-n1.json', run: 'n1', createdAt: '2026-11-20T02:00:00.000Z' });
    assert.deepEqual(diffed.diff, [
      { planner: 'base', started: ['KAlgebra/C-01'], stopped: ['KAlgebra/A-01'], averageDelta: { KAlgebra: 0, TeXstudio: 50, overall: 25 } },
    ]);
    const renamed = withDiff(report('n3', '2026-11-22T02:00:00.000Z', runs('KAlgebra', 'A-01', 1), 'generalist'), first, 'k');
    assert.deepEqual(renamed.diff, [{ planner: 'generalist', started: [], stopped: [], averageDelta: {} }]);
  });

  it('renders the paper table layout, the tasks, the unsupported ones and the diff as Markdown', () => {
    const markdown = renderReportMarkdown(APPS, withDiff(second, first, 'k'));
    assert.match(markdown, /^# Evaluation nightly \/ n2\n/);
    assert.match(markdown, /## Average@2 \(%\), with its 95% interval\n\n\| Planner \| Algebra \(KAlgebra\) \| Documents \(TeXstudio\) \| Overall \|\n\| --- \| ---: \| ---: \| ---: \|\n\| base \(`coda-planner`\) \| 50\.00 \[0\.0, 100\.0\] \| 100\.00 \[100\.0, 100\.0\] \| 75\.00 \[50\.0, 100\.0\] \|\n/);
    assert.match(markdown, /bootstrap with seed 20181124 and 2000 resamples \(as many sign assignments for the test\)\..* No other row ran a task `base` ran, so none is compared with it\./);
    assert.match(markdown, /## Pass@2 \(%\)\n\n\| Planner \| Algebra \(KAlgebra\) \| Documents \(TeXstudio\) \| Overall \|\n\| --- \| ---: \| ---: \| ---: \|\n\| base \(`coda-planner`\) \| 66\.67 \| 100\.00 \| 83\.33 \|/);
    assert.match(markdown, /- base, Algebra \(KAlgebra\): A-01 0\/2, C-01 1\/2, C-03 2\/2 \(run `n2-KAlgebra`\)/);
    assert.match(markdown, /## Not run here \(unsupported, not counted\)\n\n- TeXstudio\/A-01: needs ChimeraX/);
    assert.match(markdown, /## Since n1 \(2026-11-20T02:00:00\.000Z\)\n\n- base: Average@2 KAlgebra 0\.00, TeXstudio \+50\.00, overall \+25\.00; started passing: KAlgebra\/C-01; stopped passing: KAlgebra\/A-01/);
    const alone = renderReportMarkdown(APPS, buildEvaluationReport(APPS, { series: 's', run: 'r', k: 1, createdAt: 't', rows: [{ planner: 'p', model: 'm', runs: {}, records: [] }] }));
    assert.match(alone, /This is the first report of its series\./);
    assert.doesNotMatch(alone, /unsupported/);
    const partial = renderReportMarkdown(APPS, buildEvaluationReport(APPS, {
      series: 's', run: 'r', k: 1, createdAt: 't',
      rows: [{ planner: 'a', model: 'm', runs: {}, records: runs('KAlgebra', 'A-01', 1, 1) }, { planner: 'b', model: 'm', runs: {}, records: runs('TeXstudio', 'D-01', 0, 1) }],
    }));
    assert.match(partial, /\| a \(`m`\) \| 100\.00 \[100\.0, 100\.0\] \| – \| 100\.00 \[100\.0, 100\.0\] \|/);
    assert.match(partial, /There is no row named `base`, so no row is compared with it\./);
    assert.match(partial, /- b, Algebra \(KAlgebra\): none \(run `-`\)/);
    const noDelta = renderReportMarkdown(APPS, withDiff(report('n4', 't', runs('KAlgebra', 'A-01', 1), 'other'), first, 'k'));
    assert.match(noDelta, /- other: Average@2 not in the previous report; started passing: none; stopped passing: none/);
  });
});

describe('evaluation reports with their uncertainty (schema v2 and later)', () => {
  /** 20 KAlgebra and 12 TeXstudio tasks x 4 attempts; task i passes `passes(software, i)` of them. */
  const records = (passes: (software: string, i: number) => number): RunRecord[] =>
    (['KAlgebra', 'TeXstudio'] as const).flatMap((software) =>
      Array.from({ length: software === 'KAlgebra' ? 20 : 12 }, (_, i) => runs(software, `T-${String(i).padStart(2, '0')}`, passes(software, i), 4)).flat(),
    );
  const rows = [
    { planner: 'base', model: 'coda-base', runs: { KAlgebra: 'b', TeXstudio: 'b' }, records: records((_, i) => i % 3) },
    // 40 points better on KAlgebra, the same as the base on TeXstudio.
    { planner: 'specialist-KAlgebra', model: 'coda-s', runs: { KAlgebra: 's', TeXstudio: 's' }, records: records((software, i) => (software === 'KAlgebra' ? Math.min(4, (i % 3) + 2) : i % 3)) },
    { planner: 'same', model: 'coda-base', runs: { KAlgebra: 'c', TeXstudio: 'c' }, records: records((_, i) => i % 3) },
  ];
  const build = (seed = 5, list = rows) => buildEvaluationReport(APPS, { series: 's', run: 'r', k: 4, createdAt: '2026-11-24T00:00:00.000Z', rows: list, bootstrap: { seed, resamples: 500 } });
  const report = build();

  it('records the seed, the resamples and the base, and gives every row its Average@k interval', () => {
    assert.equal(report.schema, 'coda.evaluation-report/v3');
    assert.deepEqual({ ...report.uncertainty, method: undefined }, { confidence: 0.95, seed: 5, resamples: 500, base: 'base', method: undefined });
    for (const row of report.rows) {
      const interval = row.averageInterval!;
      assert.deepEqual(Object.keys(interval.bySoftware).sort(), ['KAlgebra', 'TeXstudio']);
      assert.ok(interval.overall.lower < row.metrics.overall.averageAtK && row.metrics.overall.averageAtK < interval.overall.upper, `${row.planner}: ${JSON.stringify(interval.overall)}`);
    }
  });

  it('compares every other row with the base, per software and overall, paired over the same tasks', () => {
    assert.equal(report.rows[0]!.vsBase, undefined);
    const specialist = report.rows[1]!.vsBase!;
    assert.equal(specialist.bySoftware.KAlgebra!.tasks, 20);
    assert.ok(Math.abs(specialist.bySoftware.KAlgebra!.difference - report.rows[1]!.metrics.bySoftware.KAlgebra!.averageAtK + report.rows[0]!.metrics.bySoftware.KAlgebra!.averageAtK) < 1e-12);
    assert.equal(specialist.bySoftware.KAlgebra!.withinNoise, false);
    const same = specialist.bySoftware.TeXstudio!;
    assert.deepEqual({ ...same, interval: undefined, pValue: 0 }, { difference: 0, interval: undefined, pValue: 0, tasks: 12, withinNoise: true });
    // No shift of a difference of 0 on 12 tasks survives the test: the interval is 0 (to the test's 1e-12 tolerance).
    assert.ok(Math.abs(same.interval.lower) < 1e-9 && Math.abs(same.interval.upper) < 1e-9, JSON.stringify(same.interval));
    assert.equal(specialist.overall.tasks, 32);
    assert.equal(specialist.overall.withinNoise, false);
    assert.equal(report.rows[2]!.vsBase!.overall.withinNoise, true);
  });

  it('makes the same figures from the same seed and others from another', () => {
    assert.deepEqual(build(), report);
    assert.notDeepEqual(build(6).rows[1]!.averageInterval, report.rows[1]!.averageInterval);
  });

  it('compares nothing without a row named base', () => {
    const without = build(5, rows.slice(1));
    assert.equal(without.uncertainty!.base, undefined);
    assert.ok(without.rows.every((row) => row.vsBase === undefined && row.averageInterval !== undefined));
    assert.equal(noiseSummary(APPS, without), undefined);
  });

  it('renders intervals, a vs base column, the per-software differences and which are within noise', () => {
    const markdown = renderReportMarkdown(APPS, report);
    assert.match(markdown, /\| Planner \| Algebra \(KAlgebra\) \| Documents \(TeXstudio\) \| Overall \| vs base \(Overall, points\) \|\n\| --- \| ---: \| ---: \| ---: \| ---: \|\n\| base \(`coda-base`\) \| 23\.75 \[\d+\.\d, \d+\.\d\] \| \d+\.\d\d \[[\d.]+, [\d.]+\] \| [\d.]+ \[[\d.]+, [\d.]+\] \| \(the base\) \|\n/);
    assert.match(markdown, /\| specialist-KAlgebra \(`coda-s`\) \| 73\.75 \[[\d.]+, [\d.]+\] \|.*\| \+25\.0 \[[\d.]+, [\d.]+\], p [\d.]+ \|\n/);
    assert.match(markdown, /\| same \(`coda-base`\) \|.*\| 0\.0 \[0\.0, 0\.0\] within noise, p 1\.000 \|\n/);
    assert.match(markdown, /## Average@4 minus base, per software \(percentage points\)\n\n\| Planner \| Algebra \(KAlgebra\) \| Documents \(TeXstudio\) \| Overall \|/);
    assert.match(markdown, /\| specialist-KAlgebra \| \+50\.0 \[[\d.]+, [\d.]+\], p 0\.002 \| 0\.0 \[0\.0, 0\.0\] within noise, p 1\.000 \|/);
    assert.match(markdown, /within noise: specialist-KAlgebra on Documents \(TeXstudio\); same on Algebra \(KAlgebra\), Documents \(TeXstudio\), Overall\. Outside the noise: specialist-KAlgebra on Algebra \(KAlgebra\), Overall\./);
    assert.match(markdown, /bootstrap with seed 5 and 500 resamples/);
  });

  it('writes negative differences with a minus sign and says within noise when the interval holds 0', () => {
    assert.equal(formatComparison({ difference: -0.03, interval: { lower: -0.081, upper: 0.14 }, pValue: 0.61, tasks: 32, withinNoise: true }), '\u22123.0 [\u22128.1, 14.0] within noise, p 0.610');
    assert.equal(formatComparison({ difference: 0.15, interval: { lower: 0.042, upper: 0.251 }, pValue: 0.0004, tasks: 32, withinNoise: false }), '+15.0 [4.2, 25.1], p < 0.001');
  });

  it('counts the attempts whose app was not running at evaluation as not solved, and lists them with their count in every report', () => {
    const records: RunRecord[] = [
      { software: 'ChimeraX', taskId: 'A-08', run: 0, success: false, appNotRunning: true },
      { software: 'ChimeraX', taskId: 'A-08', run: 1, success: true },
      { software: 'ChimeraX', taskId: 'D-03', run: 0, success: false },
      { software: 'ChimeraX', taskId: 'D-03', run: 1, success: false, appNotRunning: true },
    ];
    const built = buildEvaluationReport(APPS, { series: 's', run: 'r', k: 2, createdAt: 't', rows: [{ planner: 'base', model: 'm', runs: {}, records }, { planner: 'other', model: 'm', runs: {}, records: runs('ChimeraX', 'A-08', 1) }] });
    assert.equal(built.schema, 'coda.evaluation-report/v3');
    assert.equal(built.rows[0]!.metrics.overall.averageAtK, 0.25);
    assert.deepEqual(built.rows.map((r) => r.appNotRunning), [['ChimeraX/A-08/0', 'ChimeraX/D-03/1'], []]);
    const markdown = renderReportMarkdown(APPS, built);
    assert.match(markdown, /## The app was not running at evaluation\n\nAttempts whose app was not running when they were evaluated \(the agent closed it, or it crashed\): counted as not solved, reward 0, never a pass\.\n\n- base: 2 \(ChimeraX\/A-08\/0, ChimeraX\/D-03\/1\)\n- other: 0\n/);
    const v2 = { ...built, schema: 'coda.evaluation-report/v2', rows: built.rows.map((r) => ({ ...r, appNotRunning: undefined })) } as EvaluationReport;
    assert.match(renderReportMarkdown(APPS, v2), /## The app was not running at evaluation\n\nNot recorded in this report \(coda\.evaluation-report\/v2\)\./);
  });

  it('never shows an interval that excludes 0 beside "within noise", nor one that holds 0 without it', () => {
    const random = mulberry32(18);
    const shown: string[] = [];
    for (let trial = 0; trial < 60; trial++) {
      const tasks = 2 + Math.floor(random() * 14);
      const gain = Math.floor(random() * 3);
      const rows = ['base', 'row'].map((planner, r) => ({
        planner,
        model: 'm',
        runs: {},
        records: ['KAlgebra', 'TeXstudio'].flatMap((software) => Array.from({ length: tasks }, (_, i) => runs(software, `T-${i}`, Math.min(2, Math.floor(random() * 3) + (r === 1 && i % 2 === 0 ? gain : 0)), 2)).flat()),
      }));
      const markdown = renderReportMarkdown(APPS, buildEvaluationReport(APPS, { series: 's', run: 'r', k: 2, createdAt: 't', rows, bootstrap: { seed: trial, resamples: 300 } }));
      shown.push(...(markdown.match(/[+\u2212]?\d+\.\d \[[^\]]*\](?: within noise)?, p [<\d. ]+/g) ?? []));
    }
    const number = (text: string): number => Number(text.replace('\u2212', '-'));
    let within = 0;
    for (const cell of shown) {
      const [, lower = '', upper = ''] = /\[([^,]+), ([^\]]+)\]/.exec(cell) ?? [];
      assert.equal(number(lower) <= 0 && 0 <= number(upper), cell.includes('within noise'), cell);
      if (cell.includes('within noise')) within++;
    }
    assert.ok(shown.length >= 180 && within > 0 && within < shown.length, `${shown.length} comparisons shown, ${within} within noise`);
  });

  it('leaves out an interval that disagrees with its verdict (a v2 report\'s bootstrap) and keeps the digits of an end near 0', () => {
    assert.equal(formatComparison({ difference: 0.131, interval: { lower: 0.078, upper: 0.184 }, pValue: 0.053, tasks: 24, withinNoise: true }), '+13.1 (interval of an earlier method left out) within noise, p 0.053');
    assert.equal(formatComparison({ difference: 0.2, interval: { lower: 0.00004, upper: 0.3 }, pValue: 0.04, tasks: 24, withinNoise: false }), '+20.0 [0.004, 30.0], p 0.040');
    assert.equal(formatComparison({ difference: -0.2, interval: { lower: -0.3, upper: -0.00004 }, pValue: 0.04, tasks: 24, withinNoise: false }), '\u221220.0 [\u221230.0, \u22120.004], p 0.040');
    assert.match(renderReportMarkdown(APPS, report), new RegExp(`\\n${COMPARISON_NOTE.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n`));
  });

  it('still renders a v1 report, without intervals or comparisons', () => {
    const v1 = JSON.parse(JSON.stringify({ ...report, schema: 'coda.evaluation-report/v1', uncertainty: undefined, rows: report.rows.map((r) => ({ ...r, averageInterval: undefined, vsBase: undefined })) })) as EvaluationReport;
    const markdown = renderReportMarkdown(APPS, v1);
    assert.match(markdown, /## Average@4 \(%\)\n\n\| Planner \| Algebra \(KAlgebra\) \| Documents \(TeXstudio\) \| Overall \|\n\| --- \| ---: \| ---: \| ---: \|\n\| base \(`coda-base`\) \| 23\.75 \| [\d.]+ \| [\d.]+ \|\n/);
    assert.match(markdown, /This report \(schema v1\) has no intervals\./);
    assert.doesNotMatch(markdown, /within noise|vs base/);
  });
});

describe('judge precision and recall', () => {
  it('counts the confusion matrix on success, the evaluators as truth', () => {
    const labels = [
      { predicted: true, truth: true },
      { predicted: true, truth: true },
      { predicted: true, truth: false },
      { predicted: false, truth: true },
      { predicted: false, truth: false },
    ];
    assert.deepEqual(confusion(labels), { truePositives: 2, falsePositives: 1, falseNegatives: 1, trueNegatives: 1, precision: 2 / 3, recall: 2 / 3 });
    assert.deepEqual(confusion([]), { truePositives: 0, falsePositives: 0, falseNegatives: 0, trueNegatives: 0, precision: 0, recall: 0 });
  });
});

describe('judge cost totals', () => {
  it('sums calls, images, pixels by resolution, tokens and latency', () => {
    const vote = (resolution: 'low' | 'high', pixels: number) => ({ resolution, cost: { images: 3, pixels, promptTokens: 100, completionTokens: 10, latencyMs: 5 } });
    assert.deepEqual(totalCost([vote('low', 1000), vote('high', 4000), vote('high', 4000)]), {
      calls: 3, images: 9, pixels: 9000, lowResolutionPixels: 1000, highResolutionPixels: 8000, promptTokens: 300, completionTokens: 30, latencyMs: 15,
    });
    assert.equal(totalCost([]).calls, 0);
  });
});
