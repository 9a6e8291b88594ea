import { z } from 'zod';
import { KEY_SEGMENT, reportSeriesPrefix } from '../../core/keys';
import { percent } from '../../core/metrics';
import { APP_NOT_RUNNING } from '../../core/evaluation';
import { columnOrder, columnTitle, COMPARISON_NOTE, formatComparison, formatInterval, noiseSummary, REPORT_SCHEMAS } from '../../core/report';
import { notFound, ViewerError } from '../errors';
import { html, type Html } from '../html';
import { check, type ViewerSources } from '../sources';
import { paths } from '../urls';
import { barChart, chart, keyValues, lineChart, link, plannerColours, table, utc, type Whisker } from './parts';
import { APPS } from '../../apps/index';

/**
 * Evaluation reports (reports/{series}/{stamp}-{run}.json, core/report.ts): the series there are;
 * for one series, each planner's overall Average@k and Pass@k across its reports as lines, one
 * report as grouped bars (the paper's table 1 read at a glance: a group per software, Overall last,
 * a bar per planner with its 95% interval) and as tables — Average@k with its interval and every
 * row against the base row (v2 and later; v1 ones show without), with a footnote saying what the
 * comparison's interval is, and the attempts whose app was not running at evaluation (v3) — and its
 * per-task difference to the report before it. A planner has one colour on the whole page.
 */

const summary = z.object({ taskCount: z.number(), runs: z.number(), successes: z.number(), averageAtK: z.number(), passAtK: z.number() });
const task = z.object({ software: z.string(), taskId: z.string(), runs: z.number(), successes: z.number() });
const interval = z.object({ lower: z.number(), upper: z.number() });
const comparison = z.object({ difference: z.number(), interval, pValue: z.number(), tasks: z.number(), withinNoise: z.boolean() });
/** What the page reads of a report: enough to say which field is damaged. */
const reportSchema = z.object({
  schema: z.enum(REPORT_SCHEMAS),
  series: z.string(),
  run: z.string(),
  k: z.number().int().min(1),
  createdAt: z.string(),
  softwares: z.array(z.string()),
  rows: z.array(
    z.object({
      planner: z.string(),
      model: z.string(),
      runs: z.record(z.string(), z.string()),
      metrics: z.object({ tasks: z.array(task), bySoftware: z.record(z.string(), summary), overall: summary }),
      averageInterval: z.object({ bySoftware: z.record(z.string(), interval), overall: interval }).optional(),
      vsBase: z.object({ bySoftware: z.record(z.string(), comparison), overall: comparison }).optional(),
      appNotRunning: z.array(z.string()).optional(),
    }),
  ),
  unsupported: z.array(z.object({ software: z.string(), taskId: z.string(), reason: z.string() })),
  previous: z.object({ key: z.string(), run: z.string(), createdAt: z.string() }).optional(),
  diff: z.array(z.object({ planner: z.string(), started: z.array(z.string()), stopped: z.array(z.string()), averageDelta: z.record(z.string(), z.number()) })).optional(),
  uncertainty: z.object({ confidence: z.number(), seed: z.number(), resamples: z.number(), base: z.string().optional(), method: z.string() }).optional(),
});
type Report = z.output<typeof reportSchema>;
type Row = Report['rows'][number];

/** Reports plotted per series: the latest ones. */
const PLOTTED = 60;

const reportsRoot = (prefix: string): string => `${prefix === '' ? '' : `${prefix}/`}reports/`;

export async function seriesListPage(src: ViewerSources): Promise<Html> {
  const keys = (await src.list(reportsRoot(src.prefix))).filter((k) => k.endsWith('.json'));
  const bySeries = new Map<string, string[]>();
  for (const key of keys) {
    const [series] = key.slice(reportsRoot(src.prefix).length).split('/');
    if (series !== undefined) bySeries.set(series, [...(bySeries.get(series) ?? []), key]);
  }
  return html`<h1>Evaluation</h1>
${
  bySeries.size === 0
    ? html`<p class="empty">No evaluation report yet (<code>coda start evaluation</code>; the nightly schedule writes the series <code>nightly</code>).</p>`
    : table(
        ['series', 'reports', 'latest'],
        [...bySeries].sort().map(([series, list]) => {
          const latest = list.sort().at(-1)!;
          return [link(paths.evaluation(series), series), list.length, link(paths.evaluation(series, idOf(latest)), idOf(latest))];
        }),
        { id: 'series' },
      )
}`;
}

