import { reportKeyBase, reportSeriesPrefix, stampOf } from '../../core/keys';
import { percent } from '../../core/metrics';
import { buildEvaluationReport, renderReportMarkdown, withDiff, type EvaluationReport, type UnsupportedTask } from '../../core/report';
import { runRecords } from '../storage/trajectory';
import type { ObjectStore } from '../storage/object-store';

export interface ReportRequest {
  readonly series: string;
  readonly run: string;
  readonly k: number;
  readonly createdAt: string;
  /** One row per planner checkpoint: its name, model and the run of each software's rollouts. */
  readonly rows: ReadonlyArray<{ readonly planner: string; readonly model: string; readonly runs: Readonly<Record<string, string>> }>;
  readonly unsupported?: readonly UnsupportedTask[];
}

/** What a workflow keeps of a report: where it is and its headline figures (percent). */
export interface ReportSummary {
  readonly key: string;
  readonly markdownKey: string;
  readonly previousKey?: string;
  readonly rows: ReadonlyArray<{ readonly planner: string; readonly averageAtK: Record<string, number>; readonly passAtK: Record<string, number> }>;
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
      let report = buildEvaluationReport({ ...request, rows });
      const base = reportKeyBase(prefix, request.series, stampOf(request.createdAt), request.run);
      const earlier = (await store.list(`${reportSeriesPrefix(prefix, request.series)}/`)).filter((k) => k.endsWith('.json') && k < `${base}.json`).sort();
      const previousKey = earlier.at(-1);
      if (previousKey !== undefined) report = withDiff(report, await store.getJson<EvaluationReport>(previousKey), previousKey);
      await store.putJson(`${base}.json`, report);
      await store.put(`${base}.md`, renderReportMarkdown(report), 'text/markdown; charset=utf-8');
      const figures = (pick: (s: { averageAtK: number; passAtK: number }) => number, row: EvaluationReport['rows'][number]) => ({
        ...Object.fromEntries(Object.entries(row.metrics.bySoftware).map(([software, s]) => [software, percent(pick(s))])),
        overall: percent(pick(row.metrics.overall)),
      });
      return {
        key: `${base}.json`,
        markdownKey: `${base}.md`,
        ...(previousKey === undefined ? {} : { previousKey }),
        rows: report.rows.map((row) => ({ planner: row.planner, averageAtK: figures((s) => s.averageAtK, row), passAtK: figures((s) => s.passAtK, row) })),
      };
    },
  };
}

export type ReportActivities = ReturnType<typeof createReportActivities>;
