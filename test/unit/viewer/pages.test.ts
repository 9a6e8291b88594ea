import assert from 'node:assert/strict';
import type { WorkflowExecutionDescription } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { runsQuery } from '../../../client/runs';
import type { JudgeMeasurement } from '../../../core/judge/measurement';
import type { RoundRecord } from '../../../workflows/training/contract';
import type { GuiAction } from '../../../core/actions';
import type { RunRecord } from '../../../core/metrics';
import { buildEvaluationReport, columnOrder, columnTitle, COMPARISON_NOTE } from '../../../core/report';
import { CHECKPOINT_SCHEMA, checkpointManifestSchema, type CheckpointManifest } from '../../../core/training';
import { ViewerError } from '../../../viewer/errors';
import { escapeHtml, html } from '../../../viewer/html';
import { actionOverlay } from '../../../viewer/overlay';
import { reportChart, seriesPage, seriesPlots } from '../../../viewer/pages/evaluation';
import type { ViewerSources } from '../../../viewer/sources';
import { anyValue, plannerColours } from '../../../viewer/pages/parts';
import { renderResult, type ResultExtras } from '../../../viewer/pages/run-result';
import { filtersOf } from '../../../viewer/pages/runs';
import { renderTraining, type TrainingView } from '../../../viewer/pages/training';
import { runPageUrl } from '../../../viewer/urls';
import { APPS } from '../../../apps/index';

