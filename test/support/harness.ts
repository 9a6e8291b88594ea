import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { parse, stringify } from 'yaml';
import { loadConfig, type LoadedConfig } from '../../config/load';
import { connectTemporal } from '../../config/temporal-connection';
import { connectClient } from '../../client/connection';
import { rolloutSettings } from '../../workflows/rollout/contract';
import { preparedBoxes } from '../../config/schema';
import { ImagePreparer } from '../../activities/models/images';
import type { ScriptedServer } from '../../doubles/openai-server';
import { startScriptedModels } from '../../doubles/scripted-models/main';
import type { OrchestratorMetrics } from '../../activities/metrics';
import { createOrchestratorWorker } from '../../workers/orchestrator';
import { createVmHost, type VmHost } from '../../workers/vm-host';
import type { RolloutSettings } from '../../workflows/rollout/contract';
import { freeDisplay, metricsPortsEnv } from '../../infra/ephemeral';
import { REPO_CONFIG, testStack, type TestStack } from '../stack';

/**
 * A deployment of its own for one rollout test file, on the shared Temporal and MinIO: its own
 * task queues and host (so files never steal each other's work), real KAlgebra desktops on free
 * X displays, the scripted model server (the TEST DOUBLE of the GPU model servers) and an
 * in-process orchestrator worker. The vm-host runs in-process or as a real child process.
 */
