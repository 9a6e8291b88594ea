import { APP_NOT_RUNNING } from './evaluation';
import { percent, summarizeRuns, type MetricsReport, type RunRecord, type Summary, type TaskRuns } from './metrics';
import type { AppSchema } from './task-common';
import { averageInterval, compareWithBase, CONFIDENCE, DEFAULT_BOOTSTRAP, pairTasks, type BootstrapSettings, type Comparison, type Interval } from './uncertainty';

/**
 * Evaluation reports (docs/method.md, the paper's table 1): one row per planner checkpoint, one
 * column per software named by its ScienceBoard domain ("GIS (GRASS GIS)"), in the order of the
 * applications the caller gives (the registry, apps/index.ts: the paper's order), Overall last; Average@k and Pass@k; and what changed since the previous
 * report of the same series (which tasks started or stopped passing, i.e. were solved at least
 * once in k attempts). Tasks the deployment cannot run are listed apart, never counted as failures.
 * Since v2 every Average@k carries its 95% interval and every row its paired comparison with the
 * row named `base` (core/uncertainty.ts); since v3 every row lists the attempts whose app was not
 * running at evaluation (not solved, counted apart), and a comparison's interval is the sign-flip
 * test's own. v1 and v2 reports still read and render.
 */

export const REPORT_SCHEMA = 'coda.evaluation-report/v3';
/** Every schema a reader accepts: v1 has no `uncertainty`, `averageInterval` or `vsBase`; v1 and v2 no `appNotRunning`. */
export const REPORT_SCHEMAS = ['coda.evaluation-report/v1', 'coda.evaluation-report/v2', REPORT_SCHEMA] as const;
/** The row every other row is compared with, when a report has it. */
export const BASE_ROW = 'base';

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
  /** Average@k's 95% interval per software and overall (fractions); absent in v1 reports. */
  readonly averageInterval?: AverageIntervals;
  /** This row minus the base row over the tasks both ran; absent on the base row, without a base, and in v1. */
  readonly vsBase?: BaseComparisons;
  /** The attempts (`software/task/attempt`) not solved because their app was not running at evaluation; absent before v3. */
  readonly appNotRunning?: readonly string[];
}

export interface AverageIntervals {
  readonly bySoftware: Readonly<Record<string, Interval>>;
  readonly overall: Interval;
}

export interface BaseComparisons {
  readonly bySoftware: Readonly<Record<string, Comparison>>;
  readonly overall: Comparison;
}

/** How the intervals and comparisons were made, so they can be made again. */
export interface ReportUncertainty {
  readonly confidence: number;
  readonly seed: number;
  readonly resamples: number;
  /** The row compared with, when the report has one named `base`. */
  readonly base?: string;
  readonly method: string;
}

export const UNCERTAINTY_METHOD =
  'Average@k interval: percentile bootstrap resampling tasks with replacement within each software, then each resampled task\'s k attempts; vs base: over the tasks both rows ran, the mean per-task difference of success rates, its p-value from a sign-flip permutation test (within noise when p >= 0.05), its interval the differences that same test does not reject at 5%';

/** What a comparison's interval is, for the footnote of every place that shows one (reports, viewer, demo, CLI). */
export const COMPARISON_NOTE =
  'vs base: the difference with the base in percentage points over the tasks both ran, p from a sign-flip permutation test; [lower, upper] holds the differences that test does not reject at 5%, so it excludes 0 exactly when p < 0.05 and holds 0 exactly when the difference is within noise.';

export interface RowDiff {
  readonly planner: string;
  /** `software/task` ids solved now and not before, and the other way round. */
  readonly started: string[];
  readonly stopped: string[];
  /** Average@k now minus before, per software and `overall`, in percentage points. */
  readonly averageDelta: Readonly<Record<string, number>>;
}

export interface EvaluationReport {
  readonly schema: (typeof REPORT_SCHEMAS)[number];
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
  /** Absent in v1 reports. */
  readonly uncertainty?: ReportUncertainty;
}

export interface RowInput {
  readonly planner: string;
  readonly model: string;
  readonly runs: Readonly<Record<string, string>>;
  readonly records: readonly RunRecord[];
}

/**
 * A report from the success records of every row (k attempts per task), with the intervals and
 * the comparisons with the base row made with `bootstrap` (default DEFAULT_BOOTSTRAP); throws
 * when a task has fewer than k runs.
 */