/** The text of every table cell of a page that reads as JSON: what no page may show (a "raw" toggle may, outside cells). */
export function jsonCells(page: string): string[] {
  const text = (cell: string) => cell.replace(/<details[^>]*>.*?<\/details>/gs, '').replace(/<[^>]+>/g, '').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&').trim();
  return [...page.matchAll(/<td>(.*?)<\/td>/gs)].map((m) => text(m[1]!)).filter((t) => /^[[{]/.test(t) && (t.includes('"') || /^(\[\]|\{\})$/.test(t)));
}

/** Chart.js configurations a page hands to viewer.js, by canvas id. */
function chartsOf(page: string): Map<string, { type: string; data: { labels: string[]; datasets: Array<{ label: string; data: Array<number | null> }> } }> {
  const charts = new Map();
  for (const match of page.matchAll(/<canvas id="([^"]+)" data-chart="([^"]*)"/g)) {
    const text = match[2]!.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
    charts.set(match[1], JSON.parse(text));
  }
  return charts;
}

describe('viewer: pages without servers', () => {
  it('escapes every interpolated text and keeps nested HTML', () => {
    const reply = `Thought: click "OK" <b>now</b> & go`;
    const out = html`<p class="${'a"b'}">${reply}</p>${html`<i>${'<x>'}</i>`}${['<', '>']}${undefined}${false}${null}`.text;
    assert.equal(out, '<p class="a&quot;b">Thought: click &quot;OK&quot; &lt;b&gt;now&lt;/b&gt; &amp; go</p><i>&lt;x&gt;</i>&lt;&gt;');
    assert.equal(escapeHtml(`'`), '&#39;');
  });

  describe('action overlays, in the screen\u2019s pixel space', () => {
    const screen = { width: 1920, height: 1080 };
    const svg = (action: GuiAction | null, s: typeof screen | undefined = screen) => actionOverlay(action, s).text;

    it('rings a click, a double click, a right click and a hover at their point', () => {
      for (const type of ['click', 'double_click', 'right_click', 'hover'] as const) {
        const out = svg({ type, x: 640, y: 400 });
        assert.match(out, new RegExp(`data-action="${type}"`));
        assert.match(out, /viewBox="0 0 1920 1080"/);
        assert.match(out, /<circle cx="640" cy="400"/, type);
      }
      assert.equal((svg({ type: 'double_click', x: 1, y: 2 }).match(/fill="none"/g) ?? []).length, 2, 'two rings for a double click');
      assert.match(svg({ type: 'hover', x: 1, y: 2 }), /stroke-dasharray/);
    });

    it('draws a drag from its start to its end and a scroll as an arrow in its direction', () => {
      assert.match(svg({ type: 'drag', from: { x: 100, y: 200 }, to: { x: 900, y: 700 } }), /<line x1="100" y1="200" x2="900" y2="700"/);
      const down = svg({ type: 'scroll', x: 500, y: 500, direction: 'down', amount: 3 });
      const [, x2, y2] = /<line x1="500" y1="500" x2="([\d.]+)" y2="([\d.]+)"/.exec(down) ?? [];
      assert.equal(Number(x2), 500);
      assert.ok(Number(y2) > 500, 'down points down');
      assert.match(down, /scroll down ×3/);
      const left = svg({ type: 'scroll', x: 500, y: 500, direction: 'left', amount: 1 });
      assert.ok(Number(/x2="([\d.]+)"/.exec(left)?.[1]) < 500, 'left points left');
    });

    it('writes a scroll at the pointer that was never performed (so has no point) in a banner', () => {
      const unplaced = svg({ type: 'scroll', direction: 'down', amount: 5 });
      assert.match(unplaced, /scroll down 5 at the pointer<\/text>/);
      assert.doesNotMatch(unplaced, /<line/);
    });

    it('writes typed text, hotkeys and stops in a banner, as text', () => {
      assert.match(svg({ type: 'type', text: 'p := <2>', submit: true }), /type &quot;p := &lt;2&gt;&quot; then Enter<\/text>/);
      assert.match(svg({ type: 'hotkey', keys: ['ctrl', 'c'] }), /press ctrl\+c<\/text>/);
      assert.match(svg({ type: 'answer', text: '42' }), /answer &quot;42&quot;<\/text>/);
      assert.match(svg({ type: 'done' }), /data-action="done".*>done<\/text>/);
    });

    it('draws nothing for a malformed step, and takes the image\u2019s size when the manifest has no screen size', () => {
      assert.doesNotMatch(svg(null), /<(circle|line|text|rect)/);
      assert.match(svg(null), /data-action="none"/);
      assert.match(actionOverlay({ type: 'click', x: 1, y: 1 }, undefined).text, /data-viewbox="auto"/);
    });
  });

  it('filters runs by type (or any of the run types), software, stage, run, round and status; bad filters are named', () => {
    assert.equal(runsQuery({ types: ['evaluation', 'rolloutBatch'], run: 'r1', round: '2' }), 'WorkflowType IN ("evaluation", "rolloutBatch") AND CodaRun = "r1" AND CodaRound = 2');
    assert.equal(runsQuery({ type: 'rollout', types: ['evaluation'], status: 'running' }), 'WorkflowType = "rollout" AND ExecutionStatus = "Running"');
    assert.deepEqual(filtersOf({ run: ' r1 ', software: '', status: 'failed' }), { run: 'r1', status: 'failed' });
    assert.throws(() => filtersOf({ status: 'exploded' }), (err: ViewerError) => err.status === 400 && /status "exploded"/.test(err.title) && /running, completed/.test(err.message));
    assert.throws(() => filtersOf({ round: 'two' }), (err: ViewerError) => err.status === 400 && /round "two"/.test(err.title));
  });

  it('gives the URL of a run\u2019s page (what the demo prints last)', () => {
    assert.equal(runPageUrl({ viewer: { host: '127.0.0.1', port: 8300 } }, 'batch-demo-1-KAlgebra'), 'http://127.0.0.1:8300/runs/batch-demo-1-KAlgebra');
    assert.equal(runPageUrl({ viewer: { host: '0.0.0.0', port: 8300 } }, 'a b'), 'http://127.0.0.1:8300/runs/a%20b');
  });

  describe('the plots of an evaluation series', () => {
    type SeriesReport = Parameters<typeof seriesPlots>[0][number];
    const summary = (averageAtK: number) => ({ taskCount: 10, runs: 20, successes: averageAtK * 20, averageAtK, passAtK: Math.min(1, averageAtK + 0.1) });
    const row = (planner: string, averageAtK: number, interval?: { lower: number; upper: number }): SeriesReport['rows'][number] => ({
      planner,
      model: planner,
      runs: { KAlgebra: `${planner}-run` },
      metrics: { tasks: [], bySoftware: { KAlgebra: summary(averageAtK) }, overall: summary(averageAtK) },
      ...(interval === undefined ? {} : { averageInterval: { bySoftware: { KAlgebra: interval }, overall: interval } }),
    });
    const report = (run: string, rows: SeriesReport['rows']): SeriesReport => ({
      schema: rows.some((r) => r.averageInterval !== undefined) ? 'coda.evaluation-report/v2' : 'coda.evaluation-report/v1',
      series: 'specialization-s1',
      run,
      k: 2,
      createdAt: '2026-11-24T22:00:00Z',
      softwares: ['KAlgebra'],
      rows,
      unsupported: [],
    });

    type Dataset = { label: string; data: Array<number | null>; borderColor: string; backgroundColor: string; intervals?: Array<{ lower: number; upper: number } | null>; intervalColor?: string };
    type ChartConfig = { type: string; data: { labels: string[]; datasets: Dataset[] }; options: { scales: { y: { max?: number; title: { text: string } } } } };
    const configOf = (page: string, id: string) => chartsOf(page).get(id) as unknown as ChartConfig;
    /** A report of the paper's shape: several software, several planners, KAlgebra and Celestia missing for one. */
    const wide = (planners: readonly string[], withIntervals = true): SeriesReport => ({
      ...report('r1-eval', []),
      softwares: ['ChimeraX', 'KAlgebra', 'Celestia'],
      rows: planners.map((planner, p) => {
        const average = (s: number) => (p * 3 + s + 1) / 40;
        const softwares = p === 1 ? ['ChimeraX'] : ['ChimeraX', 'KAlgebra', 'Celestia'];
        const iv = (a: number) => ({ lower: a - 0.05, upper: a + 0.05 });
        return {
          planner,
          model: planner,
          runs: {},
          metrics: { tasks: [], bySoftware: Object.fromEntries(softwares.map((s, i) => [s, summary(average(i))])), overall: summary(average(3)) },
          ...(withIntervals ? { averageInterval: { bySoftware: Object.fromEntries(softwares.map((s, i) => [s, iv(average(i))])), overall: iv(average(3)) } } : {}),
        };
      }),
    });

    it('draws a report as grouped bars: a group per software in the table’s order, Overall last, a bar per planner with its 95% interval as a whisker', () => {
      const planners = ['base', 'specialist-ChimeraX', 'specialist-KAlgebra', 'generalist'];
      const config = configOf(reportChart(wide(planners)).text, 'report-chart');
      assert.equal(config.type, 'bar');
      assert.deepEqual(config.data.labels, [...columnOrder(APPS, ['ChimeraX', 'KAlgebra', 'Celestia']).map((s) => columnTitle(APPS, s)), 'Overall']);
      assert.equal(config.data.labels.at(-1), 'Overall');
      assert.deepEqual(config.data.datasets.map((d) => d.label), planners, 'one legend entry per planner');
      assert.equal(config.data.datasets.reduce((n, d) => n + d.data.length, 0), planners.length * 4, 'a bar place per planner and group');
      assert.equal(config.data.datasets.flatMap((d) => d.data).filter((v) => v === null).length, 2, 'no bar where a planner has no such software');
      const generalist = config.data.datasets[3]!;
      const order = columnOrder(APPS, ['ChimeraX', 'KAlgebra', 'Celestia']);
      assert.deepEqual(generalist.data, [...order.map((s) => (9 + ['ChimeraX', 'KAlgebra', 'Celestia'].indexOf(s) + 1) * 2.5), 32.5]);
      assert.deepEqual(generalist.intervals!.at(-1), { lower: 27.5, upper: 37.5 });
      assert.equal(config.data.datasets[1]!.intervals!.filter((w) => w === null).length, 2);
      assert.equal(config.options.scales.y.max, 100);
      assert.equal(config.options.scales.y.title.text, 'Average@2 (%)');
      assert.equal(new Set(config.data.datasets.map((d) => d.backgroundColor)).size, planners.length, 'distinct colours');
    });

    it('still draws a v1 report (no intervals) as bars, without whiskers', () => {
      const page = reportChart(wide(['base', 'other'], false)).text;
      const config = configOf(page, 'report-chart');
      assert.deepEqual(config.data.datasets.map((d) => d.label), ['base', 'other']);
      assert.ok(config.data.datasets.every((d) => d.intervals === undefined && d.data.length === 4));
      assert.match(page, /a v1 report: no intervals/);
    });

    it('gives up to ten planners ten distinct colours, the same planner the same colour in the report and the series', () => {
      const ten = Array.from({ length: 10 }, (_, i) => `planner-${i}`);
      const colours = plannerColours(ten);
      assert.equal(new Set(colours.values()).size, 10);
      assert.ok([...colours.values()].every((c) => /^#[0-9a-f]{6}$/.test(c)));
      const bars = configOf(reportChart(wide(ten), colours).text, 'report-chart');
      const lines = configOf(seriesPlots([wide(ten.slice(5)), wide(ten)], colours).text, 'average-chart');
      assert.equal(new Set(bars.data.datasets.map((d) => d.backgroundColor)).size, 10);
      for (const d of lines.data.datasets) assert.equal(d.borderColor, bars.data.datasets.find((b) => b.label === d.label)!.backgroundColor, d.label);
      assert.deepEqual(lines.data.datasets.map((d) => d.label), [...ten.slice(5), ...ten.slice(0, 5)], 'planners in the order first seen');
    });

    it('draws a series as a line per planner of its overall Average@k, with the 95% interval as whiskers, a gap where a report has none', () => {
      const reports = [
        report('r1-eval', [row('base', 0.5, { lower: 0.4, upper: 0.6 }), row('specialist-KAlgebra', 0.55, { lower: 0.45, upper: 0.65 })]),
        report('r2-eval', [row('base', 0.5), row('specialist-KAlgebra', 0.7)]),
        report('r3-eval', [row('base', 0.5, { lower: 0.4, upper: 0.6 }), row('specialist-KAlgebra', 0.8125, { lower: 0.7, upper: 0.9 })]),
        report('r4-eval', [row('base', 0.5, { lower: 0.4, upper: 0.6 })]),
      ];
      const page = seriesPlots(reports).text;
      const average = configOf(page, 'average-chart');
      assert.equal(average.type, 'line');
      assert.deepEqual(average.data.labels, ['r1-eval', 'r2-eval', 'r3-eval', 'r4-eval']);
      assert.deepEqual(average.data.datasets.map((d) => d.label), ['base', 'specialist-KAlgebra'], 'one line and one legend entry per planner');
      const specialist = average.data.datasets[1]!;
      assert.deepEqual(specialist.data, [55, 70, 81.25, null]);
      assert.deepEqual(specialist.intervals, [{ lower: 45, upper: 65 }, null, { lower: 70, upper: 90 }, null]);
      assert.equal(specialist.intervalColor, specialist.borderColor, 'whiskers in the line’s colour');
      assert.notEqual(average.data.datasets[0]!.borderColor, specialist.borderColor);
      const pass = configOf(page, 'pass-chart');
      assert.deepEqual(pass.data.datasets.map((d) => [d.label, d.data]), [['base', [60, 60, 60, 60]], ['specialist-KAlgebra', [65, 80, 91.25, null]]]);
      assert.ok(pass.data.datasets.every((d) => d.intervals === undefined), 'Pass@k has no interval');
    });

    it('draws no whiskers for a series of reports without intervals (v1)', () => {
      const config = configOf(seriesPlots([report('r1-eval', [row('base', 0.5)]), report('r2-eval', [row('base', 0.6)])]).text, 'average-chart');
      assert.deepEqual(config.data.datasets.map((d) => [d.label, d.data, d.intervals]), [['base', [50, 60], undefined]]);
    });
  });

  it('shows on an evaluation page the attempts whose app was not running at evaluation, and what a comparison\'s interval is', async () => {
    const records = (planner: string): RunRecord[] => ['A-08', 'D-03'].flatMap((taskId, t) => [0, 1].map((run) => ({ software: 'ChimeraX', taskId, run, success: planner === 'base' ? run === 0 : t === 0, ...(planner === 'base' && run === 1 && t === 1 ? { appNotRunning: true } : {}) })));
    const built = buildEvaluationReport(APPS, { series: 'nightly', run: 'r1', k: 2, createdAt: '2026-11-26T02:00:00.000Z', rows: ['base', 'other'].map((planner) => ({ planner, model: planner, runs: {}, records: records(planner) })), bootstrap: { seed: 1, resamples: 200 } });
    const key = 'coda/reports/nightly/20261126T020000Z-r1.json';
    const src = { prefix: 'coda', list: async () => [key], json: async () => JSON.parse(JSON.stringify(built)) as unknown, uri: (k: string) => `s3://bucket/${k}` } as unknown as ViewerSources;
    const page = (await seriesPage(src, 'nightly')).text;
    const table = /<table id="app-not-running"[^>]*>.*?<\/table>/s.exec(page)?.[0] ?? '';
    const rows = [...table.matchAll(/<tr><td>(.*?)<\/tr>/gs)].map((m) => m[1]!.replace(/<[^>]+>/g, '|'));
    assert.deepEqual(rows, ['base||1||ChimeraX/D-03/1|', 'other||0|||']);
    assert.ok(page.includes(`<p class="muted footnote" id="comparison-note">${escapeHtml(COMPARISON_NOTE)}</p>`));
  });

  describe('the training page of a specialization', () => {
    const checkpoint = (name: string, parent: string | undefined, metrics: Record<string, number>): CheckpointManifest =>
      checkpointManifestSchema.parse({
        schema: CHECKPOINT_SCHEMA,
        name,
        kind: 'grpo',
        createdAt: '2026-11-20T10:00:00.000Z',
        ...(parent === undefined ? {} : { parent: `coda/checkpoints/${parent}/manifest.json` }),
        base: { model: 'coda-planner', path: 'Qwen/Qwen2.5-VL-32B-Instruct' },
        dataset: `coda/datasets/${name}/manifest.json`,
        sources: [{ manifestKey: 'coda/runs/s1-r1-gen/KAlgebra/g-1/0/manifest.json', verdictKey: 'coda/runs/s1-r1-gen/KAlgebra/g-1/0/verdict.json', software: 'KAlgebra', steps: [1, 2] }],
        job: name,
        steps: 40,
        metrics,
        lora: true,
        filesPrefix: `coda/checkpoints/${name}/files`,
        double: true,
      });
    const round = (n: number, averageAtK: number): RoundRecord => ({ round: n, checkpoint: `s1-r${n}`, tasks: 12, rollouts: 24, judged: 24, positiveSteps: 10 + n, samples: 10 + n, sources: [`s1-r${n}-gen`], averageAtK, passAtK: averageAtK + 10, reportKey: `coda/reports/specialization-s1/2026112${n}T100000Z-s1-r${n}-eval.json` });
    const figures = (tp: number, fp: number, fn: number, tn: number) => ({
      trajectories: tp + fp + fn + tn,
      approved: tp + fp,
      passed: tp + fn,
      truePositives: tp,
      falsePositives: fp,
      falseNegatives: fn,
      trueNegatives: tn,
      precision: tp + fp === 0 ? null : tp / (tp + fp),
      recall: tp + fn === 0 ? null : tp / (tp + fn),
    });
    // Round 1 was recorded before the judge was measured; round 2 and the live round 3 carry it.
    const judged = (run: string, final: ReturnType<typeof figures>): JudgeMeasurement => ({
      run,
      floor: 0.6,
      final,
      votes: [
        { judge: 'judge-a', resolution: 'low', ...figures(3, 2, 0, 1) },
        { judge: 'judge-a', resolution: 'high', ...figures(0, 0, 1, 0) },
      ],
    });
    const withJudge: RoundRecord = { ...round(2, 30), judge: judged('s1-r1-eval', figures(3, 1, 1, 1)) };
    const r1 = checkpoint('s1-r1', undefined, { policy_loss: 0.5, reward: 0.25 });
    const r2 = checkpoint('s1-r2', 's1-r1', { policy_loss: 0.25, reward: 0.75 });
    const payload = (value: unknown) => defaultPayloadConverter.toPayload(value);
    const description = {
      type: 'specialization',
      status: { name: 'RUNNING' },
      startTime: new Date('2026-11-20T09:00:00Z'),
      raw: { pendingActivities: [{ activityType: { name: 'train' }, state: 2, attempt: 2, lastFailure: { message: 'gpu node lost' }, heartbeatDetails: { payloads: [payload({ step: 17, totalSteps: 40, metrics: { policy_loss: 0.31 } })] } }] },
    } as unknown as WorkflowExecutionDescription;
    const view: TrainingView = {
      state: { workflowId: 'specialization-KAlgebra-s1', description, summary: { lines: [], failures: [], children: [], counts: { events: 0, activities: 0, activitiesRetried: 0, activitiesFailed: 0, localActivities: 0, children: 0, childrenFailed: 0, timers: 0, signals: 0, continuedAsNew: true }, status: 'RUNNING' }, input: { software: 'KAlgebra', run: 's1' } },
      progress: { run: 's1', software: 'KAlgebra', round: 3, rounds: 3, stage: 'training', counts: { tasks: 12, rollouts: 24, judged: 24, positiveSteps: 9, samples: 9 }, history: [round(1, 20), withJudge], checkpoint: { name: 's1-r2', model: 's1-r2' }, judge: judged('s1-r2-eval', figures(0, 0, 2, 2)) },
      rounds: [round(1, 20), withJudge],
      checkpoints: new Map([
        ['s1-r1', { name: 's1-r1', key: 'coda/checkpoints/s1-r1/manifest.json', manifest: r1 }],
        ['s1-r2', { name: 's1-r2', key: 'coda/checkpoints/s1-r2/manifest.json', manifest: r2 }],
      ]),
      lineage: [
        { name: 's1-r2', key: 'coda/checkpoints/s1-r2/manifest.json', manifest: r2 },
        { name: 's1-r1', key: 'coda/checkpoints/s1-r1/manifest.json', manifest: r1 },
      ],
      trainer: { step: 17, totalSteps: 40, metrics: { policy_loss: 0.31 } },
    };
    const page = renderTraining(view).text;

    it('shows each round: rollouts, judged, positives, evaluation, report and the trainer figures of its checkpoint', () => {
      const rows = [...(/<table id="rounds"[^>]*>.*?<\/table>/s.exec(page)?.[0] ?? '').matchAll(/<tr><td>(\d+)<\/td>(.*?)<\/tr>/gs)].map((m) => m[0].replace(/<[^>]+>/g, '|').replace(/\|+/g, '|'));
      assert.equal(rows.length, 2);
      assert.match(rows[0]!, /\|1\|s1-r1\|12\|24\|24\|11\|11\|20\.00\|30\.00\|20261121T100000Z-s1-r1-eval\|policy_loss 0\.5000, reward 0\.2500\|/);
      assert.match(rows[1]!, /\|2\|s1-r2\|12\|24\|24\|12\|12\|30\.00\|40\.00\|/);
    });

    it('shows each round\u2019s Average@k interval, the base\u2019s Average@k and the paired difference, marked when within noise', () => {
      const compared = (r: RoundRecord, difference: number, withinNoise: boolean): RoundRecord => ({
        ...r,
        averageInterval: { lower: r.averageAtK - 8, upper: r.averageAtK + 8 },
        baseAverageAtK: 15,
        vsBase: { difference, lower: difference - 8, upper: difference + 8, pValue: withinNoise ? 0.4 : 0.01, withinNoise },
      });
      const rounds = [compared(round(1, 20), 5, true), compared(round(2, 30), 15, false)];
      const text = renderTraining({ ...view, rounds }).text;
      const rows = [...(/<table id="rounds"[^>]*>.*?<\/table>/s.exec(text)?.[0] ?? '').matchAll(/<tr><td>(\d+)<\/td>(.*?)<\/tr>/gs)].map((m) => m[0].replace(/<[^>]+>/g, '|').replace(/\|+/g, '|'));
      assert.match(rows[0]!, /\|20\.00 \[12\.0, 28\.0\]\|30\.00\|15\.00\|\+5\.0 \[\u22123\.0, 13\.0\] within noise\|/);
      assert.match(rows[1]!, /\|30\.00 \[22\.0, 38\.0\]\|40\.00\|15\.00\|\+15\.0 \[7\.0, 23\.0\]\|/);
      // What the interval is, under the table; a round recorded before it was the test's own shows without it.
      assert.ok(text.includes(`<p class="muted footnote" id="comparison-note">${escapeHtml(COMPARISON_NOTE)}</p>`));
      const older = renderTraining({ ...view, rounds: [{ ...compared(round(1, 20), 5, true), vsBase: { difference: 5, lower: 1, upper: 9, pValue: 0.06, withinNoise: true } }] }).text;
      assert.match(older, /\+5\.0 \(interval of an earlier method left out\) within noise/);
      const datasets = chartsOf(text).get('rounds-evaluation-chart')!.data.datasets;
      assert.deepEqual(datasets.map((d) => [d.label, d.data]), [
        ['Average@k (%)', [20, 30]],
        ['Pass@k (%)', [30, 40]],
        ['Average@k 95% interval, lower', [12, 22]],
        ['Average@k 95% interval, upper', [28, 38]],
        ['base Average@k (%)', [15, 15]],
      ]);
    });

    it('lists the rounds in flight when two overlap (maxStaleness 1), and nothing more for one', () => {
      const inFlight = (text: string) => /<dt>rounds in flight<\/dt><dd>(.*?)<\/dd>/.exec(text)?.[1];
      assert.equal(inFlight(page), undefined, 'no inFlight in the progress');
      const one = { ...view.progress!, inFlight: [{ round: 3, stage: 'training' }] };
      assert.equal(inFlight(renderTraining({ ...view, progress: one }).text), undefined, 'one round in flight: the stage says it');
      const two = { ...view.progress!, inFlight: [{ round: 3, stage: 'training' }, { round: 4, stage: 'rollouts' }] };
      assert.equal(inFlight(renderTraining({ ...view, progress: two }).text), 'round 3: training, round 4: rollouts');
    });

    it('plots the evaluation, the data and the trainer figures per round', () => {
      const charts = chartsOf(page);
      assert.deepEqual([...charts.keys()], ['rounds-evaluation-chart', 'rounds-data-chart', 'rounds-trainer-chart', 'judge-chart']);
      assert.deepEqual(charts.get('rounds-evaluation-chart')!.data.datasets.map((d) => d.data), [[20, 30], [30, 40]]);
      assert.deepEqual(charts.get('rounds-data-chart')!.data.datasets.find((d) => d.label === 'positive steps')!.data, [11, 12]);
      assert.deepEqual(
        charts.get('rounds-trainer-chart')!.data.datasets.map((d) => [d.label, d.data]),
        [['policy_loss', [0.5, 0.25]], ['reward', [0.25, 0.75]]],
      );
    });

    it('shows the judge on the real tasks per round (final verdict and each judge and resolution), the live round too, – where nothing divides', () => {
      const rows = [...(/<table id="judge-rounds"[^>]*>.*?<\/table>/s.exec(page)?.[0] ?? '').matchAll(/<tr><td>.*?<\/tr>/gs)].map((m) => m[0].replace(/<[^>]+>/g, '|').replace(/\|+/g, '|'));
      assert.deepEqual(rows, [
        '|2|final verdict|all|6|4|4|3 / 1 / 1 / 1|75.0|75.0|60.0|',
        '|2|judge-a|low|6|5|3|3 / 2 / 0 / 1|60.0|100.0|',
        '|2|judge-a|high|1|0|1|0 / 0 / 1 / 0|–|0.0|',
        '|3 (this round)|final verdict|all|4|0|2|0 / 0 / 2 / 2|–|0.0|60.0|',
        '|3 (this round)|judge-a|low|6|5|3|3 / 2 / 0 / 1|60.0|100.0|',
        '|3 (this round)|judge-a|high|1|0|1|0 / 0 / 1 / 0|–|0.0|',
      ]);
      const chart = chartsOf(page).get('judge-chart')!;
      assert.deepEqual(chart.data.labels, ['round 2', 'round 3 (this round)']);
      assert.deepEqual(chart.data.datasets.map((d) => [d.label, d.data]), [['precision (%)', [75, null]], ['recall (%)', [75, 0]], ['floor (%)', [60, 60]]]);
      assert.doesNotMatch(page, /judge-stopped/);
      const stopped = renderTraining({ ...view, progress: { ...view.progress, stage: 'judging', stopped: 'specialization s1 round 3 stopped before training: the judge’s precision is 0.250, below the floor of 0.6' } }).text;
      assert.match(stopped, /<p id="judge-stopped"><span class="badge badge-failed">stopped<\/span> specialization s1 round 3 stopped before training: the judge’s precision is 0\.250, below the floor of 0\.6<\/p>/);
    });

    it('shows the live stage, the trainer\u2019s last heartbeat, the retried train activity and the lineage newest first', () => {
      assert.match(page, /<dt>round<\/dt><dd>3 of 3<\/dd>/);
      assert.match(page, /badge-running">training</);
      assert.match(page, /<section id="trainer">.*<dt>step<\/dt><dd>17<\/dd>.*policy_loss/s);
      assert.match(page, /<table id="pending-activities"[^>]*>.*<td>train<\/td><td>started<\/td><td>2<\/td><td>gpu node lost<\/td>/s);
      const lineage = /<table id="lineage"[^>]*>.*?<\/table>/s.exec(page)?.[0] ?? '';
      assert.deepEqual([...lineage.matchAll(/href="\/checkpoints\/([^"]+)"/g)].map((m) => m[1]), ['s1-r2', 's1-r1']);
      assert.match(lineage, /base coda-planner/);
      assert.match(lineage, /LoRA adapter \(trainer double: unchanged planner\)/);
    });
  });

  describe('results as tables and links, never JSON in a cell', () => {
    const reportKey = 'coda/reports/generalization-demo-1/20261126T100000Z-demo-1-eval.json';
    const summary = {
      run: 'demo-1-eval',
      series: 'generalization-demo-1',
      key: reportKey,
      markdownKey: reportKey.replace(/json$/, 'md'),
      rows: [
        { planner: 'base', averageAtK: { KAlgebra: 50, TeXstudio: 75, overall: 62.5 }, passAtK: { KAlgebra: 50, TeXstudio: 75, overall: 62.5 }, averageInterval: { KAlgebra: { lower: 30, upper: 70 }, TeXstudio: { lower: 25, upper: 100 }, overall: { lower: 40, upper: 80 } } },
        {
          planner: 'specialist-KAlgebra',
          averageAtK: { KAlgebra: 70, overall: 70 },
          passAtK: { KAlgebra: 70, overall: 70 },
          averageInterval: { KAlgebra: { lower: 50, upper: 90 }, overall: { lower: 50, upper: 90 } },
          vsBase: { KAlgebra: { difference: 20, lower: 5, upper: 35, pValue: 0.01, withinNoise: false }, overall: { difference: 20, lower: 5, upper: 35, pValue: 0.01, withinNoise: false } },
        },
      ],
    };
    const manifest = checkpointManifestSchema.parse({
      schema: CHECKPOINT_SCHEMA,
      name: 'demo-1-generalist',
      kind: 'sft',
      createdAt: '2026-11-26T10:00:00.000Z',
      base: { model: 'coda-planner', path: 'Qwen/Qwen2.5-VL-32B-Instruct' },
      dataset: 'coda/datasets/demo-1-generalist/manifest.json',
      sources: [{ manifestKey: 'coda/runs/demo-1-KAlgebra/KAlgebra/g-1/0/manifest.json', verdictKey: 'coda/runs/demo-1-KAlgebra/KAlgebra/g-1/0/verdict.json', software: 'KAlgebra', steps: [1, 2] }],
      job: 'demo-1-generalist',
      steps: 6,
      metrics: { loss: 0.5 },
      lora: true,
      filesPrefix: 'coda/checkpoints/demo-1-generalist/files',
      double: true,
    });
    const extras: ResultExtras = {
      lineages: new Map([['demo-1-generalist', [{ name: 'demo-1-generalist', key: 'coda/checkpoints/demo-1-generalist/manifest.json', manifest }]]]),
      datasetRowsKey: 'coda/datasets/demo-1-generalist/data.json',
    };
    const generalization = {
      run: 'demo-1',
      generalist: { name: 'demo-1-generalist', model: 'demo-1-generalist', checkpointKey: 'coda/checkpoints/demo-1-generalist/manifest.json' },
      dataset: { key: 'coda/datasets/demo-1-generalist/manifest.json', rows: 14, trajectories: 4, bySoftware: { TeXstudio: { trajectories: 1, rows: 2 }, KAlgebra: { trajectories: 3, rows: 12 } } },
      report: summary,
    };
    const tableOf = (page: string, id: string) => [...(new RegExp(`<table id="${id}"[^>]*>.*?</table>`, 's').exec(page)?.[0] ?? '').matchAll(/<tr>(.*?)<\/tr>/gs)].map((r) => [...r[1]!.matchAll(/<t[dh]>(.*?)<\/t[dh]>/gs)].map((c) => c[1]!.replace(/<[^>]+>/g, '')));

    it('shows a generalization as the generalist\u2019s lineage, its dataset\u2019s counts with a link to its rows, and its report\u2019s table with a link to the chart', () => {
      const page = renderResult('generalization', generalization, extras).text;
      assert.deepEqual(jsonCells(page), []);
      assert.deepEqual(tableOf(page, 'generalist-lineage')[1]?.slice(0, 5), ['demo-1-generalist', 'sft', '2026-11-26 10:00:00', 'base coda-planner', '1 trajectories']);
      assert.match(page, /14 SFT rows from 4 judged trajectories: <a href="\/objects\/coda\/datasets\/demo-1-generalist\/data\.json">its rows<\/a>/);
      assert.deepEqual(tableOf(page, 'dataset').slice(1), [['Algebra (KAlgebra)', '3', '12'], ['Documents (TeXstudio)', '1', '2']]);
      const report = tableOf(page, 'result-report');
      assert.deepEqual(report[0], ['planner', 'Algebra (KAlgebra) Average@k (%)', 'Documents (TeXstudio) Average@k (%)', 'Overall Average@k (%)', 'Overall Pass@k (%)', 'vs base (Overall, points)']);
      assert.deepEqual(report.slice(1), [
        ['base', '50.00 [30.0, 70.0]', '75.00 [25.0, 100.0]', '62.50 [40.0, 80.0]', '62.50', '(the base)'],
        ['specialist-KAlgebra', '70.00 [50.0, 90.0]', '–', '70.00 [50.0, 90.0]', '70.00', '+20.0 [5.0, 35.0], p 0.010'],
      ]);
      assert.match(page, /<a href="\/evaluation\/generalization-demo-1\/20261126T100000Z-demo-1-eval">the report’s page: its chart/);
      // The JSON is still there, behind the raw toggle, outside every cell.
      assert.match(page, /<details class="raw"><summary>raw result \(JSON\)<\/summary><pre class="json">\{/);
    });

    it('shows an evaluation as its report\u2019s table, a specialization as its specialist and rounds, and anything else without JSON in a cell', () => {
      const evaluation = renderResult('evaluation', summary, { lineages: new Map() }).text;
      assert.deepEqual(jsonCells(evaluation), []);
      assert.equal(tableOf(evaluation, 'result-report').length, 3);
      const round: RoundRecord = { round: 1, checkpoint: 'demo-1-KAlgebra-r1', tasks: 2, rollouts: 2, judged: 2, positiveSteps: 3, samples: 3, sources: ['demo-1-KAlgebra-r1-gen'], averageAtK: 70, passAtK: 70, averageInterval: { lower: 50, upper: 90 }, reportKey: 'coda/reports/specialization-demo-1-kalgebra/20261126T090000Z-demo-1-KAlgebra-r1-eval.json' };
      const specialization = renderResult('specialization', { run: 'demo-1-KAlgebra', software: 'KAlgebra', rounds: 1, specialist: { name: 'demo-1-KAlgebra-r1', model: 'demo-1-KAlgebra-r1' }, history: [round] }, { lineages: new Map() }).text;
      assert.deepEqual(jsonCells(specialization), []);
      assert.deepEqual(tableOf(specialization, 'result-rounds')[1], ['1', 'demo-1-KAlgebra-r1', '70.00 [50.0, 90.0]', '', 'the report']);
      assert.match(specialization, /None trained: the planner is the base planner/);
      // An evaluation's result before this page knew it, through the generic view: records inline.
      const generic = anyValue({ rows: summary.rows }).text;
      assert.deepEqual(jsonCells(generic), []);
      assert.match(generic, /<td>KAlgebra 70, overall 70<\/td>/);
      assert.match(generic, /<td>KAlgebra \(difference 20, lower 5, upper 35, pValue 0\.01, withinNoise false\), overall \(/);
      assert.deepEqual(jsonCells('<td>{"a":1}</td><td>[]</td><td>[1, 2]</td><td>{ x }</td>'), ['{"a":1}', '[]'], 'the check finds JSON');
    });
  });
});
