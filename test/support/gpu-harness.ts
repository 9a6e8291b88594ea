import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import assert from 'node:assert/strict';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import type { TrainRequest, TrainResult } from '../../activities/training/contract';
import type { LoadedConfig } from '../../config/load';
import type { TrainingHeartbeat } from '../../activities/training/progress';
import { startDaemon, stopDaemon } from '../../infra/daemon';
import { workerSpec } from '../../infra/worker-process';
import { createGpuWorker, type GpuWorker } from '../../workers/gpu';
import { startHarness, type Harness, type HarnessOptions } from './harness';
import { eventually, waitForPoller } from './rollouts';
import { freePort, quietLogger } from '../stack';
import { recordTrajectory, writeDataset, type RecordedTrajectory } from '../training/dataset';
import type { TrainOnGpuInput } from '../training/workflows';

/**
 * The GPU side on the shared Temporal and MinIO: a harness of its own (rollouts/harness.ts: config,
 * queues, the scripted models) whose training section runs the trainer doubles with small steps,
 * recorded trajectories and their GRPO and SFT datasets in MinIO, a worker for the test workflows
 * (workflows.ts), and GPU workers in-process or as real processes.
 */

let bundle: ReturnType<typeof bundleWorkflowCode> | undefined;

/** Sets a flag's value in a command template. */
export const setFlag = (args: string[], flag: string, value: string): void => {
  const at = args.indexOf(flag);
  if (at === -1) args.push(flag, value);
  else args[at + 1] = value;
};

export interface GpuHarness {
  readonly h: Harness;
  readonly trajectories: readonly RecordedTrajectory[];
  readonly grpoDataset: string;
  readonly sftDataset: string;
  /** Starts the test workflow training on the gpu queue. */
  startTraining(request: TrainRequest, opts?: { heartbeatTimeoutSeconds?: number; maximumAttempts?: number }): Promise<WorkflowHandle>;
  /** The train activity's last heartbeat, while it runs. */
  heartbeat(handle: WorkflowHandle): Promise<TrainingHeartbeat | undefined>;
  /** An in-process GPU worker, on the harness's config or a variant of it, with the harness's environment or another. */
  startGpuWorker(config?: LoadedConfig, env?: Record<string, string>): Promise<GpuWorker>;
  /** Stops every GPU worker, in-process or process. */
  stopGpuWorkers(): Promise<void>;
  /** A GPU worker as a real process (its own group), polling once this resolves; its pid. */
  spawnGpuWorker(name: string, env?: Record<string, string>): Promise<number>;
  stop(): Promise<void>;
}

export interface GpuHarnessOptions extends Partial<HarnessOptions> {
  readonly name: string;
  /** Milliseconds each trainer-double step takes on top of its work (a worker process may be given CODA_TEST_STEP_MS instead). */
  readonly stepMs?: number;
}

