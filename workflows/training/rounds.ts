import { ActivityCancellationType, executeChild, proxyActivities } from '@temporalio/workflow';
import type { CollectedRound, CurrentPlanner, RoundRecord, SpecializationInput } from './contract';
import type { JudgeMeasurement } from '../../core/judge/measurement';
import type { RoundTaskSet } from '../../core/training';
import { FAILURES } from '../../core/failures';
import type { DatasetActivities } from '../../activities/datasets/activities';
import type { TrainingActivities, TrainRequest } from '../../activities/training/contract';
import type { TaskSetSummary } from '../../activities/tasks/generation';
import { rolloutBatch, type BatchResult } from '../rollout/batch';
import { evaluation, type EvaluationResult } from '../evaluation/evaluation';
import { judgeRun, type JudgeRunResult } from '../judging/judge';
import { belowFloorFailure, measureJudge, realTaskBatch, type RoundBatch } from './judge-check';
import { batchWorkflowId, evaluationRun, evaluationWorkflowId, generatedRun, judgeRunWorkflowId, roundId, seriesName, specialistRow, taskGenerationWorkflowId } from '../names';
import { taskGeneration } from '../tasks/task-generation';
import type { SpecializationStage } from './progress';

/**
 * A specialization round's two halves (workflows/training/specialization.ts runs them, one after the other or,
 * at maxStaleness 1, the next round's collection beside this round's training): the collection
 * (task generation, rollouts, judging) and the training (dataset, GRPO on the gpu queue, serving,
 * evaluation). Every child and activity has a deterministic id or is idempotent, so a replayed or
 * retried round continues where it was.
 */

export const datasets = proxyActivities<DatasetActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '5 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10, nonRetryableErrorTypes: [FAILURES.validation] },
});

/** The gpu queue's activities; training waits for its trainer to stop when cancelled. */
export const gpu = (queue: string, heartbeatTimeoutSeconds = 300) =>
  proxyActivities<TrainingActivities>({
    taskQueue: queue,
    startToCloseTimeout: '7 days',
    heartbeatTimeout: heartbeatTimeoutSeconds * 1000,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    // A GPU worker that dies is noticed by the heartbeat timeout; the retry, on any GPU worker,
    // resumes from the last checkpoint uploaded to S3.
    retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 20, nonRetryableErrorTypes: [FAILURES.validation] },
  });

/** A round in flight: its stage, its counts so far, its judge once measured, and why it stopped before training. */
export interface RoundState {
  stage: SpecializationStage;
  readonly counts: { tasks: number; rollouts: number; judged: number; positiveSteps: number; samples: number };
  judge?: JudgeMeasurement;
  stopped?: string;
}

export const emptyCounts = (): RoundState['counts'] => ({ tasks: 0, rollouts: 0, judged: 0, positiveSteps: 0, samples: 0 });

/**
 * A round's collection stages: generate tasks (shown the earlier rounds' sets and verdicts) →
 * roll them out with `rollout`, the planner served now → judge them, and the real tasks'
 * rollouts of that planner to measure the judge. `previous` is the round before's collection when
 * it is still in this run: the same planner's real-task batch, rolled out and judged there, is
 * not started again (the evaluation in flight starts that batch id too).
 */
/**
 * The task sets of a run's rounds and the runs their tasks were rolled out and judged in (a round
 * whose set kept no task rolled nothing out).
 */
export function roundTaskSets(run: string, rounds: ReadonlyArray<{ round: number; sources: readonly string[] }>): RoundTaskSet[] {
  return rounds.map((e) => {
    const set = roundId(run, e.round);
    return { set, round: e.round, ...(e.sources.includes(generatedRun(set)) ? { rollouts: generatedRun(set) } : {}) };
  });
}

export async function collectRound(resolved: SpecializationInput, r: number, rollout: CurrentPlanner, earlier: ReadonlyArray<{ round: number; sources: readonly string[] }>, state: RoundState, previous?: CollectedRound): Promise<CollectedRound> {
  const { run, software } = resolved;
  const id = roundId(run, r);
  const counts = state.counts;
  state.stage = 'task-generation';
  // The generator is shown the earlier rounds' sets, solved or not, and repeats are dropped.
  const earlierSets = roundTaskSets(run, earlier);
  const set: TaskSetSummary = await executeChild(taskGeneration, {
    workflowId: taskGenerationWorkflowId(software, id),
    args: [{ software, version: id, count: resolved.tasksPerRound, ...(earlierSets.length === 0 ? {} : { earlier: earlierSets }) }],
  });
  counts.tasks = set.counts.kept;

  state.stage = 'rollouts';
  // The real tasks' batch is the planner's evaluation batch: the base row's, rolled out here first
  // and reused by the evaluation, or the previous evaluation's, whose finished rollouts are only awaited.
  const real = realTaskBatch(resolved, rollout);
  const reused = previous !== undefined && previous.real.run === real.run ? previous.real : undefined;
  const generated: RoundBatch = { run: generatedRun(id), stage: 'specialization', planner: { name: rollout.name, model: rollout.model }, taskSet: id, attempts: resolved.attempts, source: true };
  const batches: RoundBatch[] = [...(set.counts.kept > 0 ? [generated] : []), real];
  const started = batches.filter((b) => reused === undefined || b !== real);
  const realCounts = { rollouts: reused?.rollouts ?? 0, judged: reused?.judged ?? 0 };
  counts.rollouts += realCounts.rollouts;
  for (const batch of started) {
    const result: BatchResult = await executeChild(rolloutBatch, {
      workflowId: batchWorkflowId(batch.run, software),
      args: [{ run: batch.run, stage: batch.stage, software, attempts: batch.attempts, planner: { ...batch.planner }, ...(batch.taskSet === undefined ? {} : { taskSet: batch.taskSet }), ...(batch.taskIds === undefined ? {} : { taskIds: [...batch.taskIds] }) }],
    });
    counts.rollouts += result.completed;
    if (batch === real) realCounts.rollouts = result.completed;
  }

  state.stage = 'judging';
  counts.judged += realCounts.judged;
  for (const batch of started) {
    const judged: JudgeRunResult = await executeChild(judgeRun, {
      workflowId: judgeRunWorkflowId(batch.run, software),
      args: [{ run: batch.run, software, ...(resolved.judging === undefined ? {} : { plan: resolved.judging }) }],
    });
    counts.judged += judged.judged;
    if (batch === real) realCounts.judged = judged.judged;
  }
  const judge = await measureJudge(resolved, r, real);
  state.judge = judge;
  const belowFloor = belowFloorFailure(resolved, r, judge);
  if (belowFloor !== undefined) {
    state.stopped = belowFloor.message;
    throw belowFloor;
  }
  return {
    round: r,
    planner: rollout,
    tasks: counts.tasks,
    rollouts: counts.rollouts,
    judged: counts.judged,
    trainedOn: batches.filter((b) => b.source).map((b) => b.run),
    real: { run: real.run, ...realCounts },
    judge,
  };
}

