import { readFileSync } from 'node:fs';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import { parseConfig, type LoadedConfig } from '../../config/load';
import { createRunActivities, type RunActivities } from '../../activities/runs/activities';
import { createInputActivities, type InputActivities } from '../../workflows/input-activities';
import { TaskLibrary } from '../../activities/tasks/library';
import { REPO_CONFIG } from '../../infra/ephemeral';
import { SINGLE_NODE_ARGS } from '../../infra/temporal-server';
import { toolPath } from '../../infra/tools';
import { quietLogger, SHARED_STACK_VAR, testStack } from '../stack';
import type { TaskSetRequest, TaskSetSummary } from '../../activities/tasks/generation';

/**
 * The unit tier's Temporal: the Temporal CLI's dev server that infra/install.sh installs
 * (.tools/bin/temporal), started in memory by @temporalio/testing on a free port — nothing is
 * downloaded — with the workflows bundled once per mocha process. No MinIO, no desktop, no model:
 * every activity but the input checks is a stub the test file writes, so the workflows' own logic
 * (retries, resumes, voting, rounds) runs on the real server in seconds.
 */
interface UnitEnv {
  readonly env: TestWorkflowEnvironment;
  readonly bundle: WorkflowBundleWithSourceMap;
}

let started: Promise<UnitEnv> | undefined;

/** The repository's temporal.yaml with no environment: what every input is completed from. */
export const unitConfig: LoadedConfig = parseConfig(readFileSync(REPO_CONFIG, 'utf8'), 'temporal.yaml', {});

/**
 * unitConfig with a GPU queue of a test file's own: a file whose workflows run on the GPU queue
 * (so that the GPU activities are its worker's too) shares it with no file running beside it.
 */
export function unitConfigWithGpuQueue(gpu: string): LoadedConfig {
  const config = structuredClone(unitConfig);
  config.taskQueues.gpu = gpu;
  return config;
}

/**
 * The variable through which the unit tier's global setup (test/unit-global.ts) hands its dev
 * server's address to mocha's worker processes.
 */
export const UNIT_SERVER_VAR = 'CODA_UNIT_TEMPORAL';

/** The Temporal CLI's dev server in memory on a free port, with the repository's search attributes. */
export function startUnitServer(): Promise<TestWorkflowEnvironment> {
  const searchAttributes = Object.entries(unitConfig.temporal.searchAttributes).flatMap(([name, type]) => ['--search-attribute', `${name}=${type}`]);
  return TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'existing-path', path: toolPath('temporal') }, namespace: 'default', log: { format: 'pretty', level: 'error' }, extraArgs: [...searchAttributes, ...SINGLE_NODE_ARGS] },
  });
}

/**
 * The server this process's unit tests run on: in the whole suite, the run's shared Temporal server
 * (test/global.ts started it; its namespace has the search attributes) and the shared stack's
 * bundle; in the unit tier, the dev server its global setup started (UNIT_SERVER_VAR); a file run
 * alone with --no-config, a dev server of its own. The workflows are bundled once per process.
 */
async function start(): Promise<UnitEnv> {
  if (process.env[SHARED_STACK_VAR] !== undefined) {
    const { config, workflowBundle } = await testStack();
    const env = await TestWorkflowEnvironment.createFromExistingServer({ address: config.temporal.address, namespace: config.temporal.namespace });
    return { env, bundle: workflowBundle };
  }
  const address = process.env[UNIT_SERVER_VAR];
  const [env, bundle] = await Promise.all([
    address === undefined ? startUnitServer() : TestWorkflowEnvironment.createFromExistingServer({ address, namespace: 'default' }),
    bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: quietLogger }),
  ]);
  return { env, bundle };
}

/**
 * Starts the server and bundles the workflows if not yet started, without waiting: a failure
 * surfaces in the first test that needs them (startUnitWorker).
 */
export function startUnitEnv(): Promise<UnitEnv> {
  if (started === undefined) {
    started = start();
    started.catch(() => undefined);
  }
  return started;
}

/** A worker on `taskQueue` running every workflow with `stubs` as its activities, and the client to start them. */
export interface UnitWorker {
  readonly client: Client;
  readonly taskQueue: string;
  stop(): Promise<void>;
}

/** The real activities a unit worker registers: the workflows' input checks and the run queries. */
export type RealActivities = RunActivities & InputActivities;

/**
 * Starts one worker for a test file (call it in `before`, `stop` in `after`). The input checks are
 * the real ones (workflows/input-activities.ts on `config`, the repository's temporal.yaml by
 * default, and the task library), so a workflow sees the inputs it sees in production; `stubs` give every other activity, and may
 * wrap the real ones (given to it) to record what a workflow asked.
 */
export async function startUnitWorker(taskQueue: string, stubs: object | ((real: RealActivities) => object), config = unitConfig): Promise<UnitWorker> {
  const { env, bundle } = await startUnitEnv();
  const real = { ...createRunActivities(env.client), ...createInputActivities(config, new TaskLibrary()) };
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowBundle: bundle,
    activities: { ...real, ...(typeof stubs === 'function' ? stubs(real) : stubs) },
  });
  const running = worker.run();
  return {
    client: env.client,
    taskQueue,
    async stop() {
      worker.shutdown();
      await running;
    },
  };
}

/**
 * A test file's worker (startUnitWorker): started before its tests, stopped after them. Call it in
 * the file's `describe`; what it returns gives the worker's client once it has started.
 */
export function unitWorkerForTests(taskQueue: string, stubs: Parameters<typeof startUnitWorker>[1], config = unitConfig): () => Client {
  let worker: UnitWorker | undefined;
  before(async function () {
    this.timeout(120_000);
    worker = await startUnitWorker(taskQueue, stubs, config);
  });
  after(async () => worker?.stop());
  return () => {
    if (worker === undefined) throw new Error(`the unit worker on ${taskQueue} has not started`);
    return worker.client;
  };
}

/** Stops the server once, after the whole run (test/hooks.ts). */
export async function stopUnitEnv(): Promise<void> {
  if (started === undefined) return;
  const unit = await started.catch(() => undefined);
  started = undefined;
  await unit?.env.teardown();
}

/**
 * The activities of a training workflow's children that a unit test only needs to answer: each task
 * set generated with two tasks, staged with none (so its batches run no rollout), each run summed up
 * as solving nothing.
 */
export const emptyTaskSetStubs = {
  async generateTaskSet(request: TaskSetRequest): Promise<TaskSetSummary> {
    const counts = { requests: 1, kept: 2, duplicates: 0, invalid: 0, overLimit: 0, repeats: 0 };
    return { manifestKey: `sets/${request.version}`, software: request.software, version: request.version, counts, existed: false };
  },
  async stageTaskSet() {
    return { entries: [], unsupported: [] };
  },
  async summarizeRun(input: { run: string }) {
    return { key: `summaries/${input.run}`, averageAtK: 0, passAtK: 0 };
  },
};
