import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { configRelative, type Env, type LoadedConfig } from '../../config/load';
import { FAILURES } from '../../core/failures';
import { checkpointManifestKey, checkpointPrefix, keySegment, trainingJobPrefix } from '../../core/keys';
import { CHECKPOINT_SCHEMA, checkpointManifestSchema, type CheckpointManifest } from '../../core/training';
import { parseOrThrow, ValidationError } from '../../core/validation';
import { Limiter } from '../concurrency';
import type { TrainerMetrics } from '../metrics';
import type { ObjectStore } from '../storage/object-store';
import { restoreCheckpoint, uploadedStep, uploadFolder } from './checkpoints';
import { TRAINER_DOUBLE_MARKER, type ServeResult, type TrainingActivities, type TrainRequest, type TrainResult } from './contract';
import type { TrainingHeartbeat } from './progress';
import { TRAINER_TOKEN_ENV } from './reward-service';
import { registerPlanner } from './serving';
import { prepareDataset, writeGrpoInputs, writeSftInputs, type StartingWeights, type TrainerInputs } from './trainer-inputs';
import { superviseTrainer } from './supervise';

export interface TrainingDeps {
  readonly config: LoadedConfig;
  readonly store: ObjectStore;
  /** Environment of the trainers (on top of the worker's own and the trainer's `env` of temporal.yaml). */
  readonly env: Env;
  /** This worker's reward service: its URL, without credentials, for the trainer's command line ({rewardUrl}), and its token, for the trainer's environment only. */
  readonly rewardUrl: string;
  readonly rewardToken?: string;
  /** Where the trainers' last step and figures are recorded. */
  readonly metrics: TrainerMetrics;
}

/**
 * A trainer's environment: the worker's, the deployment's and the trainer's own, and the reward
 * service's token in TRAINER_TOKEN_ENV when it has one (never a token left from elsewhere): the
 * environment, which only the trainer's user reads, is how secrets reach it, never its command line.
 */
function trainerEnv(deps: TrainingDeps, own: Readonly<Record<string, string>>): Record<string, string> {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), ...(deps.env as Record<string, string>), ...own };
  delete env[TRAINER_TOKEN_ENV];
  return deps.rewardToken === undefined ? env : { ...env, [TRAINER_TOKEN_ENV]: deps.rewardToken };
}

/** Bad requests fail at once, naming the field. */
function checkRequest(request: TrainRequest): void {
  const problems: string[] = [];
  for (const [field, value, what] of [['job', request.job, 'training job id'], ['checkpoint', request.checkpoint, 'checkpoint name']] as const) {
    try {
      keySegment(value, what);
    } catch (err) {
      problems.push(`${field}: ${(err as Error).message}`);
    }
  }
  if (request.kind !== 'grpo' && request.kind !== 'sft') problems.push(`kind: expected grpo or sft, got ${JSON.stringify(request.kind)}`);
  if (typeof request.datasetKey !== 'string' || request.datasetKey === '') problems.push('datasetKey: expected the S3 key of a dataset manifest');
  if (typeof request.base?.model !== 'string' || typeof request.base?.path !== 'string' || request.base.path === '') problems.push('base: expected {model, path}');
  if (problems.length > 0) throw new ValidationError('train request', problems);
}

const nonRetryable = (err: unknown): unknown =>
  err instanceof ValidationError ? ApplicationFailure.nonRetryable(err.message, FAILURES.validation) : err;

/** What the training activities of one worker share. */
interface Worker {
  readonly deps: TrainingDeps;
  readonly workDir: string;
  /** The GPUs: as many jobs train at once as temporal.yaml `training.jobs`. */
  readonly gpu: Limiter;
}

/** The job's request, recorded by its first attempt: a retry must train the same thing. */
async function claimJob(store: ObjectStore, request: TrainRequest, jobPrefix: string): Promise<void> {
  const key = `${jobPrefix}/request.json`;
  const existing = await store.tryGet(key);
  if (existing === undefined) return store.putJson(key, request);
  if (JSON.stringify(JSON.parse(existing.toString('utf8'))) !== JSON.stringify(request)) {
    throw new ValidationError(`training job ${request.job}`, [`was started with another request (${store.uri(key)}); a job id trains one thing`]);
  }
}

/**
 * The weights training starts from, on this node: a path or HF id as given, or an S3 prefix (a
 * parent checkpoint's files) downloaded once. A parent that is a LoRA adapter is loaded on its own
 * base by LLaMA-Factory (adapter_name_or_path); OpenRLHF cannot start from an adapter.
 */
