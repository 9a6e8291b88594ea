import { APPS, appColumn, appOf } from '../apps/index';
import { percent, summarizeRuns, type MetricsReport, type RunRecord, type Summary } from './metrics';

/**
 * Evaluation reports (REFERENCE.md §1, the paper's table 1): one row per planner checkpoint, one
 * column per software named by its ScienceBoard domain ("GIS (GRASS GIS)"), in the order of the
 * app registry (apps/index.ts: the paper's order), Overall last; Average@k and Pass@k; and what changed since the previous
 * report of the same series (which tasks started or stopped passing, i.e. were solved at least
 * once in k attempts). Tasks the deployment cannot run are listed apart, never counted as failures.
 */

export const REPORT_SCHEMA = 'coda.evaluation-report/v1';

export interface UnsupportedTask {
  readonly software: string;
  readonly taskId: string;
  readonly reason: string;
}

export interface ReportRow {
  /** The checkpoint's name in the report, e.g. `base`, `specialist-KAlgebra`, `generalist`. */
  readonly planner: string;
  /** The model name the planner endpoint served it under. */
  readonly model: string;
  /** The run id of each software's rollouts (trajectories are under runs/{run}/{software}/). */
  readonly runs: Readonly<Record<string, string>>;
  readonly metrics: MetricsReport;
}

export interface RowDiff {
  readonly planner: string;
  /** `software/task` ids solved now and not before, and the other way round. */
  readonly started: string[];
  readonly stopped: string[];
  /** Average@k now minus before, per software and `overall`, in percentage points. */
  readonly averageDelta: Readonly<Record<string, number>>;
}

export interface EvaluationReport {
  readonly schema: typeof REPORT_SCHEMA;
  readonly series: string;
  readonly run: string;
  readonly k: number;
  readonly createdAt: string;
  /** Column order: the registry's apps first, in its order, then any other software by name. */
  readonly softwares: string[];
  readonly rows: ReportRow[];
  readonly unsupported: UnsupportedTask[];
  /** The report this one is compared with, when the series has an earlier one. */
  readonly previous?: { readonly key: string; readonly run: string; readonly createdAt: string };
  readonly diff?: RowDiff[];
}

export interface RowInput {
  readonly planner: string;
  readonly model: string;
  readonly runs: Readonly<Record<string, string>>;
  readonly records: readonly RunRecord[];
}

/** A report from the success records of every row (k attempts per task); throws when a task has fewer. */
export function buildEvaluationReport(input: {
  series: string;
  run: string;
  k: number;
  createdAt: string;
  rows: readonly RowInput[];
  unsupported?: readonly UnsupportedTask[];
}): EvaluationReport {
  const rows = input.rows.map((row) => ({ planner: row.planner, model: row.model, runs: row.runs, metrics: summarizeRuns(row.records, input.k) }));
  const softwares = columnOrder(rows.flatMap((row) => Object.keys(row.metrics.bySoftware)));
  return { schema: REPORT_SCHEMA, series: input.series, run: input.run, k: input.k, createdAt: input.createdAt, softwares, rows, unsupported: [...(input.unsupported ?? [])] };
}

/** Software names in report order: the registry's (the paper's) first, then the others by name. */
export function columnOrder(softwares: Iterable<string>): string[] {
  const present = new Set(softwares);
  const known = APPS.map((app) => app.software as string).filter((s) => present.has(s));
  return [...known, ...[...present].filter((s) => !known.includes(s)).sort()];
}

/** A column's title: "Domain (App)" for a registry app (e.g. "Biochemistry (ChimeraX)"), else the software's name. */
export function columnTitle(software: string): string {
  const app = appOf(software);
  return app === undefined ? software : appColumn(app);
}

const solved = (row: ReportRow): Set<string> =>
  new Set(row.metrics.tasks.filter((t) => t.successes > 0).map((t) => `${t.software}/${t.taskId}`));
const attempted = (row: ReportRow): Set<string> => new Set(row.metrics.tasks.map((t) => `${t.software}/${t.taskId}`));