/**
 * A round's training stages on its collection: a GRPO dataset of the approved steps of every
 * round so far → train from `parent`'s lineage on the gpu queue → serve the new checkpoint →
 * evaluate it on the real tasks beside the base planner. Its record, and the planner after it.
 */
export async function trainRound(resolved: SpecializationInput, r: number, parent: CurrentPlanner, collected: CollectedRound, earlier: readonly RoundRecord[], state: RoundState): Promise<{ next: CurrentPlanner; record: RoundRecord }> {
  const { run, software } = resolved;
  const id = roundId(run, r);
  const counts = state.counts;
  state.stage = 'dataset';
  // Every round trains the base planner on the prompts of every round so far (OpenRLHF starts GRPO
  // from full weights, not from the previous round's LoRA adapter); GRPO samples its answers from
  // the policy being trained, so older rounds' prompts are as good as new ones, and the latest
  // specialist's rollouts bring the tasks it now gets right.
  const sources = [...earlier.flatMap((e) => e.sources), ...collected.trainedOn];
  const dataset = await datasets.buildDataset({ id, kind: 'grpo', sources: sources.map((source) => ({ run: source, software })) });
  counts.samples = dataset.rows;
  // Steps the judge approved this round (the dataset holds the earlier rounds' too).
  counts.positiveSteps = Math.max(0, dataset.rows - (earlier.at(-1)?.samples ?? 0));

  let next = parent;
  let skipped: string | undefined;
  if (counts.positiveSteps === 0) {
    skipped = 'the judge approved no new step this round: the planner stays as it was';
  } else {
    state.stage = 'training';
    // The checkpoint records the rounds' task sets behind it, for a generalization to generate away from.
    const taskSets = roundTaskSets(run, [...earlier, { round: r, sources: collected.trainedOn }]);
    const request: TrainRequest = { job: id, kind: 'grpo', datasetKey: dataset.key, checkpoint: id, base: resolved.base, taskSets, ...(parent.checkpointKey === undefined ? {} : { parent: parent.checkpointKey }) };
    const trained = await gpu(resolved.gpuQueue, resolved.gpuHeartbeatTimeoutSeconds).train(request);
    state.stage = 'serving';
    const served = await gpu(resolved.gpuQueue, resolved.gpuHeartbeatTimeoutSeconds).servePlanner({ checkpointKey: trained.checkpointKey });
    next = { name: id, model: served.model, checkpointKey: trained.checkpointKey };
  }

  state.stage = 'evaluation';
  const specialistName = specialistRow(software);
  const report: EvaluationResult = await executeChild(evaluation, {
    workflowId: evaluationWorkflowId(id),
    // One row name for every round, so each report's diff is the change since the previous round;
    // the base row's rollouts are made once per run and reused, so every round is compared with the same base.
    args: [{ run: evaluationRun(id), series: seriesName('specialization', run), software: [software], attempts: resolved.evaluationAttempts, ...(resolved.evaluationTaskIds === undefined ? {} : { taskIds: { [software]: [...resolved.evaluationTaskIds] } }), planners: [{ name: 'base', model: resolved.base.model, run: resolved.baseEvaluationRun }, { name: specialistName, model: next.model, run: evaluationRun(id) }] }],
  });
  const figures = report.rows.find((row) => row.planner === specialistName);
  const baseFigures = report.rows.find((row) => row.planner === 'base');
  const record: RoundRecord = {
    round: r,
    checkpoint: next.name,
    tasks: collected.tasks,
    rollouts: collected.rollouts,
    judged: collected.judged,
    positiveSteps: counts.positiveSteps,
    samples: counts.samples,
    sources: collected.trainedOn,
    averageAtK: figures?.averageAtK[software] ?? 0,
    passAtK: figures?.passAtK[software] ?? 0,
    ...(figures?.averageInterval?.[software] === undefined ? {} : { averageInterval: figures.averageInterval[software] }),
    ...(baseFigures?.averageAtK[software] === undefined ? {} : { baseAverageAtK: baseFigures.averageAtK[software] }),
    ...(figures?.vsBase?.[software] === undefined ? {} : { vsBase: figures.vsBase[software] }),
    ...(figures?.appNotRunning?.[software] === undefined ? {} : { appNotRunning: figures.appNotRunning[software] }),
    reportKey: report.key,
    rolloutPlanner: collected.planner.name,
    ...(skipped === undefined ? {} : { skipped }),
    judge: collected.judge,
  };
  return { next, record };
}
