import { defineQuery, executeChild, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { EvaluationInput } from './contract';
import type { UnsupportedTask } from '../../core/report';
import type { ReportActivities, ReportSummary } from '../../activities/reports/activities';
import { rolloutBatch, type BatchResult } from '../rollout/batch';
import { failOnBadInput, inputs } from '../inputs';
import { batchWorkflowId, evaluationRowRun } from '../names';
import { tagWorkflow } from '../search-attributes';
import { STORAGE_ACTIVITY_RETRY } from '../retry';

export interface EvaluationProgress {
  readonly run: string;
  readonly series: string;
  /** Batches (planner x software) done, of `total`. */
  readonly completed: number;
  readonly total: number;
  readonly current?: string;
  readonly batches: ReadonlyArray<{ readonly planner: string; readonly software: string; readonly averageAtK: number; readonly passAtK: number }>;
}

export interface EvaluationResult extends ReportSummary {
  readonly run: string;
  readonly series: string;
}

export const evaluationProgress = defineQuery<EvaluationProgress>('progress');

const reports = proxyActivities<ReportActivities>({
  startToCloseTimeout: '10 minutes',
  retry: STORAGE_ACTIVITY_RETRY,
});

/**
 * Evaluates planner checkpoints on the real tasks (docs/method.md, "Evaluation"): for each planner and each
 * software (or the software a row names: a specialist on its own), k attempts of every task through a rollout batch (one after another, each keeping
 * every desktop busy), then a report in S3 — Average@k and Pass@k per software and overall, in the
 * layout of the paper's table 1, with intervals and every row compared with the `base` row — compared
 * with the previous report of the same series. The nightly schedule starts it; run again with the
 * same run id, it reuses every finished rollout, as does a row that names its own run.
 */
export async function evaluation(raw: unknown): Promise<EvaluationResult> {
  let input: EvaluationInput | undefined;
  let plan: Array<{ planner: EvaluationInput['planners'][number]; software: string }> = [];
  const done: Array<EvaluationProgress['batches'][number]> = [];
  const unsupported = new Map<string, UnsupportedTask>();
  let current: string | undefined;
  // Registered before anything is awaited, so a query right after the start is answered.
  setHandler(evaluationProgress, () => ({
    run: input?.run ?? '',
    series: input?.series ?? '',
    completed: done.length,
    total: plan.length,
    ...(current === undefined ? {} : { current }),
    batches: done,
  }));

  input = await failOnBadInput(() => inputs.resolveEvaluationInput(raw, workflowInfo().workflowId));
  const { run: evaluationRun, planners, software: softwares } = input;
  tagWorkflow({ software: softwares.join(','), stage: 'evaluation', run: evaluationRun });
  const createdAt = new Date().toISOString();
  const softwareOf = (planner: EvaluationInput['planners'][number]): string[] => planner.software ?? softwares;
  plan = planners.flatMap((planner) => softwareOf(planner).map((software) => ({ planner, software })));
  // A row that names its run keeps it (rolled out once, reused by later evaluations); the others are this evaluation's.
  const batchRun = (planner: EvaluationInput['planners'][number]): string => planner.run ?? (planners.length === 1 ? evaluationRun : evaluationRowRun(evaluationRun, planner.name));

  for (const { planner, software } of plan) {
    const run = batchRun(planner);
    current = batchWorkflowId(run, software);
    const result: BatchResult = await executeChild(rolloutBatch, {
      workflowId: current,
      args: [{ run, stage: 'evaluation', software, attempts: input.attempts, planner: { name: planner.name, model: planner.model }, ...(input.taskIds?.[software] === undefined ? {} : { taskIds: input.taskIds[software] }) }],
    });
    done.push({ planner: planner.name, software, averageAtK: result.averageAtK, passAtK: result.passAtK });
    for (const task of result.unsupported) unsupported.set(`${task.software}/${task.taskId}`, task);
  }
  current = undefined;
  const report = await reports.writeEvaluationReport({
    series: input.series,
    run: evaluationRun,
    k: input.attempts,
    createdAt,
    rows: planners.map((planner) => ({ planner: planner.name, model: planner.model, runs: Object.fromEntries(softwareOf(planner).map((s) => [s, batchRun(planner)])) })),
    unsupported: [...unsupported.values()],
  });
  return { run: evaluationRun, series: input.series, ...report };
}
