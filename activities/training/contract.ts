import type { RoundTaskSet } from '../../core/training';

/**
 * What the orchestrator's workflows ask of the GPU side (the `gpu` task queue, workers/gpu.ts):
 * train a planner checkpoint from a dataset in S3, and register a checkpoint with the planner's
 * model server so rollouts can ask for it by name. The datasets and checkpoints they exchange
 * are described in core/training.ts; their keys in core/keys.ts.
 */

export interface TrainRequest {
  /** The training job, unique per training (a retry, on any GPU worker, resumes it from its last uploaded checkpoint). */
  readonly job: string;
  readonly kind: 'grpo' | 'sft';
  /** S3 key of the dataset's manifest (core/training.ts datasetManifestSchema). */
  readonly datasetKey: string;
  /** The name of the checkpoint to produce: its key segment and the model name it is served under. */
  readonly checkpoint: string;
  /** Where training starts: the base planner of temporal.yaml, or a parent checkpoint. */
  readonly base: { readonly model: string; readonly path: string };
  /** The parent checkpoint's manifest key (lineage), when training continues from one. */
  readonly parent?: string;
  /** The specialization rounds' task sets behind the new checkpoint, recorded in its manifest (core/training.ts). */
  readonly taskSets?: readonly RoundTaskSet[];
}

export interface TrainResult {
  /** S3 key of the new checkpoint's manifest (core/training.ts checkpointManifestSchema). */
  readonly checkpointKey: string;
  readonly steps: number;
  /** The trainer's last reported figures (reward mean, policy loss, loss, ...). */
  readonly metrics: Readonly<Record<string, number>>;
  /** The trainer step a retry resumed from, when it did. */
  readonly resumedFromStep?: number;
}

export interface ServeResult {
  /** The model name rollouts ask the planner endpoint for from now on. */
  readonly model: string;
}

/** The activities of the `gpu` task queue. */
export interface TrainingActivities {
  train(request: TrainRequest): Promise<TrainResult>;
  servePlanner(request: { readonly checkpointKey: string }): Promise<ServeResult>;
}

/**
 * The file the trainer doubles (doubles/trainers/) leave in every model folder they write: the
 * checkpoint manifest records such a checkpoint as a double's (its planner did not change).
 */
export const TRAINER_DOUBLE_MARKER = 'coda-trainer-double.json';