/** `current` compared with `previous`, row by row (rows match by planner name; new rows compare with nothing). */
export function withDiff(current: EvaluationReport, previous: EvaluationReport, previousKey: string): EvaluationReport {
  const diff = current.rows.map((row): RowDiff => {
    const before = previous.rows.find((r) => r.planner === row.planner);
    const now = solved(row);
    const then = before === undefined ? new Set<string>() : solved(before);
    const common = before === undefined ? new Set<string>() : attempted(before);
    const averageDelta: Record<string, number> = {};
    if (before !== undefined) {
      for (const software of Object.keys(row.metrics.bySoftware)) {
        const old = before.metrics.bySoftware[software];
        if (old !== undefined) averageDelta[software] = percent((row.metrics.bySoftware[software] as Summary).averageAtK - old.averageAtK);
      }
      averageDelta.overall = percent(row.metrics.overall.averageAtK - before.metrics.overall.averageAtK);
    }
    return {
      planner: row.planner,
      // Only tasks both reports ran can start or stop passing.
      started: [...now].filter((t) => common.has(t) && !then.has(t)).sort(),
      stopped: [...then].filter((t) => attempted(row).has(t) && !now.has(t)).sort(),
      averageDelta,
    };
  });
  return { ...current, previous: { key: previousKey, run: previous.run, createdAt: previous.createdAt }, diff };
}

const cell = (summary: Summary | undefined, pick: (s: Summary) => number): string => (summary === undefined ? '–' : percent(pick(summary)).toFixed(2));
const signed = (value: number): string => `${value > 0 ? '+' : ''}${value.toFixed(2)}`;

function table(report: EvaluationReport, title: string, pick: (s: Summary) => number): string[] {
  return [
    `## ${title}@${report.k} (%)`,
    '',
    `| Planner | ${report.softwares.map(columnTitle).join(' | ')} | Overall |`,
    `| --- | ${report.softwares.map(() => '---:').join(' | ')} | ---: |`,
    ...report.rows.map(
      (row) =>
        `| ${row.planner} (\`${row.model}\`) | ${report.softwares.map((s) => cell(row.metrics.bySoftware[s], pick)).join(' | ')} | ${cell(row.metrics.overall, pick)} |`,
    ),
    '',
  ];
}

/** The report as Markdown: the paper's table 1 layout, then the tasks, what was left out and the diff. */
export function renderReportMarkdown(report: EvaluationReport): string {
  const lines = [
    `# Evaluation ${report.series} / ${report.run}`,
    '',
    `${report.createdAt}. Every task was attempted ${report.k} times per planner; Average@${report.k} is the mean success rate over tasks, Pass@${report.k} the share of tasks solved at least once; Overall is the mean over software.`,
    '',
    ...table(report, 'Average', (s) => s.averageAtK),
    ...table(report, 'Pass', (s) => s.passAtK),
    '## Tasks',
    '',
    ...report.rows.flatMap((row) =>
      report.softwares.map((software) => {
        const tasks = row.metrics.tasks.filter((t) => t.software === software);
        return `- ${row.planner}, ${columnTitle(software)}: ${tasks.map((t) => `${t.taskId} ${t.successes}/${t.runs}`).join(', ') || 'none'} (run \`${row.runs[software] ?? '-'}\`)`;
      }),
    ),
    '',
  ];
  if (report.unsupported.length > 0) {
    const unsupported = columnOrder(report.unsupported.map((u) => u.software)).flatMap((software) => report.unsupported.filter((u) => u.software === software));
    lines.push('## Not run here (unsupported, not counted)', '', ...unsupported.map((u) => `- ${u.software}/${u.taskId}: ${u.reason}`), '');
  }
  if (report.previous !== undefined && report.diff !== undefined) {
    lines.push(`## Since ${report.previous.run} (${report.previous.createdAt})`, '');
    for (const row of report.diff) {
      const deltas = Object.entries(row.averageDelta).map(([software, delta]) => `${software} ${signed(delta)}`);
      lines.push(
        `- ${row.planner}: Average@${report.k} ${deltas.join(', ') || 'not in the previous report'}; started passing: ${row.started.join(', ') || 'none'}; stopped passing: ${row.stopped.join(', ') || 'none'}`,
      );
    }
    lines.push('');
  } else {
    lines.push('## Since the previous report', '', 'This is the first report of its series.', '');
  }
  return lines.join('\n');
}
