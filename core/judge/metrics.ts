/**
 * How well a judge strategy labels success (docs/method.md, the paper's table 2): precision =
 * TP / (TP + FP) and recall = TP / (TP + FN) on "success", the evaluators' result as the truth.
 * Precision matters more: a false success trains the planner on a wrong trajectory.
 */

export interface Labelled {
  /** What the judge said. */
  readonly predicted: boolean;
  /** What the task's evaluators said. */
  readonly truth: boolean;
}

export interface Confusion {
  readonly truePositives: number;
  readonly falsePositives: number;
  readonly falseNegatives: number;
  readonly trueNegatives: number;
  /** 0 when the judge never said success. */
  readonly precision: number;
  /** 0 when nothing truly succeeded. */
  readonly recall: number;
}

export function confusion(items: readonly Labelled[]): Confusion {
  const count = (predicted: boolean, truth: boolean): number => items.filter((i) => i.predicted === predicted && i.truth === truth).length;
  const tp = count(true, true);
  const fp = count(true, false);
  const fn = count(false, true);
  return {
    truePositives: tp,
    falsePositives: fp,
    falseNegatives: fn,
    trueNegatives: count(false, false),
    precision: tp + fp === 0 ? 0 : tp / (tp + fp),
    recall: tp + fn === 0 ? 0 : tp / (tp + fn),
  };
}
