import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import type { ServeResult, TrainingActivities, TrainRequest, TrainResult } from '../../activities/training/contract';
import type { DatasetActivities, DatasetRequest, DatasetSummary } from '../../activities/datasets/activities';

/**
 * Test workflows that call the `gpu` queue's activities the way the training workflows do, so the
 * GPU worker is tested on the real Temporal server (retries on another worker, heartbeats,
 * cancellation) without the orchestrator's workflows; and the datasets activity, for a test that
 * composes a stage of its own from the pipeline's parts.
 */

export interface TrainOnGpuInput {
  readonly request: TrainRequest;
  readonly gpuQueue: string;
  readonly heartbeatTimeoutSeconds: number;
  readonly maximumAttempts: number;
}

export async function trainOnGpu(input: TrainOnGpuInput): Promise<TrainResult> {
  const { train } = proxyActivities<TrainingActivities>({
    taskQueue: input.gpuQueue,
    startToCloseTimeout: '1 hour',
    heartbeatTimeout: `${input.heartbeatTimeoutSeconds} seconds`,
    retry: { initialInterval: '1 second', maximumAttempts: input.maximumAttempts },
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  });
  return train(input.request);
}

export async function servePlannerOnGpu(input: { readonly checkpointKey: string; readonly gpuQueue: string }): Promise<ServeResult> {
  const { servePlanner } = proxyActivities<TrainingActivities>({ taskQueue: input.gpuQueue, startToCloseTimeout: '5 minutes', retry: { maximumAttempts: 2 } });
  return servePlanner({ checkpointKey: input.checkpointKey });
}

/** The datasets activity on the orchestrator queue, as a training workflow builds a dataset. */
export async function buildDatasetOnOrchestrator(input: { readonly request: DatasetRequest; readonly queue: string }): Promise<DatasetSummary> {
  const { buildDataset } = proxyActivities<DatasetActivities>({ taskQueue: input.queue, startToCloseTimeout: '10 minutes', heartbeatTimeout: '2 minutes', retry: { maximumAttempts: 2 } });
  return buildDataset(input.request);
}