export function buildEvaluationReport(apps: readonly ReportApp[], input: {
  series: string;
  run: string;
  k: number;
  createdAt: string;
  rows: readonly RowInput[];
  unsupported?: readonly UnsupportedTask[];
  bootstrap?: BootstrapSettings;
}): EvaluationReport {
  const settings = input.bootstrap ?? DEFAULT_BOOTSTRAP;
  const measured = input.rows.map((row) => ({
    planner: row.planner,
    model: row.model,
    runs: row.runs,
    metrics: summarizeRuns(row.records, input.k),
    appNotRunning: row.records.filter((r) => r.appNotRunning === true).map((r) => `${r.software}/${r.taskId}/${r.run}`).sort(),
  }));
  const softwares = columnOrder(apps, measured.flatMap((row) => Object.keys(row.metrics.bySoftware)));
  const base = measured.find((row) => row.planner === BASE_ROW);
  const rows = measured.map((row): ReportRow => ({
    ...row,
    averageInterval: intervalsOf(row.metrics, settings),
    ...(base === undefined || row === base ? {} : withComparisons(row.metrics, base.metrics, settings)),
  }));
  const uncertainty: ReportUncertainty = { confidence: CONFIDENCE, seed: settings.seed, resamples: settings.resamples, ...(base === undefined ? {} : { base: BASE_ROW }), method: UNCERTAINTY_METHOD };
  return { schema: REPORT_SCHEMA, series: input.series, run: input.run, k: input.k, createdAt: input.createdAt, softwares, rows, unsupported: [...(input.unsupported ?? [])], uncertainty };
}

const ofSoftware = <T extends { software: string }>(items: readonly T[], software: string): T[] => items.filter((t) => t.software === software);
const softwaresOf = (tasks: readonly TaskRuns[]): string[] => [...new Set(tasks.map((t) => t.software))];

/** Average@k's interval per software and overall (each software resampled apart). */
function intervalsOf(metrics: MetricsReport, settings: BootstrapSettings): AverageIntervals {
  const groups = softwaresOf(metrics.tasks).map((software) => ofSoftware(metrics.tasks, software));
  return {
    bySoftware: Object.fromEntries(groups.map((group) => [group[0]!.software, averageInterval([group], settings)])),
    overall: averageInterval(groups, settings),
  };
}

/** `vsBase`: the row against the base per software both ran and overall, over the tasks both ran (none in common: nothing). */
function withComparisons(row: MetricsReport, base: MetricsReport, settings: BootstrapSettings): { vsBase?: BaseComparisons } {
  const pairs = pairTasks(row.tasks, base.tasks);
  if (pairs.length === 0) return {};
  const groups = softwaresOf(pairs.map((p) => p.row)).map((software) => pairs.filter((p) => p.row.software === software));
  return {
    vsBase: {
      bySoftware: Object.fromEntries(groups.map((group) => [group[0]!.row.software, compareWithBase([group], settings)])),
      overall: compareWithBase(groups, settings),
    },
  };
}

/** What a report needs of an application: its name in task files and the parts of its column's title. */
export type ReportApp = Pick<AppSchema, 'software' | 'domain' | 'display'>;

/** "Domain (Display)", as report columns name an app (e.g. "GIS (GRASS GIS)"). */
export const appColumn = (app: ReportApp): string => `${app.domain} (${app.display})`;

/** Software names in report order: those of `apps` in its order (the registry's, the paper's) first, then the others by name. */
export function columnOrder(apps: readonly ReportApp[], softwares: Iterable<string>): string[] {
  const present = new Set(softwares);
  const known = apps.map((app) => app.software).filter((s) => present.has(s));
  return [...known, ...[...present].filter((s) => !known.includes(s)).sort()];
}

