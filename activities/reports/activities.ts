import { reportKeyBase, reportSeriesPrefix, stampOf } from '../../core/keys';
import { percent } from '../../core/metrics';
import { buildEvaluationReport, renderReportMarkdown, withDiff, type EvaluationReport, type ReportRow, type UnsupportedTask } from '../../core/report';
import type { Comparison, Interval } from '../../core/uncertainty';
import { runRecords } from '../storage/trajectory';
import type { ObjectStore } from '../storage/object-store';
import { APPS } from '../../apps/index';

export interface ReportRequest {
  readonly series: string;
  readonly run: string;
  readonly k: number;
  readonly createdAt: string;
  /** One row per planner checkpoint: its name, model and the run of each software's rollouts. */
  readonly rows: ReadonlyArray<{ readonly planner: string; readonly model: string; readonly runs: Readonly<Record<string, string>> }>;
  readonly unsupported?: readonly UnsupportedTask[];
}

/** A report's interval in percent. */
export interface PercentInterval {
  readonly lower: number;
  readonly upper: number;
}

/** A row minus the base in percentage points (core/uncertainty.ts Comparison). */
export interface PercentComparison {
  readonly difference: number;
  readonly lower: number;
  readonly upper: number;
  readonly pValue: number;
  readonly withinNoise: boolean;
}

/** One row's headline figures, per software and `overall`. */
export interface RowSummary {
  readonly planner: string;
  readonly averageAtK: Record<string, number>;
  readonly passAtK: Record<string, number>;
  /** Average@k's 95% interval (absent only for a v1 report). */
  readonly averageInterval?: Record<string, PercentInterval>;
  /** Against the report's `base` row; absent on the base row and when there is none. */
  readonly vsBase?: Record<string, PercentComparison>;
  /** Attempts not solved because their app was not running at evaluation, per software and `overall`. */
  readonly appNotRunning: Record<string, number>;
}

/** What a workflow keeps of a report: where it is and its headline figures (percent). */
export interface ReportSummary {
  readonly key: string;
  readonly markdownKey: string;
  readonly previousKey?: string;
  readonly rows: readonly RowSummary[];
}

const percentInterval = (i: Interval): PercentInterval => ({ lower: percent(i.lower), upper: percent(i.upper) });
const percentComparison = (c: Comparison): PercentComparison => ({ difference: percent(c.difference), ...percentInterval(c.interval), pValue: c.pValue, withinNoise: c.withinNoise });

/** `pick` of each software and of `overall`. */
const perColumn = <T, U>(bySoftware: Readonly<Record<string, T>>, overall: T, pick: (value: T) => U): Record<string, U> => ({
  ...Object.fromEntries(Object.entries(bySoftware).map(([software, value]) => [software, pick(value)])),
  overall: pick(overall),
});

/** A report row as percent figures for workflows. */
export function rowSummary(row: ReportRow): RowSummary {
  const m = row.metrics;
  return {
    planner: row.planner,
    averageAtK: perColumn(m.bySoftware, m.overall, (s) => percent(s.averageAtK)),
    passAtK: perColumn(m.bySoftware, m.overall, (s) => percent(s.passAtK)),
    ...(row.averageInterval === undefined ? {} : { averageInterval: perColumn(row.averageInterval.bySoftware, row.averageInterval.overall, percentInterval) }),
    ...(row.vsBase === undefined ? {} : { vsBase: perColumn(row.vsBase.bySoftware, row.vsBase.overall, percentComparison) }),
    appNotRunning: perColumn(
      Object.fromEntries(Object.keys(m.bySoftware).map((s) => [s, (row.appNotRunning ?? []).filter((a) => a.startsWith(`${s}/`)).length])),
      (row.appNotRunning ?? []).length,
      (n) => n,
    ),
  };
}

/**
 * Report activities (orchestrator queue): an evaluation report from the manifests of its runs, in
 * JSON and Markdown under reports/{series}/, compared with the series' previous report (the
 * latest key before it: keys start with the report's UTC time).
 */
export function createReportActivities(deps: { store: ObjectStore; prefix: string }) {
  const { store, prefix } = deps;
  return {
    async writeEvaluationReport(request: ReportRequest): Promise<ReportSummary> {
      const rows = await Promise.all(
        request.rows.map(async (row) => ({
          ...row,
          records: (await Promise.all(Object.entries(row.runs).map(([software, run]) => runRecords(store, prefix, run, software)))).flat(),
        })),
      );
      let report = buildEvaluationReport(APPS, { ...request, rows });
      const base = reportKeyBase(prefix, request.series, stampOf(request.createdAt), request.run);
      const earlier = (await store.list(`${reportSeriesPrefix(prefix, request.series)}/`)).filter((k) => k.endsWith('.json') && k < `${base}.json`).sort();
      const previousKey = earlier.at(-1);
      if (previousKey !== undefined) report = withDiff(report, await store.getJson<EvaluationReport>(previousKey), previousKey);
      await store.putJson(`${base}.json`, report);
      await store.put(`${base}.md`, renderReportMarkdown(APPS, report), 'text/markdown; charset=utf-8');
      return {
        key: `${base}.json`,
        markdownKey: `${base}.md`,
        ...(previousKey === undefined ? {} : { previousKey }),
        rows: report.rows.map(rowSummary),
      };
    },
  };
}

export type ReportActivities = ReturnType<typeof createReportActivities>;