const idOf = (key: string): string => key.slice(key.lastIndexOf('/') + 1).replace(/\.json$/, '');
const pct = (fraction: number | undefined): string => (fraction === undefined ? '–' : (fraction * 100).toFixed(2));

/** One series: plots across its reports, then `reportId` (default: the latest) in full. */
export async function seriesPage(src: ViewerSources, series: string, reportId?: string): Promise<Html> {
  if (!KEY_SEGMENT.test(series)) throw notFound(`report series ${series}`, 'a series name is letters, digits, . _ -');
  const keys = (await src.list(`${reportSeriesPrefix(src.prefix, series)}/`)).filter((k) => k.endsWith('.json')).sort();
  if (keys.length === 0) throw notFound(`report series ${series}`, `there is no report under ${src.uri(`${reportSeriesPrefix(src.prefix, series)}/`)}`);
  const selectedKey = reportId === undefined ? keys.at(-1)! : keys.find((k) => idOf(k) === reportId);
  if (selectedKey === undefined) throw notFound(`report ${reportId} of series ${series}`, `the series has ${keys.length} reports, ${keys.slice(-3).map(idOf).join(', ')} the latest; there is no ${src.uri(`${reportSeriesPrefix(src.prefix, series)}/${reportId}.json`)}`);
  const report = await readReport(src, selectedKey);
  const plotted = await Promise.all(
    keys.slice(-PLOTTED).map(async (key) => {
      try {
        return { key, report: await readReport(src, key) };
      } catch (err) {
        if (err instanceof ViewerError && err.status === 422) return { key, damage: err };
        throw err;
      }
    }),
  );
  const readable = plotted.filter((p): p is { key: string; report: Report } => p.report !== undefined);
  const previous = report.previous === undefined ? undefined : await readReport(src, report.previous.key).catch(() => undefined);
  const colours = plannerColours([...readable.map((p) => p.report), report].flatMap((r) => r.rows.map((row) => row.planner)));
  return html`<h1>Evaluation series ${series}</h1>
${seriesPlots(readable.map((p) => p.report), colours)}
${plotted.filter((p) => p.report === undefined).map((p) => html`<p class="error">Damaged report ${link(paths.object(p.key), idOf(p.key))} left out of the plots: ${(p as { damage: ViewerError }).damage.details.join('; ')}</p>`)}
<section id="report"><h2>Report ${idOf(selectedKey)}</h2>
${keyValues([
  ['run', report.run],
  ['created (UTC)', utc(report.createdAt)],
  ['k', `${report.k} attempts per task`],
  ['compared with', report.previous === undefined ? 'nothing (the first report of its series)' : link(paths.evaluation(series, idOf(report.previous.key)), idOf(report.previous.key))],
  ['files', html`${link(paths.object(selectedKey), 'json')} · ${link(paths.object(selectedKey.replace(/\.json$/, '.md')), 'markdown')}`],
])}
<div class="charts wide">${reportChart(report, colours)}</div>
${averageTable(report)}
${comparisonTable(report)}
${uncertaintyNote(report)}
${metricTable(report, 'Pass', (s) => s.passAtK, 'pass-table')}
${appNotRunningSection(report)}
${diffSection(report, previous)}
${report.unsupported.length === 0 ? '' : html`<h3>Not run here (not counted)</h3><ul>${report.unsupported.map((u) => html`<li>${u.software}/${u.taskId}: ${u.reason}</li>`)}</ul>`}
</section>
<section><h2>Every report of the series</h2><ul class="reports">${[...keys].reverse().map((k) => html`<li>${link(paths.evaluation(series, idOf(k)), idOf(k))}</li>`)}</ul></section>`;
}

async function readReport(src: ViewerSources, key: string): Promise<Report> {
  return check(reportSchema, await src.json(key, `report ${idOf(key)}`), `report ${idOf(key)}`, src.uri(key));
}

function metricTable(report: Report, title: string, pick: (s: z.output<typeof summary>) => number, id: string): Html {
  return html`<h3>${title}@${report.k} (%)</h3>${table(
    ['planner', ...columnOrder(APPS, report.softwares).map((s) => columnTitle(APPS, s)), 'Overall'],
    report.rows.map((row) => [`${row.planner} (${row.model})`, ...columnOrder(APPS, report.softwares).map((s) => pct(row.metrics.bySoftware[s] === undefined ? undefined : pick(row.metrics.bySoftware[s]!))), pct(pick(row.metrics.overall))]),
    { id },
  )}`;
}