/** A column's title: "Domain (App)" for one of `apps` (e.g. "Biochemistry (ChimeraX)"), else the software's name. */
export function columnTitle(apps: readonly ReportApp[], software: string): string {
  const app = apps.find((a) => a.software === software);
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

/** A value in percent or points with one decimal and a true minus sign, e.g. `−8.1`. */
export const formatPoints = (value: number): string => (Math.round(value * 10) / 10).toFixed(1).replace(/^-/, '\u2212').replace(/^\u22120\.0$/, '0.0');

const points = (fraction: number): string => formatPoints(fraction * 100);

/** An interval of fractions in percent: `[61.3, 83.8]`. */
export const formatInterval = (interval: Interval): string => `[${points(interval.lower)}, ${points(interval.upper)}]`;

/** A difference with the base: `+15.0 [4.2, 25.1], p 0.004`, or `… within noise, p 0.61` when it is. */
export function formatComparison(c: Comparison): string {
  return `${formatDifference({ difference: c.difference * 100, lower: c.interval.lower * 100, upper: c.interval.upper * 100, withinNoise: c.withinNoise })}, p ${formatP(c.pValue)}`;
}

/**
 * A difference already in points (a RoundRecord's vsBase): `+15.0 [4.2, 25.1]`, or `+3.0 [−8.1, 14.0]
 * within noise`. The interval holds 0 exactly when the difference is within noise (core/uncertainty.ts);
 * one that does not (a percentile bootstrap's, in reports and records made before v3) is left out,
 * and an end that would print as 0.0 on an interval excluding 0 keeps the digits that show it does.
 */
export function formatDifference(c: { readonly difference: number; readonly lower: number; readonly upper: number; readonly withinNoise: boolean }): string {
  const difference = formatPoints(c.difference);
  const holdsZero = c.lower <= 0 && 0 <= c.upper;
  const end = (value: number): string => {
    const text = formatPoints(value);
    return holdsZero || !/^\u2212?0\.0$/.test(text) ? text : value.toPrecision(1).replace(/^-/, '\u2212');
  };
  const interval = holdsZero === c.withinNoise ? ` [${end(c.lower)}, ${end(c.upper)}]` : ' (interval of an earlier method left out)';
  return `${c.difference > 0 && difference !== '0.0' ? '+' : ''}${difference}${interval}${c.withinNoise ? ' within noise' : ''}`;
}

const formatP = (p: number): string => (p < 0.001 ? '< 0.001' : p.toFixed(3));

/** An Average@k cell: the figure, then its interval when the report has one. */
const averageCell = (summary: Summary | undefined, interval: Interval | undefined): string =>
  `${cell(summary, (s) => s.averageAtK)}${summary === undefined || interval === undefined ? '' : ` ${formatInterval(interval)}`}`;

/** What noiseSummary reads of a report (the viewer passes its own parse of one). */
type ComparedRows = Pick<EvaluationReport, 'softwares' | 'uncertainty'> & { readonly rows: ReadonlyArray<Pick<ReportRow, 'planner' | 'vsBase'>> };

const hasComparisons = (report: ComparedRows): boolean => report.rows.some((row) => row.vsBase !== undefined);

function averageTable(apps: readonly ReportApp[], report: EvaluationReport): string[] {
  const compared = hasComparisons(report);
  // The per-software table below carries the note when there is one.
  const note = compared && report.softwares.length < 2 ? [COMPARISON_NOTE, ''] : [];
  const vsBase = (row: ReportRow): string[] => (!compared ? [] : [row.vsBase === undefined ? (row.planner === report.uncertainty?.base ? '(the base)' : '–') : formatComparison(row.vsBase.overall)]);
  return [
    `## Average@${report.k} (%)${report.uncertainty === undefined ? '' : `, with its ${report.uncertainty.confidence * 100}% interval`}`,
    '',
    `| Planner | ${report.softwares.map((s) => columnTitle(apps, s)).join(' | ')} | Overall |${compared ? ' vs base (Overall, points) |' : ''}`,
    `| --- | ${report.softwares.map(() => '---:').join(' | ')} | ---: |${compared ? ' ---: |' : ''}`,
    ...report.rows.map(
      (row) =>
        `| ${row.planner} (\`${row.model}\`) | ${report.softwares.map((s) => averageCell(row.metrics.bySoftware[s], row.averageInterval?.bySoftware[s])).join(' | ')} | ${averageCell(row.metrics.overall, row.averageInterval?.overall)} |${vsBase(row).map((c) => ` ${c} |`).join('')}`,
    ),
    '',
    ...note,
  ];
}

/** Every row minus the base per software, when there is more than one software (with one, Overall says it all). */
function comparisonTable(apps: readonly ReportApp[], report: EvaluationReport): string[] {
  if (!hasComparisons(report) || report.softwares.length < 2) return [];
  const compared = report.rows.filter((row) => row.vsBase !== undefined);
  return [
    `## Average@${report.k} minus ${report.uncertainty?.base ?? BASE_ROW}, per software (percentage points)`,
    '',
    `| Planner | ${report.softwares.map((s) => columnTitle(apps, s)).join(' | ')} | Overall |`,
    `| --- | ${report.softwares.map(() => '---:').join(' | ')} | ---: |`,
    ...compared.map((row) => {
      const bySoftware = report.softwares.map((s) => (row.vsBase!.bySoftware[s] === undefined ? '–' : formatComparison(row.vsBase!.bySoftware[s]!)));
      return `| ${row.planner} | ${bySoftware.join(' | ')} | ${formatComparison(row.vsBase!.overall)} |`;
    }),
    '',
    COMPARISON_NOTE,
    '',
  ];
}

/**
 * One sentence naming the differences with the base that are within noise and those that are
 * not, e.g. "Within noise: generalist on Overall. Outside the noise: specialist-KAlgebra on
 * Algebra (KAlgebra), Overall."; undefined when the report compares nothing.
 */
export function noiseSummary(apps: readonly ReportApp[], report: ComparedRows): string | undefined {
  if (!hasComparisons(report)) return undefined;
  const columns = [...report.softwares, 'overall'];
  const named = (within: boolean): string[] =>
    report.rows.flatMap((row) => {
      if (row.vsBase === undefined) return [];
      const hits = columns.filter((c) => (c === 'overall' ? row.vsBase!.overall : row.vsBase!.bySoftware[c])?.withinNoise === within);
      return hits.length === 0 ? [] : [`${row.planner} on ${hits.map((c) => (c === 'overall' ? 'Overall' : columnTitle(apps, c))).join(', ')}`];
    });
  const within = named(true);
  const outside = named(false);
  const base = report.uncertainty?.base ?? BASE_ROW;
  return `Compared with ${base} (paired, over the tasks both ran): within noise${within.length === 0 ? ': none' : `: ${within.join('; ')}`}. Outside the noise${outside.length === 0 ? ': none' : `: ${outside.join('; ')}`}.`;
}

/** How the intervals were made (seed, resamples), or that the report has none (v1). */
function uncertaintyNote(apps: readonly ReportApp[], report: EvaluationReport): string[] {
  const u = report.uncertainty;
  if (u === undefined) return ['This report (schema v1) has no intervals.', ''];
  const base = u.base === undefined ? 'There is no row named `base`, so no row is compared with it.' : (noiseSummary(apps, report) ?? `No other row ran a task \`${u.base}\` ran, so none is compared with it.`);
  return [`Intervals: ${u.confidence * 100}%, bootstrap with seed ${u.seed} and ${u.resamples} resamples (as many sign assignments for the test). ${u.method}. ${base}`, ''];
}

function table(apps: readonly ReportApp[], report: EvaluationReport, title: string, pick: (s: Summary) => number): string[] {
  return [
    `## ${title}@${report.k} (%)`,
    '',
    `| Planner | ${report.softwares.map((s) => columnTitle(apps, s)).join(' | ')} | Overall |`,
    `| --- | ${report.softwares.map(() => '---:').join(' | ')} | ---: |`,
    ...report.rows.map(
      (row) =>
        `| ${row.planner} (\`${row.model}\`) | ${report.softwares.map((s) => cell(row.metrics.bySoftware[s], pick)).join(' | ')} | ${cell(row.metrics.overall, pick)} |`,
    ),
    '',
  ];
}

/** The attempts whose app was not running at evaluation, per row, with their count (every v3 report says it, none or not). */
function appNotRunningSection(report: EvaluationReport): string[] {
  const lines = [`## ${APP_NOT_RUNNING[0]!.toUpperCase()}${APP_NOT_RUNNING.slice(1)}`, ''];
  if (report.rows.every((row) => row.appNotRunning === undefined)) return [...lines, `Not recorded in this report (${report.schema}).`, ''];
  lines.push('Attempts whose app was not running when they were evaluated (the agent closed it, or it crashed): counted as not solved, reward 0, never a pass.', '');
  for (const row of report.rows) {
    const attempts = row.appNotRunning ?? [];
    lines.push(`- ${row.planner}: ${attempts.length}${attempts.length === 0 ? '' : ` (${attempts.join(', ')})`}`);
  }
  return [...lines, ''];
}

/** The report as Markdown: the paper's table 1 layout, then the tasks, what was left out and the diff. */
export function renderReportMarkdown(apps: readonly ReportApp[], report: EvaluationReport): string {
  const lines = [
    `# Evaluation ${report.series} / ${report.run}`,
    '',
    `${report.createdAt}. Every task was attempted ${report.k} times per planner; Average@${report.k} is the mean success rate over tasks, Pass@${report.k} the share of tasks solved at least once; Overall is the mean over software.`,
    '',
    ...averageTable(apps, report),
    ...comparisonTable(apps, report),
    ...uncertaintyNote(apps, report),
    ...table(apps, report, 'Pass', (s) => s.passAtK),
    '## Tasks',
    '',
    ...report.rows.flatMap((row) =>
      report.softwares.map((software) => {
        const tasks = row.metrics.tasks.filter((t) => t.software === software);
        return `- ${row.planner}, ${columnTitle(apps, software)}: ${tasks.map((t) => `${t.taskId} ${t.successes}/${t.runs}`).join(', ') || 'none'} (run \`${row.runs[software] ?? '-'}\`)`;
      }),
    ),
    '',
    ...appNotRunningSection(report),
  ];
  if (report.unsupported.length > 0) {
    const unsupported = columnOrder(apps, report.unsupported.map((u) => u.software)).flatMap((software) => report.unsupported.filter((u) => u.software === software));
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
