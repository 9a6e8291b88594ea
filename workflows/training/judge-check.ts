import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { CurrentPlanner, SpecializationInput } from './contract';
import type { JudgeMeasurement } from '../../core/judge/measurement';
import { belowPrecisionFloor } from '../../core/judge/calibration';
import type { JudgeEvaluationActivities } from '../../activities/judge/evaluation';
import { evaluationRun, specialistRow } from '../names';
import { STORAGE_ACTIVITY_RETRY } from '../retry';

/**
 * The judge measured every specialization round (CODA's reward rests on it): the round has the
 * judge label the rollouts of the real tasks its planner made when it was evaluated (the base row's
 * for the base planner, the evaluation of the round that trained it otherwise), whose evaluators
 * say what truly happened, and compares (core/judge/calibration.ts). No rollout is made for it. A
 * final-verdict precision below the run's judgePrecisionFloor stops the round before any dataset is
 * built from its verdicts.
 */

/** Raised when the judge's precision is below the floor: not retried, the measurement in its details. */
export const JUDGE_BELOW_FLOOR = 'JudgeBelowFloor';

export interface RoundBatch {
  readonly run: string;
  /** The batch's stage and planner (a real-task batch names them as the evaluation did, so its inputs are the evaluation's own). */
  readonly stage: 'specialization' | 'evaluation';
  readonly planner: { readonly name: string; readonly model: string };
  readonly attempts: number;
  readonly taskSet?: string;
  readonly taskIds?: readonly string[];
  /** Its judged steps train this and every later round. */
  readonly source: boolean;
}

/**
 * The rollouts of the real tasks by the planner the round rolls out with, as its evaluation made
 * them: the base row's run (baseEvaluationRun) for the base planner, which the first such round rolls
 * out before the evaluation reuses it, or the evaluation run of the round that trained the planner
 * (by the planner's name: a round that skipped training keeps the previous planner). The same batch
 * inputs as the evaluation's, so starting it again only awaits the finished rollouts: the judge is
 * measured on the evaluation's k attempts (evaluationTaskIds when the run names them, else all),
 * always; trained on only with includeSeeds (they are the evaluation set).
 */
export const realTaskBatch = (input: SpecializationInput, planner: CurrentPlanner): RoundBatch => ({
  ...(planner.checkpointKey === undefined
    ? { run: input.baseEvaluationRun, planner: { name: 'base', model: input.base.model } }
    : { run: evaluationRun(planner.name), planner: { name: specialistRow(input.software), model: planner.model } }),
  stage: 'evaluation',
  attempts: input.evaluationAttempts,
  ...(input.evaluationTaskIds === undefined ? {} : { taskIds: input.evaluationTaskIds }),
  source: input.includeSeeds,
});

const measuring = proxyActivities<JudgeEvaluationActivities>({
  startToCloseTimeout: '10 minutes',
  retry: STORAGE_ACTIVITY_RETRY,
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
