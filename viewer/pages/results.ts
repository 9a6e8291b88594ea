import { columnOrder, columnTitle, formatDifference, formatPoints } from '../../core/report';
import type { ReportSummary } from '../../activities/reports/activities';
import { html, type Html } from '../html';
import { paths, reportPath } from '../urls';
import { link, table } from './parts';
import { APPS } from '../../apps/index';

/**
 * What workflows return, as people read it: a report summary as its table (Average@k with its
 * interval per software and overall, the difference with the base) with a link to its page and
 * chart; an SFT or GRPO dataset as its counts with a link to its rows.
 */

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Whether `value` has the shape of a report summary (workflows/evaluation/evaluation.ts EvaluationResult). */
export function isReportSummary(value: unknown): value is ReportSummary {
  return isRecord(value) && typeof value.key === 'string' && typeof value.markdownKey === 'string' && Array.isArray(value.rows);
}

/** An Average@k cell in percent: `62.50 [40.0, 85.0]`; – where the row did not run the column. */
function averageCell(row: ReportSummary['rows'][number], column: string): string {
  const value = row.averageAtK[column];
  if (value === undefined) return '–';
  const interval = row.averageInterval?.[column];
  return `${value.toFixed(2)}${interval === undefined ? '' : ` [${formatPoints(interval.lower)}, ${formatPoints(interval.upper)}]`}`;
}

/** The difference with the base in points, marked when within noise: `+15.0 [4.2, 25.1], p 0.004`. */
function vsBaseCell(row: ReportSummary['rows'][number]): Html | string {
  const c = row.vsBase?.overall;
  if (c === undefined) return row.planner === 'base' ? '(the base)' : '–';
  return html`<span class="${c.withinNoise ? 'muted within-noise' : 'outside-noise'}">${formatDifference(c)}, p ${c.pValue < 0.001 ? '< 0.001' : c.pValue.toFixed(3)}</span>`;
}

/** A report summary as its table, and the link to the report's page (its chart, every table, the tasks). */
export function reportSummaryTable(summary: ReportSummary, id = 'result-report'): Html {
  const columns = columnOrder(APPS, summary.rows.flatMap((row) => Object.keys(row.averageAtK).filter((c) => c !== 'overall')));
  const page = reportPath(summary.key);
  return html`${table(
    ['planner', ...columns.map((c) => `${columnTitle(APPS, c)} Average@k (%)`), 'Overall Average@k (%)', 'Overall Pass@k (%)', 'vs base (Overall, points)'],
    summary.rows.map((row) => [row.planner, ...columns.map((c) => averageCell(row, c)), averageCell(row, 'overall'), row.passAtK.overall?.toFixed(2) ?? '–', vsBaseCell(row)]),
    { id },
  )}
<p class="links">${page === undefined ? html`the report: ${link(paths.object(summary.key), summary.key)}` : link(page, 'the report’s page: its chart, its tables and its tasks')} · ${link(paths.object(summary.markdownKey), 'as Markdown')}</p>`;
}

/** What a training workflow keeps of its dataset (workflows/training/progress.ts GeneralizationResult.dataset). */
export interface DatasetSummary {
  readonly key: string;
  readonly rows: number;
  readonly trajectories: number;
  readonly bySoftware: Readonly<Record<string, { readonly trajectories: number; readonly rows: number }>>;
}

export function isDatasetSummary(value: unknown): value is DatasetSummary {
  return isRecord(value) && typeof value.key === 'string' && typeof value.rows === 'number' && typeof value.trajectories === 'number' && isRecord(value.bySoftware);
}

/** A dataset as its counts, per software, with a link to its rows (`rowsKey`, the manifest's dataKey) and to its manifest. */
export function datasetCounts(dataset: DatasetSummary, kind: string, rowsKey: string | undefined, id = 'dataset'): Html {
  const software = columnOrder(APPS, Object.keys(dataset.bySoftware));
  return html`<p>${dataset.rows} ${kind} rows from ${dataset.trajectories} judged trajectories: ${rowsKey === undefined ? '' : html`${link(paths.object(rowsKey), 'its rows')} · `}${link(paths.object(dataset.key), 'its manifest')}</p>
${table(
  ['software', 'trajectories', 'rows'],
  software.map((s) => [columnTitle(APPS, s), dataset.bySoftware[s]!.trajectories, dataset.bySoftware[s]!.rows]),
  { id },
)}`;
}
