import type { JudgeResolution } from './verdict';

/**
 * How far a specialization round can trust its judge (CODA's reward rests on it): the judge's
 * verdicts on rollouts of the real tasks, whose evaluators say what truly happened, compared with
 * the evaluators' result (the trajectory manifest's `evaluation.passed`). Measured for the final,
 * voted verdict and for each judge at each resolution. Pure: the workflow and the activity share it.
 *
 * precision = of the trajectories approved, the share the evaluators passed: TP / (TP + FP);
 * recall = of the trajectories the evaluators passed, the share approved: TP / (TP + FN).
 * A ratio with nothing to divide by (nothing approved; nothing passed) is null, never 0 or 1:
 * "no evidence" must not read as a perfect or a useless judge.
 */

/** One judged trajectory: what the evaluators said, the final verdict and every vote cast. */
export interface CalibrationTrajectory {
  /** The evaluators passed it. */
  readonly passed: boolean;
  /** The final, voted verdict. */
  readonly success: boolean;
  /** approved: the vote said success (an unreadable vote counts as failure, as in voting). */
  readonly votes: ReadonlyArray<{ readonly judge: string; readonly resolution: JudgeResolution; readonly approved: boolean }>;
}

export interface Agreement {
  /** Trajectories this figure is measured on. */
  readonly trajectories: number;
  /** Of them, those the judge approved, and those the evaluators passed. */
  readonly approved: number;
  readonly passed: number;
  readonly truePositives: number;
  readonly falsePositives: number;
  readonly falseNegatives: number;
  readonly trueNegatives: number;
  /** null when nothing was approved. */
  readonly precision: number | null;
  /** null when nothing passed. */
  readonly recall: number | null;
}

export interface VoteAgreement extends Agreement {
  readonly judge: string;
  readonly resolution: JudgeResolution;
}

export interface JudgeCalibration {
  /** The final verdict, on every trajectory judged. */
  readonly final: Agreement;
  /**
   * Each judge at each resolution, on the trajectories it voted on there: approved when every one
   * of its votes there said success. Voting stops at the first failure, so the high-resolution
   * figures are measured on the trajectories the low-resolution votes let through.
   */
  readonly votes: readonly VoteAgreement[];
}

/** Precision and recall of predictions against the truth; null ratios where the denominator is 0. */
export function agreement(items: ReadonlyArray<{ readonly predicted: boolean; readonly truth: boolean }>): Agreement {
  const count = (predicted: boolean, truth: boolean): number => items.filter((i) => i.predicted === predicted && i.truth === truth).length;
  const tp = count(true, true);
  const fp = count(true, false);
  const fn = count(false, true);
  return {
    trajectories: items.length,
    approved: tp + fp,
    passed: tp + fn,
    truePositives: tp,
    falsePositives: fp,
    falseNegatives: fn,
    trueNegatives: count(false, false),
    precision: tp + fp === 0 ? null : tp / (tp + fp),
    recall: tp + fn === 0 ? null : tp / (tp + fn),
  };
}

const RESOLUTION_ORDER: Readonly<Record<JudgeResolution, number>> = { low: 0, high: 1 };

/** The final verdict's and every (judge, resolution)'s agreement with the evaluators. */
export function judgeCalibration(trajectories: readonly CalibrationTrajectory[]): JudgeCalibration {
  const final = agreement(trajectories.map((t) => ({ predicted: t.success, truth: t.passed })));
  const groups = new Map<string, { judge: string; resolution: JudgeResolution; items: Array<{ predicted: boolean; truth: boolean }> }>();
  for (const t of trajectories) {
    const cast = new Map<string, { judge: string; resolution: JudgeResolution; approved: boolean }>();
    for (const vote of t.votes) {
      const key = `${vote.resolution}\u0000${vote.judge}`;
      const before = cast.get(key);
      cast.set(key, { judge: vote.judge, resolution: vote.resolution, approved: (before?.approved ?? true) && vote.approved });
    }
    for (const [key, c] of cast) {
      const group = groups.get(key) ?? { judge: c.judge, resolution: c.resolution, items: [] };
      group.items.push({ predicted: c.approved, truth: t.passed });
      groups.set(key, group);
    }
  }
  const votes = [...groups.values()]
    .sort((a, b) => RESOLUTION_ORDER[a.resolution] - RESOLUTION_ORDER[b.resolution] || (a.judge < b.judge ? -1 : a.judge > b.judge ? 1 : 0))
    .map((g) => ({ judge: g.judge, resolution: g.resolution, ...agreement(g.items) }));
  return { final, votes };
}

/**
 * Why a round must not train on its data, or undefined when it may: the final verdict's precision
 * is below the floor. A floor of 0 never stops; a precision of null (the judge approved none of
 * the real-task rollouts) is no evidence against the judge and does not stop the round.
 */
export function belowPrecisionFloor(final: Agreement, floor: number): string | undefined {
  if (floor <= 0 || final.precision === null || final.precision >= floor) return undefined;
  return (
    `the judge's precision on the real tasks is ${final.precision.toFixed(3)}, below the floor of ${floor}: ` +
    `of ${final.approved} rollouts it approved, the evaluators passed ${final.truePositives} ` +
    `(${final.trajectories} judged, ${final.passed} passed, ${final.falsePositives} false positives)`
  );
}