/** Average@k per planner and column with its interval, and the overall difference with the base when the report has one. */
function averageTable(report: Report): Html {
  const columns = columnOrder(APPS, report.softwares);
  const compared = report.rows.some((row) => row.vsBase !== undefined);
  const withInterval = (s: z.output<typeof summary> | undefined, i: z.output<typeof interval> | undefined): string => `${pct(s?.averageAtK)}${s === undefined || i === undefined ? '' : ` ${formatInterval(i)}`}`;
  return html`<h3>Average@${report.k} (%)${report.uncertainty === undefined ? '' : html` <span class="muted">with its ${report.uncertainty.confidence * 100}% interval</span>`}</h3>${table(
    ['planner', ...columns.map((s) => columnTitle(APPS, s)), 'Overall', ...(compared ? ['vs base (Overall, points)'] : [])],
    report.rows.map((row) => [
      `${row.planner} (${row.model})`,
      ...columns.map((s) => withInterval(row.metrics.bySoftware[s], row.averageInterval?.bySoftware[s])),
      withInterval(row.metrics.overall, row.averageInterval?.overall),
      ...(compared ? [row.vsBase === undefined ? (row.planner === report.uncertainty?.base ? '(the base)' : '–') : noiseCell(row.vsBase.overall)] : []),
    ]),
    { id: 'average-table' },
  )}`;
}

/** A difference with the base, marked when it is within noise. */
const noiseCell = (c: z.output<typeof comparison>): Html => html`<span class="${c.withinNoise ? 'muted within-noise' : 'outside-noise'}">${formatComparison(c)}</span>`;

/** Each compared row minus the base per software and overall (points). */
function comparisonTable(report: Report): Html | string {
  const rows = report.rows.filter((row) => row.vsBase !== undefined);
  if (rows.length === 0) return '';
  const columns = columnOrder(APPS, report.softwares);
  return html`<h3>Average@${report.k} minus ${report.uncertainty?.base ?? 'base'} (percentage points)</h3>${table(
    ['planner', ...columns.map((s) => columnTitle(APPS, s)), 'Overall'],
    rows.map((row) => [row.planner, ...columns.map((s) => (row.vsBase!.bySoftware[s] === undefined ? '–' : noiseCell(row.vsBase!.bySoftware[s]!))), noiseCell(row.vsBase!.overall)]),
    { id: 'base-comparison' },
  )}`;
}

/** Which differences are within noise, and how the intervals were made. */
function uncertaintyNote(report: Report): Html {
  const u = report.uncertainty;
  if (u === undefined) return html`<p class="muted">This report (schema v1) has no intervals.</p>`;
  const noise = noiseSummary(APPS, report);
  return html`${noise === undefined ? '' : html`<p id="noise">${noise}</p>`}<p class="muted">${u.confidence * 100}% intervals, bootstrap with seed ${u.seed} and ${u.resamples} resamples (as many sign assignments for the test). ${u.method}.</p>${report.rows.some((row) => row.vsBase !== undefined) ? html`<p class="muted footnote" id="comparison-note">${COMPARISON_NOTE}</p>` : ''}`;
}

const percentOrGap = (fraction: number | undefined): number | null => (fraction === undefined ? null : percent(fraction));
const whisker = (i: z.output<typeof interval> | undefined): Whisker | null => (i === undefined ? null : { lower: percent(i.lower), upper: percent(i.upper) });

/**
 * One report as grouped bars: a group per software in the report's column order, Overall last; in
 * each, a bar per planner (its Average@k) with its 95% interval as a whisker where the report has
 * intervals (v2 and later). One legend entry per planner, in its page colour.
 */
export function reportChart(report: Report, colours: ReadonlyMap<string, string> = plannerColours(report.rows.map((r) => r.planner))): Html {
  const columns = columnOrder(APPS, report.softwares);
  const groups = [...columns.map((s) => columnTitle(APPS, s)), 'Overall'];
  const series = report.rows.map((row) => ({
    label: row.planner,
    colour: colours.get(row.planner),
    data: [...columns.map((s) => percentOrGap(row.metrics.bySoftware[s]?.averageAtK)), percentOrGap(row.metrics.overall.averageAtK)],
    intervals: [...columns.map((s) => whisker(row.averageInterval?.bySoftware[s])), whisker(row.averageInterval?.overall)],
  }));
  const withIntervals = report.rows.some((row) => row.averageInterval !== undefined);
  return chart(
    'report-chart',
    barChart(groups, series, `Average@${report.k} (%)`),
    `Average@${report.k} per software and overall, a bar per planner${withIntervals ? ` with its ${(report.uncertainty?.confidence ?? 0.95) * 100}% interval` : ' (a v1 report: no intervals)'}`,
  );
}