async function startingWeights({ deps: { config, store }, workDir }: Worker, request: TrainRequest, signal: AbortSignal): Promise<StartingWeights> {
  const { base } = request;
  const match = /^s3:\/\/([^/]+)\/(.+?)\/?$/.exec(base.path);
  if (match === null) return { model: base.path };
  const [, bucket, prefix] = match as unknown as [string, string, string];
  if (bucket !== config.storage.bucket) throw new ValidationError('base.path', [`${base.path}: expected a key in bucket ${config.storage.bucket}`]);
  const dir = path.join(workDir, 'models', createHash('sha1').update(base.path).digest('hex').slice(0, 16));
  if (!existsSync(path.join(dir, '.complete'))) {
    if ((await store.getFolder(prefix, dir, signal)).length === 0) throw new ValidationError('base.path', [`${base.path}: no files there`]);
    writeFileSync(path.join(dir, '.complete'), base.path);
  }
  const adapterConfig = path.join(dir, 'adapter_config.json');
  if (!existsSync(adapterConfig)) return { model: dir };
  if (request.kind === 'grpo') {
    throw new ValidationError('base.path', [`${base.path} is a LoRA adapter: OpenRLHF starts from full weights (merge it first, python -m openrlhf.cli.lora_combiner, and train from the merged weights)`]);
  }
  const { base_model_name_or_path: model } = JSON.parse(readFileSync(adapterConfig, 'utf8')) as { base_model_name_or_path?: string };
  if (typeof model !== 'string') throw new ValidationError(adapterConfig, ['base_model_name_or_path: expected the model the adapter was trained on']);
  return { model, adapter: dir };
}

/** A job's heartbeat, sent on every change and every `training.heartbeatSeconds` in between, and its figures recorded. */
function heartbeats(worker: Worker, request: TrainRequest): { update: (change: Partial<TrainingHeartbeat>) => void; current: () => TrainingHeartbeat; stop: () => void } {
  const ctx = Context.current();
  const { metrics } = worker.deps;
  let beat: TrainingHeartbeat = { phase: 'waiting for the GPU', step: 0, metrics: {}, host: hostname() };
  const update = (change: Partial<TrainingHeartbeat>): void => {
    beat = { ...beat, ...change };
    ctx.heartbeat(beat);
    if (change.step !== undefined) metrics.step.set({ job: request.job, kind: request.kind }, change.step);
    for (const [name, value] of Object.entries(change.metrics ?? {})) metrics.figure.set({ job: request.job, name }, value);
  };
  const timer = setInterval(() => ctx.heartbeat(beat), worker.deps.config.training.heartbeatSeconds * 1000);
  return { update, current: () => beat, stop: () => clearInterval(timer) };
}

async function train(worker: Worker, request: TrainRequest): Promise<TrainResult> {
  const { config, store, metrics } = worker.deps;
  checkRequest(request);
  const checkpointKey = checkpointManifestKey(config.storage.prefix, request.checkpoint);
  const jobPrefix = trainingJobPrefix(config.storage.prefix, request.job);
  const done = await store.tryGet(checkpointKey);
  if (done !== undefined) {
    const manifest = parseOrThrow(checkpointManifestSchema, JSON.parse(done.toString('utf8')), checkpointKey);
    if (manifest.job !== request.job) throw new ValidationError(`checkpoint ${request.checkpoint}`, [`already exists, trained by job ${manifest.job}`]);
    return { checkpointKey, steps: manifest.steps, metrics: manifest.metrics };
  }
  await claimJob(store, request, jobPrefix);
  const beats = heartbeats(worker, request);
  try {
    beats.update({});
    return await worker.gpu.run(async () => {
      metrics.running.inc({ kind: request.kind });
      try {
        return await runJob(worker, { request, jobPrefix, checkpointKey }, beats);
      } finally {
        metrics.running.dec({ kind: request.kind });
      }
    });
  } finally {
    beats.stop();
  }
}

interface Job {
  readonly request: TrainRequest;
  readonly jobPrefix: string;
  readonly checkpointKey: string;
}

type Beats = Pick<ReturnType<typeof heartbeats>, 'update' | 'current'>;