export interface Harness {
  readonly stack: TestStack;
  /** The client of this harness's workers: the stack's, or its own with `ownConnections`. */
  readonly client: Client;
  readonly config: LoadedConfig;
  /** Environment in which worker processes load this harness's config (CODA_CONFIG points at it). */
  readonly env: Record<string, string>;
  readonly hostId: string;
  readonly models: ScriptedServer;
  readonly settings: RolloutSettings;
  /** The orchestrator's image preparer: how many images it resized itself (none, when hosts prepare variants). */
  readonly images: ImagePreparer;
  /** Starts an in-process vm-host for the harness's host; stopped with the harness. */
  startVmHost(): Promise<VmHost>;
  /** Runs a workflow on the harness's orchestrator queue to its end; its result. */
  execute<T>(workflowType: string, workflowId: string, input: unknown): Promise<T>;
  stopOrchestrator(): Promise<void>;
  /** The in-process orchestrator, on the harness's config or a variant of it (a planner served elsewhere). */
  startOrchestrator(config?: LoadedConfig): Promise<void>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  readonly name: string;
  readonly desktops: number;
  readonly displayFrom: number;
  readonly errorRate?: number;
  readonly malformedRate?: number;
  /** Edits of the parsed temporal.yaml that the scripted model double sees too (judges, their error rates). */
  readonly models?: (doc: Record<string, any>) => void;
  /** Edits applied to the parsed temporal.yaml after the double started (what only the workers see). */
  readonly edit?: (doc: Record<string, any>) => void;
  /** The scripted server has vLLM's runtime LoRA routes (VLLM_ALLOW_RUNTIME_LORA_UPDATING). */
  readonly runtimeLora?: boolean;
  /** Where the in-process orchestrator records its Prometheus metrics (a registry the test reads). */
  readonly metrics?: OrchestratorMetrics;
  /**
   * The workers and `client` connect as temporal.yaml (after `edit`) says, through the project's
   * connection function (its address, TLS, API key), instead of sharing the stack's connections.
   */
  readonly ownConnections?: boolean;
  /** The servers to run on: the run's shared stack unless given (startPrivateStack, for a test that restarts one). */
  readonly stack?: TestStack;
  /** Variables added to the workers' environment (a key the real planner server demands). */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * The run seed of the doubles' draws in this test run: CODA_SEED from the environment, else 1 (as
 * temporal.yaml's dev.scriptedModels.seed). `CODA_SEED=3 npm test` runs the suite with other draws.
 */
export function runSeed(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.CODA_SEED?.trim() ?? '';
  if (raw === '') return 1;
  const seed = Number(raw);
  if (!Number.isInteger(seed) || seed < 0 || seed > 2 ** 31 - 1) throw new Error(`CODA_SEED: expected an integer from 0 to 2147483647, got "${raw}"`);
  return seed;
}

export async function startHarness(opts: HarnessOptions): Promise<Harness> {
  const stack = opts.stack ?? (await testStack());
  const dir = mkdtempSync(path.join(tmpdir(), `coda-${opts.name}-`));
  const hostId = `${opts.name}-host`;
  const doc = parse(readFileSync(REPO_CONFIG, 'utf8')) as Record<string, any>;
  doc.taskQueues = { orchestrator: `${opts.name}-orchestrator`, gpu: `${opts.name}-gpu`, desktopLeases: `${opts.name}-leases` };
  doc.hosts = [{ id: hostId, kind: 'local', taskQueue: `${opts.name}-vm`, desktops: opts.desktops, displayBase: freeDisplay(opts.displayFrom, opts.desktops) }];
  doc.rollouts = { ...doc.rollouts, heartbeatTimeoutSeconds: 5, hostScheduleToStartSeconds: 10, settleMs: 200 };
  doc.schedules = [];
  doc.dev = { ...doc.dev, dataDir: dir, scriptedModels: { port: 1, errorRate: opts.errorRate ?? 0, malformedRate: opts.malformedRate ?? 0, seed: runSeed() } };
  opts.models?.(doc);
  const file = path.join(dir, 'temporal.yaml');
  // The double is set up from the file before the test's edits, so it keeps serving the usual
  // model names when a test points a role elsewhere. Port 1 is a placeholder: it listens on a
  // free port, which the environment below names.
  writeFileSync(file, stringify(doc));
  const models = await startScriptedModels(loadConfig(file, stack.env), { port: 0, env: stack.env, runtimeLoraUpdating: opts.runtimeLora ?? false });
  opts.edit?.(doc);
  writeFileSync(file, stringify(doc));
  const env: Record<string, string> = {
    ...stack.env,
    // Metrics ports of its own: the stack's environment is shared by both of the suite's mocha
    // processes, and two files spawning a GPU worker at once on its ports would see one exit on EADDRINUSE.
    ...(await metricsPortsEnv()),
    CODA_CONFIG: file,
    CODA_PLANNER_URL: models.url,
    CODA_EXECUTOR_URL: models.url,
    CODA_JUDGE_A_URL: models.url,
    CODA_JUDGE_B_URL: models.url,
    CODA_TASKGEN_URL: models.url,
    ...opts.env,
  };
  const config = loadConfig(file, env);
  const [client, connection] = opts.ownConnections
    ? await Promise.all([connectClient(config, env), connectTemporal(config, NativeConnection, env)])
    : [stack.client, stack.connection];

  let orchestrator: { worker: Worker; running: Promise<void> } | undefined;
  const vmHosts: Array<{ host: VmHost; running: Promise<void> }> = [];

  const harness: Harness = {
    stack,
    client,
    config,
    env,
    hostId,
    models,
    settings: rolloutSettings(config),
    images: new ImagePreparer(preparedBoxes(config), config.storage.presignSeconds),
    execute<T>(workflowType: string, workflowId: string, input: unknown): Promise<T> {
      return client.workflow.execute(workflowType, { taskQueue: config.taskQueues.orchestrator, workflowId, args: [input] }) as Promise<T>;
    },
    async startVmHost() {
      const host = await createVmHost({ config, connection, hostId, env });
      vmHosts.push({ host, running: host.run() });
      return host;
    },
    async startOrchestrator(variant = config) {
      const worker = await createOrchestratorWorker({ config: variant, connection, client, env, workflowBundle: stack.workflowBundle, imagePreparer: harness.images, ...(opts.metrics === undefined ? {} : { metrics: opts.metrics }) });
      orchestrator = { worker, running: worker.run() };
    },
    async stopOrchestrator() {
      if (orchestrator === undefined) return;
      orchestrator.worker.shutdown();
      await orchestrator.running;
      orchestrator = undefined;
    },
    async stop() {
      await harness.stopOrchestrator();
      for (const { host, running } of vmHosts.splice(0)) {
        host.shutdown();
        await running;
      }
      await models.close();
      if (opts.ownConnections) await Promise.all([client.connection.close(), connection.close()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await harness.startOrchestrator();
  return harness;
}
