import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import { FAILURES } from '../../core/failures';
import { parseGlobalStepLine, trainerLogProgress, type TrainerProgress } from '../../core/trainer-progress';
import type { ObjectStore } from '../storage/object-store';
import { uploadCheckpoint } from './checkpoints';
import type { TrainingHeartbeat } from './progress';
import type { TrainerInputs } from './trainer-inputs';
import { logTail, startTrainer, type TrainerCommand, type TrainerProcess } from './trainer-process';

export interface Supervision {
  readonly kind: 'grpo' | 'sft';
  readonly command: TrainerCommand;
  readonly inputs: TrainerInputs;
  readonly store: ObjectStore;
  readonly jobPrefix: string;
  /** The trainer's log: uploaded as `logs/attempt-{attempt}.log` when it ends, however it ends. */
  readonly logFile: string;
  readonly attempt: number;
  readonly pollMs: number;
  readonly graceMs: number;
  readonly signal: AbortSignal;
  readonly update: (change: Partial<TrainingHeartbeat>) => void;
  readonly current: () => TrainingHeartbeat;
}

/**
 * Runs the trainer to its end: its progress into the heartbeat (the Global step lines of OpenRLHF,
 * and of infra/trainers/trl_grpo.py, from its output, LLaMA-Factory's trainer_log.jsonl from its output folder), every new complete
 * checkpoint to S3 as it appears, and on cancellation its process group stopped before this
 * returns. Its last progress; throws when the trainer fails (exit 2, argparse refusing the command
 * line, is not retried) or was cancelled.
 */
export async function superviseTrainer(s: Supervision): Promise<TrainerProgress | undefined> {
  let progress: TrainerProgress | undefined;
  const onProgress = (next: TrainerProgress | undefined): void => {
    if (next === undefined || (progress !== undefined && next.step === progress.step && JSON.stringify(next.metrics) === JSON.stringify(progress.metrics))) return;
    progress = next;
    s.update({ step: next.step, metrics: next.metrics, ...(next.totalSteps === undefined ? {} : { totalSteps: next.totalSteps }) });
  };
  const readTrainerLog = (): void => {
    const file = path.join(s.inputs.outputDir, 'trainer_log.jsonl');
    if (s.kind !== 'sft' || !existsSync(file)) return;
    onProgress(trainerLogProgress(readFileSync(file, 'utf8')));
  };
  const uploadNewest = async (): Promise<void> => {
    const newest = s.inputs.layout.latest(s.inputs.checkpointRoot);
    if (newest === undefined || newest.step <= (s.current().uploadedStep ?? -1)) return;
    const step = await uploadCheckpoint(s.store, s.jobPrefix, s.inputs.checkpointRoot, newest);
    if (step !== undefined) s.update({ uploadedStep: step });
  };

  mkdirSync(path.dirname(s.logFile), { recursive: true });
  s.signal.throwIfAborted();
  const trainer: TrainerProcess = startTrainer(s.command, s.logFile, (line) => s.kind === 'grpo' && onProgress(parseGlobalStepLine(line)));
  s.update({ trainerPid: trainer.pid });
  let uploading: Promise<void> = Promise.resolve();
  const poll = setInterval(() => {
    readTrainerLog();
    uploading = uploading.then(uploadNewest).catch((err: Error) => console.warn(`${s.jobPrefix}: a checkpoint upload failed, trying again: ${err.message}`));
  }, s.pollMs);
  const stop = (): void => void trainer.stop(s.graceMs);
  s.signal.addEventListener('abort', stop, { once: true });
  let exit: Awaited<TrainerProcess['exited']>;
  try {
    exit = await trainer.exited;
  } finally {
    clearInterval(poll);
    s.signal.removeEventListener('abort', stop);
    await uploading;
    await s.store.putFile(`${s.jobPrefix}/logs/attempt-${s.attempt}.log`, s.logFile).catch(() => undefined);
  }
  if (s.signal.aborted) {
    // Whatever the trainer started is gone too before the cancellation is reported.
    await trainer.stop(s.graceMs);
    throw s.signal.reason ?? new Error('cancelled');
  }
  if (exit.code !== 0) {
    const message = `the ${s.inputs.trainer} trainer exited with ${exit.code ?? exit.signal}; last lines of its log:\n${logTail(s.logFile)}`;
    throw exit.code === 2 ? ApplicationFailure.nonRetryable(message, FAILURES.trainerFailed) : ApplicationFailure.retryable(message, FAILURES.trainerFailed);
  }
  readTrainerLog();
  await uploadNewest();
  return progress;
}