/** Downloads the dataset and the starting weights, restores the newest checkpoint, runs the trainer, uploads and records its output. */
async function runJob(worker: Worker, job: Job, { update, current }: Beats): Promise<TrainResult> {
  const { deps, workDir } = worker;
  const { request, jobPrefix } = job;
  const { store, config } = deps;
  const training = config.training;
  const ctx = Context.current();
  const signal = ctx.cancellationSignal;
  signal.throwIfAborted();
  update({ phase: 'preparing', uploadedStep: await uploadedStep(store, jobPrefix) });
  const jobDir = path.join(workDir, 'jobs', request.job);
  const folders = { inputs: path.join(jobDir, 'inputs'), checkpoints: path.join(jobDir, 'checkpoints'), output: path.join(jobDir, 'output') };
  // S3 is the truth of what is done: whatever an earlier attempt left on this node goes.
  rmSync(jobDir, { recursive: true, force: true });
  const dataset = await prepareDataset(store, request.datasetKey, path.join(workDir, 'datasets'), signal);
  if (dataset.manifest.kind !== request.kind) throw new ValidationError(request.datasetKey, [`a ${dataset.manifest.kind} dataset cannot train ${request.kind}`]);
  const weights = await startingWeights(worker, request, signal);

  update({ phase: 'restoring' });
  const resumedFrom = await restoreCheckpoint(store, jobPrefix, request.kind === 'grpo' ? folders.checkpoints : folders.output);
  const inputs: TrainerInputs =
    request.kind === 'grpo' ? writeGrpoInputs(training.grpo, dataset, folders, weights.model, deps.rewardUrl) : writeSftInputs(training.sft, dataset, folders, weights, resumedFrom, config.models.planner.image);
  const settings = request.kind === 'grpo' ? training.grpo : training.sft;
  update({ phase: 'training', step: resumedFrom ?? 0, ...(inputs.totalSteps === undefined ? {} : { totalSteps: inputs.totalSteps }), ...(resumedFrom === undefined ? {} : { resumedFromStep: resumedFrom, uploadedStep: resumedFrom }) });

  const progress = await superviseTrainer({
    kind: request.kind,
    command: {
      program: settings.program.trim().split(/\s+/),
      args: inputs.args,
      env: trainerEnv(deps, settings.env),
      cwd: jobDir,
      // A trainer that prints its environment or the URL its launcher completed must not put the token into the log.
      hidden: deps.rewardToken === undefined ? [] : [deps.rewardToken],
    },
    inputs,
    store,
    jobPrefix,
    logFile: path.join(jobDir, 'trainer.log'),
    attempt: ctx.info.attempt,
    pollMs: training.checkpointPollSeconds * 1000,
    graceMs: training.cancelGraceSeconds * 1000,
    signal,
    update,
    current,
  });

  update({ phase: 'uploading' });
  const result = await recordCheckpoint(worker, job, { inputs, sources: dataset.manifest.sources, steps: Math.max(progress?.step ?? 0, resumedFrom ?? 0), metrics: progress?.metrics ?? {} });
  rmSync(jobDir, { recursive: true, force: true });
  return { ...result, ...(resumedFrom === undefined ? {} : { resumedFromStep: resumedFrom }) };
}

/** Uploads what the trainer wrote and records the checkpoint's manifest with its lineage. */
async function recordCheckpoint(
  { deps: { config, store } }: Worker,
  { request, checkpointKey }: Job,
  trained: { inputs: TrainerInputs; sources: CheckpointManifest['sources']; steps: number; metrics: CheckpointManifest['metrics'] },
): Promise<TrainResult> {
  const { inputs, steps } = trained;
  const filesPrefix = `${checkpointPrefix(config.storage.prefix, request.checkpoint)}/files`;
  const files = await uploadFolder(store, inputs.outputDir, filesPrefix, inputs.outputSkip);
  if (files.length === 0) throw ApplicationFailure.retryable(`the trainer exited 0 but wrote nothing to ${inputs.outputDir}`, FAILURES.trainerFailed);
  const manifest: CheckpointManifest = {
    schema: CHECKPOINT_SCHEMA,
    name: request.checkpoint,
    kind: request.kind,
    createdAt: new Date().toISOString(),
    ...(request.parent === undefined ? {} : { parent: request.parent }),
    base: request.base,
    dataset: request.datasetKey,
    sources: trained.sources,
    job: request.job,
    ...(request.taskSets === undefined ? {} : { taskSets: [...request.taskSets] }),
    steps,
    metrics: trained.metrics,
    lora: inputs.lora,
    filesPrefix,
    double: files.includes(TRAINER_DOUBLE_MARKER),
  };
  await store.putJson(checkpointKey, parseOrThrow(checkpointManifestSchema, manifest, checkpointKey));
  return { checkpointKey, steps, metrics: manifest.metrics };
}

/**
 * The activities of the `gpu` queue (contract.ts). `train` downloads the dataset, writes the
 * trainer's inputs, restores the job's newest checkpoint from S3, runs the trainer from its
 * command template (trainer-process.ts), uploads checkpoints as they appear and heartbeats the
 * trainer's progress; at the end it uploads the model and writes the checkpoint manifest with its
 * lineage. A retry, on this worker or another, resumes from the newest uploaded checkpoint.
 * Cancellation stops the trainer's process group. `servePlanner` registers a checkpoint with the
 * planner's model server (serving.ts).
 */
export function createTrainingActivities(deps: TrainingDeps): TrainingActivities {
  const worker: Worker = { deps, workDir: configRelative(deps.config, deps.config.training.workDir), gpu: new Limiter(deps.config.training.jobs) };
  return {
    async train(request) {
      try {
        return await train(worker, request);
      } catch (err) {
        throw nonRetryable(err);
      }
    },
    async servePlanner(request): Promise<ServeResult> {
      try {
        return await registerPlanner(deps.config, deps.store, request.checkpointKey, deps.env);
      } catch (err) {
        throw nonRetryable(err);
      }
    },
  };
}
