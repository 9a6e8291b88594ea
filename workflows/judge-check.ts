import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { JudgeMeasurement, SpecializationInput } from '../config/workflow-inputs';
import { belowPrecisionFloor } from '../core/judge/calibration';
import type { JudgeEvaluationActivities } from '../activities/judge/evaluation';

/**
 * The judge measured every specialization round (CODA's reward rests on it): the round also rolls
 * out the real tasks, whose evaluators say what truly happened, has the judge label them like the
 * generated ones, and compares (core/judge/calibration.ts). A final-verdict precision below the
 * run's judgePrecisionFloor stops the round before any dataset is built from its verdicts.
 */

/** Raised when the judge's precision is below the floor: not retried, the measurement in its details. */
export const JUDGE_BELOW_FLOOR = 'JudgeBelowFloor';

export interface RoundBatch {
  readonly run: string;
  readonly attempts: number;
  readonly taskSet?: string;
  readonly taskIds?: readonly string[];
  /** Its judged steps train this and every later round. */
  readonly source: boolean;
}

/**
 * The round's rollouts of the real tasks (evaluationTaskIds when the run names them, else all):
 * always judged, to measure the judge; trained on only with includeSeeds (they are the evaluation set).
 */
export const realTaskBatch = (input: SpecializationInput, id: string): RoundBatch => ({
  run: `${id}-seed`,
  attempts: input.realTaskAttempts,
  ...(input.evaluationTaskIds === undefined ? {} : { taskIds: input.evaluationTaskIds }),
  source: input.includeSeeds,
});

const measuring = proxyActivities<JudgeEvaluationActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
});

/** The judge's precision and recall on the judged real-task batch (and its Prometheus gauges). */
export function measureJudge(input: SpecializationInput, round: number, batch: RoundBatch): Promise<JudgeMeasurement> {
  return measuring.measureJudge({ run: batch.run, software: input.software, specialization: input.run, round, floor: input.judgePrecisionFloor });
}

/**
 * The failure that ends the round before its dataset when the judge's final-verdict precision is
 * below the floor (not retried: judging again gives the same verdicts), or undefined.
 */
export function belowFloorFailure(input: SpecializationInput, round: number, judge: JudgeMeasurement): ApplicationFailure | undefined {
  const why = belowPrecisionFloor(judge.final, judge.floor);
  if (why === undefined) return undefined;
  return ApplicationFailure.create({
    message: `specialization ${input.run} round ${round} stopped before training: ${why} (judgePrecisionFloor; run ${judge.run})`,
    type: JUDGE_BELOW_FLOOR,
    nonRetryable: true,
    details: [judge],
  });
}
