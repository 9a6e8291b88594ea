import { defineQuery, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { TaskGenerationInput } from './contract';
import { FAILURES } from '../../core/failures';
import type { TaskActivities } from '../../activities/tasks/activities';
import type { TaskSetSummary } from '../../activities/tasks/generation';
import { failOnBadInput, inputs } from '../inputs';
import { tagWorkflow } from '../search-attributes';

export interface TaskGenerationProgress {
  readonly status: 'starting' | 'generating' | 'finished';
  readonly software: string;
  readonly version: string;
  /** 0 until the set is written, then 1 (of `total` 1): the requests happen inside one activity. */
  readonly completed: number;
  readonly total: number;
  readonly result?: TaskSetSummary;
}

export const taskGenerationProgress = defineQuery<TaskGenerationProgress>('progress');

const tasks = proxyActivities<TaskActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '5 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 5, nonRetryableErrorTypes: [FAILURES.validation, FAILURES.modelRequest] },
});

/**
 * A versioned task set of one software written by the task-generator model from the real
 * ScienceBoard tasks (activities/tasks/generation.ts): tasks/{software}/sets/{version}/ in S3,
 * one JSON per task and a manifest with provenance and counts. A damaged reply is recorded and
 * skipped, never a failure; generating a version that exists returns it as it is.
 */
export async function taskGeneration(raw: unknown): Promise<TaskSetSummary> {
  let input: TaskGenerationInput | undefined;
  let result: TaskSetSummary | undefined;
  // Registered before anything is awaited, so a query right after the start is answered.
  setHandler(taskGenerationProgress, () => ({
    status: input === undefined ? 'starting' : result === undefined ? 'generating' : 'finished',
    software: input?.software ?? '',
    version: input?.version ?? '',
    completed: result === undefined ? 0 : 1,
    total: 1,
    ...(result === undefined ? {} : { result }),
  }));
  const resolved = await failOnBadInput(() => inputs.resolveTaskGenerationInput(raw, workflowInfo().workflowId));
  input = resolved;
  tagWorkflow({ software: resolved.software, stage: 'task-generation', run: resolved.version });
  result = await failOnBadInput(() => tasks.generateTaskSet(resolved));
  return result;
}
