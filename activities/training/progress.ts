/**
 * The heartbeat details of a `train` activity, in one place so what is written is what is read
 * (the Web UI's pending activity, `coda progress`, the tests). A retry does not resume from these:
 * the checkpoints in S3 are the truth; they tell an operator where training stands and where it runs.
 */
export interface TrainingHeartbeat {
  readonly phase: 'waiting for the GPU' | 'preparing' | 'restoring' | 'training' | 'uploading';
  /** The trainer's last reported step, and how many it will take when that is known. */
  readonly step: number;
  readonly totalSteps?: number;
  /** The trainer's last reported figures (policy loss, reward mean, loss, learning rate...). */
  readonly metrics: Readonly<Record<string, number>>;
  /** The newest checkpoint in S3: where a retry on any GPU worker resumes. */
  readonly uploadedStep?: number;
  /** The checkpoint this attempt resumed from. */
  readonly resumedFromStep?: number;
  /** The GPU worker's host and the trainer's pid (it leads its own process group). */
  readonly host: string;
  readonly trainerPid?: number;
}
