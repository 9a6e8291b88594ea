import assert from 'node:assert/strict';
import { confusion } from '../../core/judge/metrics';
import { totalCost } from '../../core/judge/verdict-file';
import type { RunRecord } from '../../core/metrics';
import { buildEvaluationReport, columnOrder, renderReportMarkdown, withDiff } from '../../core/report';

/** k runs of `task`, the first `successes` of them successful. */
const runs = (software: string, task: string, successes: number, k = 2): RunRecord[] =>
  Array.from({ length: k }, (_, run) => ({ software, taskId: task, run, success: run < successes }));

const report = (run: string, createdAt: string, records: RunRecord[], planner = 'base') =>
  buildEvaluationReport({
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
    assert.throws(() => buildEvaluationReport({ series: 's', run: 'r', k: 3, createdAt: 'x', rows: [{ planner: 'p', model: 'm', runs: {}, records: runs('K', 'A', 1) }] }), /at least 3 runs/);
  });

  it('puts the columns in the paper\'s layout: ScienceBoard domain and software, in the registry\'s order, Overall last', () => {
    const six = ['TeXstudio', 'Lean', 'Celestia', 'GrassGIS', 'ChimeraX', 'KAlgebra'];
    const all = buildEvaluationReport({
      series: 's',
      run: 'r',
      k: 1,
      createdAt: 't',
      rows: [{ planner: 'base', model: 'm', runs: {}, records: [...six, 'InHouseApp'].flatMap((software, i) => runs(software, 'A-01', i % 2, 1)) }],
    });
    assert.deepEqual(all.softwares, ['KAlgebra', 'ChimeraX', 'GrassGIS', 'Celestia', 'TeXstudio', 'Lean', 'InHouseApp']);
    assert.match(
      renderReportMarkdown(all),
      /\| Planner \| Algebra \(KAlgebra\) \| Biochemistry \(ChimeraX\) \| GIS \(GRASS GIS\) \| Astronomy \(Celestia\) \| Documents \(TeXstudio\) \| Theorem proving \(Lean\) \| InHouseApp \| Overall \|\n\| --- \| ---: \| ---: \| ---: \| ---: \| ---: \| ---: \| ---: \| ---: \|\n\| base \(`m`\) \| 100\.00 \| 0\.00 \| 100\.00 \| 0\.00 \| 0\.00 \| 100\.00 \| 0\.00 \| 42\.86 \|/,
    );
    assert.deepEqual(columnOrder(['Zeta', 'Lean', 'Alpha', 'KAlgebra']), ['KAlgebra', 'Lean', 'Alpha', 'Zeta']);
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
    const markdown = renderReportMarkdown(withDiff(second, first, 'k'));
    assert.match(markdown, /^# Evaluation nightly \/ n2\n/);
    assert.match(markdown, /## Average@2 \(%\)\n\n\| Planner \| Algebra \(KAlgebra\) \| Documents \(TeXstudio\) \| Overall \|\n\| --- \| ---: \| ---: \| ---: \|\n\| base \(`coda-planner`\) \| 50\.00 \| 100\.00 \| 75\.00 \|/);
    assert.match(markdown, /## Pass@2 \(%\)\n\n\| Planner \| Algebra \(KAlgebra\) \| Documents \(TeXstudio\) \| Overall \|\n\| --- \| ---: \| ---: \| ---: \|\n\| base \(`coda-planner`\) \| 66\.67 \| 100\.00 \| 83\.33 \|/);
    assert.match(markdown, /- base, Algebra \(KAlgebra\): A-01 0\/2, C-01 1\/2, C-03 2\/2 \(run `n2-KAlgebra`\)/);
    assert.match(markdown, /## Not run here \(unsupported, not counted\)\n\n- TeXstudio\/A-01: needs ChimeraX/);
    assert.match(markdown, /## Since n1 \(2026-11-20T02:00:00\.000Z\)\n\n- base: Average@2 KAlgebra 0\.00, TeXstudio \+50\.00, overall \+25\.00; started passing: KAlgebra\/C-01; stopped passing: KAlgebra\/A-01/);
    const alone = renderReportMarkdown(buildEvaluationReport({ series: 's', run: 'r', k: 1, createdAt: 't', rows: [{ planner: 'p', model: 'm', runs: {}, records: [] }] }));
    assert.match(alone, /This is the first report of its series\./);
    assert.doesNotMatch(alone, /unsupported/);
    const partial = renderReportMarkdown(buildEvaluationReport({
      series: 's', run: 'r', k: 1, createdAt: 't',
      rows: [{ planner: 'a', model: 'm', runs: {}, records: runs('KAlgebra', 'A-01', 1, 1) }, { planner: 'b', model: 'm', runs: {}, records: runs('TeXstudio', 'D-01', 0, 1) }],
    }));
    assert.match(partial, /\| a \(`m`\) \| 100\.00 \| – \| 100\.00 \|/);
    assert.match(partial, /- b, Algebra \(KAlgebra\): none \(run `-`\)/);
    const noDelta = renderReportMarkdown(withDiff(report('n4', 't', runs('KAlgebra', 'A-01', 1), 'other'), first, 'k'));
    assert.match(noDelta, /- other: Average@2 not in the previous report; started passing: none; stopped passing: none/);
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