/**
 * The series over its reports, oldest first: a line per planner of its overall Average@k with its
 * 95% interval as whiskers (from the reports that have one), and of its overall Pass@k. A
 * specialization's series is its learning curve: one report per round.
 */
export function seriesPlots(reports: readonly Report[], colours: ReadonlyMap<string, string> = plannerColours(reports.flatMap((r) => r.rows.map((row) => row.planner)))): Html {
  const labels = reports.map((r) => r.run);
  const planners = [...new Set(reports.flatMap((r) => r.rows.map((row) => row.planner)))];
  const rowOf = (r: Report, planner: string): Row | undefined => r.rows.find((x) => x.planner === planner);
  const lines = (pick: (s: z.output<typeof summary>) => number, withIntervals: boolean) =>
    planners.map((planner) => ({
      label: planner,
      colour: colours.get(planner),
      data: reports.map((r) => {
        const overall = rowOf(r, planner)?.metrics.overall;
        return overall === undefined ? null : percent(pick(overall));
      }),
      ...(withIntervals ? { intervals: reports.map((r) => whisker(rowOf(r, planner)?.averageInterval?.overall)) } : {}),
    }));
  const withIntervals = reports.some((r) => r.rows.some((row) => row.averageInterval !== undefined));
  return html`<div class="charts">${chart('average-chart', lineChart(labels, lines((s) => s.averageAtK, true), 'Average@k (%)', 'report (run)'), `Overall Average@k per planner${withIntervals ? ' with its 95% interval' : ''}, ${reports.length} reports`)}${chart(
    'pass-chart',
    lineChart(labels, lines((s) => s.passAtK, false), 'Pass@k (%)', 'report (run)'),
    `Overall Pass@k per planner, ${reports.length} reports`,
  )}</div>`;
}

/** The attempts whose app was not running at evaluation, with their count per planner (v3 reports; older ones did not record them). */
function appNotRunningSection(report: Report): Html {
  const title = html`<h3>${APP_NOT_RUNNING[0]!.toUpperCase()}${APP_NOT_RUNNING.slice(1)}</h3>`;
  if (report.rows.every((row) => row.appNotRunning === undefined)) return html`${title}<p class="muted">Not recorded in this report (${report.schema}).</p>`;
  return html`${title}<p class="muted">Counted as not solved, reward 0, never a pass.</p>${table(
    ['planner', 'attempts', 'which'],
    report.rows.map((row) => [row.planner, (row.appNotRunning ?? []).length, (row.appNotRunning ?? []).join(', ')]),
    { id: 'app-not-running' },
  )}`;
}

/** Each task of each planner now and in the previous report: successes of runs, and what changed. */
function diffSection(report: Report, previous: Report | undefined): Html {
  if (report.previous === undefined) return html`<h3>Since the previous report</h3><p class="muted">This is the first report of its series.</p>`;
  const rows = report.rows.flatMap((row: Row) => {
    const before = previous?.rows.find((r) => r.planner === row.planner);
    return row.metrics.tasks.map((t) => {
      const old = before?.metrics.tasks.find((o) => o.software === t.software && o.taskId === t.taskId);
      const change = old === undefined ? 'new' : old.successes === 0 && t.successes > 0 ? 'started passing' : old.successes > 0 && t.successes === 0 ? 'stopped passing' : '';
      return [row.planner, `${t.software}/${t.taskId}`, old === undefined ? '–' : `${old.successes}/${old.runs}`, `${t.successes}/${t.runs}`, change];
    });
  });
  return html`<h3>Since ${report.previous.run} <span class="muted">${utc(report.previous.createdAt)}</span></h3>
${(report.diff ?? []).map(
  (d) =>
    html`<p>${d.planner}: Average@${report.k} ${Object.entries(d.averageDelta).map(([s, v]) => `${s} ${v > 0 ? '+' : ''}${v.toFixed(2)}`).join(', ') || 'not in the previous report'}; started passing: ${d.started.join(', ') || 'none'}; stopped passing: ${d.stopped.join(', ') || 'none'}</p>`,
)}
${previous === undefined ? html`<p class="error">The previous report ${report.previous.key} cannot be read; tasks are compared with nothing.</p>` : ''}
${table(['planner', 'task', 'before', 'now', 'change'], rows, { id: 'task-diff' })}`;
}