export async function startGpuHarness(opts: GpuHarnessOptions): Promise<GpuHarness> {
  const scratch = mkdtempSync(path.join(tmpdir(), `coda-${opts.name}-gpu-`));
  const rewardPort = await freePort();
  const h = await startHarness({
    desktops: 1,
    displayFrom: 540,
    ...opts,
    edit: (doc) => {
      const training = doc.training as Record<string, any>;
      // A worker process may be given a fresh work directory (another node) and slower trainer steps.
      training.workDir = `\${CODA_TEST_GPU_WORK_DIR:-${path.join(scratch, 'gpu')}}`;
      training.heartbeatSeconds = 1;
      training.checkpointPollSeconds = 0.2;
      training.cancelGraceSeconds = 5;
      training.rewardService = { ...training.rewardService, port: rewardPort };
      training.serving = { kind: 'lora', dir: path.join(scratch, 'served') };
      // The production OpenRLHF command with one prompt per step and a checkpoint after each.
      setFlag(training.grpo.args, '--rollout.batch_size', '1');
      setFlag(training.grpo.args, '--rollout.micro_batch_size', '1');
      setFlag(training.grpo.args, '--ckpt.save_steps', '1');
      training.grpo.env = { CODA_TRAINER_DOUBLE_STEP_MS: `\${CODA_TEST_STEP_MS:-${opts.stepMs ?? 0}}` };
      training.sft.config = { ...training.sft.config, gradient_accumulation_steps: 1, num_train_epochs: 1, save_steps: 2 };
      training.sft.env = { CODA_TRAINER_DOUBLE_STEP_MS: `\${CODA_TEST_STEP_MS:-${opts.stepMs ?? 0}}` };
      opts.edit?.(doc);
    },
  });
  const { stack, config, env } = h;
  const run = `${opts.name}${Date.now()}`;
  const trajectories = [await recordTrajectory(stack.store, config, env, run, 'C-08'), await recordTrajectory(stack.store, config, env, run, 'A-01')];
  const grpoDataset = await writeDataset(stack.store, config.storage.prefix, `${run}-grpo`, 'grpo', trajectories, config.models.planner.image!);
  const sftDataset = await writeDataset(stack.store, config.storage.prefix, `${run}-sft`, 'sft', trajectories, config.models.planner.image!);

  bundle ??= bundleWorkflowCode({ workflowsPath: require.resolve('../training/workflows'), logger: quietLogger });
  const testQueue = `${opts.name}-training-tests`;
  const testWorker = await Worker.create({ connection: stack.connection, namespace: config.temporal.namespace, taskQueue: testQueue, workflowBundle: await bundle });
  const testRunning = testWorker.run();
  const gpuWorkers: Array<{ gpu: GpuWorker; running: Promise<void> }> = [];
  const processes: string[] = [];

  const harness: GpuHarness = {
    h,
    trajectories,
    grpoDataset,
    sftDataset,
    startTraining(request, o = {}) {
      const input: TrainOnGpuInput = { request, gpuQueue: config.taskQueues.gpu, heartbeatTimeoutSeconds: o.heartbeatTimeoutSeconds ?? 30, maximumAttempts: o.maximumAttempts ?? 3 };
      return stack.client.workflow.start('trainOnGpu', { taskQueue: testQueue, workflowId: `train-${request.job}`, args: [input] });
    },
    async heartbeat(handle) {
      const pending = (await handle.describe()).raw.pendingActivities?.[0];
      const payload = pending?.heartbeatDetails?.payloads?.[0];
      return payload?.data === undefined || payload.data === null ? undefined : (JSON.parse(Buffer.from(payload.data).toString('utf8')) as TrainingHeartbeat);
    },
    async startGpuWorker(variant = config, variantEnv = env) {
      const gpu = await createGpuWorker({ config: variant, connection: stack.connection, env: variantEnv });
      gpuWorkers.push({ gpu, running: gpu.run() });
      return gpu;
    },
    async stopGpuWorkers() {
      for (const { gpu, running } of gpuWorkers.splice(0)) {
        gpu.shutdown();
        await running;
      }
      for (const name of processes.splice(0)) await stopDaemon(config.dataDir, name, 5_000);
    },
    async spawnGpuWorker(name, extra = {}) {
      const state = startDaemon(config.dataDir, workerSpec(config, 'gpu', [], { ...env, ...extra }, name));
      processes.push(name);
      await waitForPoller(h, state, config.taskQueues.gpu);
      return state.pid!;
    },
    async stop() {
      await harness.stopGpuWorkers();
      testWorker.shutdown();
      await testRunning;
      await h.stop();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
  return harness;
}

/** Waits for the running train activity's heartbeat to satisfy `ready`. */
export function heartbeatWhen(g: GpuHarness, handle: WorkflowHandle, what: string, ready: (beat: TrainingHeartbeat) => boolean, timeoutMs = 120_000): Promise<TrainingHeartbeat> {
  return eventually(what, async () => {
    const beat = await g.heartbeat(handle).catch(() => undefined);
    return beat !== undefined && ready(beat) ? beat : undefined;
  }, timeoutMs);
}

export type { TrainResult };

/** The inputs the batch workflows of a run were started with (continued runs aside). */
export async function batchInputs(client: Client, batchRun: string): Promise<Array<Record<string, unknown>>> {
  const inputs: Array<Record<string, unknown>> = [];
  for await (const e of client.workflow.list({ query: `CodaRun = "${batchRun}" AND WorkflowType = "rolloutBatch"` })) {
    const history = await client.workflow.getHandle(e.workflowId, e.runId).fetchHistory();
    const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    assert.ok(payload !== undefined && payload !== null, `${e.workflowId} has its input`);
    const input = defaultPayloadConverter.fromPayload<Record<string, unknown>>(payload as Payload);
    if (input.carried === undefined) inputs.push(input);
  }
  return inputs;
}
