import { percent } from '../metrics';
import { confusion, type Confusion } from './metrics';
import { totalCost, type JudgeCost } from './verdict-file';

/**
 * A comparison of judge strategies on the same labelled trajectories (the paper's table 2):
 * precision and recall of each strategy against the evaluators, what each cost, and, for a
 * multi-resolution strategy, what its low-resolution early exit saved against the
 * all-high-resolution plan with the same votes, and whether the verdicts were the same.
 */

export const JUDGE_EVALUATION_SCHEMA = 'coda.judge-evaluation/v1';

export interface StrategyVerdict {
  readonly success: boolean;
  readonly cost: JudgeCost;
}

export interface JudgedTrajectory {
  readonly manifestKey: string;
  /** What the task's evaluators said. */
  readonly truth: boolean;
  /** The verdict of each strategy, by label; absent when that strategy has none for this trajectory. */
  readonly verdicts: Readonly<Record<string, StrategyVerdict | undefined>>;
}

export interface StrategyRow {
  readonly label: string;
  readonly title: string;
  /** Trajectories with a verdict of this strategy. */
  readonly judged: number;
  readonly confusion: Confusion;
  readonly cost: JudgeCost;
}

export interface EarlyExitSaving {
  readonly label: string;
  /** The all-high-resolution strategy with the same votes. */
  readonly against: string;
  /** Trajectories both judged. */
  readonly trajectories: number;
  readonly multiResolution: JudgeCost;
  readonly allHigh: JudgeCost;
  /** Trajectories on which both gave the same verdict. */
  readonly identical: number;
}

export interface JudgeEvaluationReport {
  readonly schema: typeof JUDGE_EVALUATION_SCHEMA;
  readonly id: string;
  readonly run: string;
  readonly software: string;
  readonly createdAt: string;
  readonly trajectories: number;
  /** How many of them the evaluators passed. */
  readonly passed: number;
  readonly rows: StrategyRow[];
  readonly savings: EarlyExitSaving[];
}

export interface StrategyInfo {
  readonly label: string;
  readonly title: string;
  readonly allHighTwin?: string;
}

export function buildJudgeEvaluationReport(input: {
  id: string;
  run: string;
  software: string;
  createdAt: string;
  strategies: readonly StrategyInfo[];
  trajectories: readonly JudgedTrajectory[];
}): JudgeEvaluationReport {
  const costOf = (verdicts: readonly StrategyVerdict[]): JudgeCost =>
    verdicts.reduce<JudgeCost>(
      (sum, v) => ({
        calls: sum.calls + v.cost.calls,
        images: sum.images + v.cost.images,
        pixels: sum.pixels + v.cost.pixels,
        lowResolutionPixels: sum.lowResolutionPixels + v.cost.lowResolutionPixels,
        highResolutionPixels: sum.highResolutionPixels + v.cost.highResolutionPixels,
        promptTokens: sum.promptTokens + v.cost.promptTokens,
        completionTokens: sum.completionTokens + v.cost.completionTokens,
        latencyMs: sum.latencyMs + v.cost.latencyMs,
      }),
      totalCost([]),
    );
  const rows = input.strategies.map((strategy): StrategyRow => {
    const judged = input.trajectories.flatMap((t) => {
      const verdict = t.verdicts[strategy.label];
      return verdict === undefined ? [] : [{ truth: t.truth, verdict }];
    });
    return {
      label: strategy.label,
      title: strategy.title,
      judged: judged.length,
      confusion: confusion(judged.map((j) => ({ predicted: j.verdict.success, truth: j.truth }))),
      cost: costOf(judged.map((j) => j.verdict)),
    };
  });
  const savings = input.strategies.flatMap((strategy): EarlyExitSaving[] => {
    const twin = strategy.allHighTwin;
    if (twin === undefined) return [];
    const pairs = input.trajectories.flatMap((t) => {
      const multi = t.verdicts[strategy.label];
      const high = t.verdicts[twin];
      return multi === undefined || high === undefined ? [] : [{ multi, high }];
    });
    return [
      {
        label: strategy.label,
        against: twin,
        trajectories: pairs.length,
        multiResolution: costOf(pairs.map((p) => p.multi)),
        allHigh: costOf(pairs.map((p) => p.high)),
        identical: pairs.filter((p) => p.multi.success === p.high.success).length,
      },
    ];
  });
  return {
    schema: JUDGE_EVALUATION_SCHEMA,
    id: input.id,
    run: input.run,
    software: input.software,
    createdAt: input.createdAt,
    trajectories: input.trajectories.length,
    passed: input.trajectories.filter((t) => t.truth).length,
    rows,
    savings,
  };
}

const per = (value: number, n: number, digits = 2): string => (n === 0 ? '–' : (value / n).toFixed(digits));
const change = (now: number, before: number): string => (before === 0 ? '–' : `${now - before <= 0 ? '−' : '+'}${Math.abs(percent((now - before) / before)).toFixed(1)}%`);

/** The comparison as Markdown: the table-2 layout, then the early-exit savings. */
export function renderJudgeEvaluationMarkdown(report: JudgeEvaluationReport, titleOf: (label: string) => string = (l) => l): string {
  const lines = [
    `# Judge evaluation ${report.id}: run ${report.run}, ${report.software}`,
    '',
    `${report.trajectories} trajectories labelled by their tasks' evaluators (${report.passed} passed, ${report.trajectories - report.passed} failed). Precision and recall are on "success", the evaluators' result as truth (${report.createdAt}).`,
    '',
    '| Strategy | Precision (%) | Recall (%) | TP / FP / FN / TN | Calls per trajectory | Images per trajectory | Megapixels per trajectory |',
    '| --- | ---: | ---: | --- | ---: | ---: | ---: |',
    ...report.rows.map((row) => {
      const c = row.confusion;
      return `| ${row.title} | ${percent(c.precision).toFixed(1)} | ${percent(c.recall).toFixed(1)} | ${c.truePositives} / ${c.falsePositives} / ${c.falseNegatives} / ${c.trueNegatives} | ${per(row.cost.calls, row.judged)} | ${per(row.cost.images, row.judged, 1)} | ${per(row.cost.pixels / 1e6, row.judged)} |`;
    }),
    '',
  ];
  if (report.savings.length > 0) {
    lines.push(
      '## What the low-resolution early exit saved',
      '',
      'Against the all-high-resolution plan with the same votes, on the same trajectories (totals; change in parentheses):',
      '',
      '| Strategy | Against | Calls | Images | Megapixels | High-resolution megapixels | Identical verdicts |',
      '| --- | --- | --- | --- | --- | --- | --- |',
      ...report.savings.map((s) => {
        const pair = (pick: (c: JudgeCost) => number, scale = 1, digits = 0) =>
          `${(pick(s.multiResolution) / scale).toFixed(digits)} vs ${(pick(s.allHigh) / scale).toFixed(digits)} (${change(pick(s.multiResolution), pick(s.allHigh))})`;
        return `| ${titleOf(s.label)} | ${titleOf(s.against)} | ${pair((c) => c.calls)} | ${pair((c) => c.images)} | ${pair((c) => c.pixels, 1e6, 1)} | ${pair((c) => c.highResolutionPixels, 1e6, 1)} | ${s.identical} of ${s.trajectories} (${per(100 * s.identical, s.trajectories, 1)}%) |`;
      }),
      '',
    );
  }
  return lines.join('\n');
}
