import * as path from 'node:path';
import { loadConfig, type Env, type LoadedConfig } from '../config/load';
import { createObjectStore } from '../activities/storage/object-store';
import { daemonState, runsAnotherSpec, startDaemon, stopDaemon, waitUntilHealthy, type DaemonSpec, type DaemonState } from './daemon';
import { minioHealthy, minioServerSpec } from './minio-server';
import { temporalHealthy, temporalServerSpec } from './temporal-server';
import { viewerUrl } from '../viewer/urls';
import { workerHealthy, workerSpec } from './worker-process';
import { stopSmallPlannerServer } from './small-planner/demo';

/**
 * The dev stack: the Temporal dev server (SQLite), MinIO, the workers and the viewer, each a detached
 * process with its pid file and log under the data directory. `up` is idempotent and replaces
 * stale pid files; `down` stops every process group it started.
 */

/** Credentials the dev stack's MinIO uses when the variables temporal.yaml names are unset. */
const DEV_S3_ACCESS_KEY_ID = 'coda-dev';
const DEV_S3_SECRET_ACCESS_KEY = 'coda-dev-secret';

/** The trainer doubles (no GPU here): what CODA_GRPO_TRAINER and CODA_SFT_TRAINER name in the dev stack and the tests. */
const TRAINER_DOUBLES = {
  CODA_GRPO_TRAINER: path.resolve(__dirname, '..', 'doubles', 'trainers', 'openrlhf.js'),
  CODA_SFT_TRAINER: path.resolve(__dirname, '..', 'doubles', 'trainers', 'llamafactory.js'),
};

/**
 * `env` plus, where unset, the dev stack's S3 credentials and the model API keys under the names
 * temporal.yaml gives (`EMPTY`, what OpenAI clients send to a vLLM server started without a key),
 * and, when the stack runs the scripted models, the trainer doubles as the trainer programs.
 */
export function devEnv(config: LoadedConfig, env: Env = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  out[config.storage.accessKeyIdEnv] ||= DEV_S3_ACCESS_KEY_ID;
  out[config.storage.secretAccessKeyEnv] ||= DEV_S3_SECRET_ACCESS_KEY;
  const { planner, executor, judges, taskGenerator } = config.models;
  for (const endpoint of [planner, executor, taskGenerator, ...judges]) {
    if (endpoint.apiKeyEnv !== undefined) out[endpoint.apiKeyEnv] ||= 'EMPTY';
  }
  if (config.dev.scriptedModels !== undefined) {
    for (const [name, script] of Object.entries(TRAINER_DOUBLES)) out[name] ||= `${process.execPath} ${script}`;
  }
  return out;
}

interface Component {
  readonly spec: DaemonSpec;
  readonly healthy: () => Promise<boolean>;
  readonly startTimeoutMs: number;
  /** Runs once the component is healthy (e.g. create the bucket). */
  readonly ready?: () => Promise<void>;
}

export interface StackOptions {
  /** No Web UI (tests). */
  readonly headless?: boolean;
  readonly env?: Env;
  /** Also run the workers (default); tests run their own. */
  readonly workers?: boolean;
  /** Told before each component starts (or is found running): its name and place, for a progress line. */
  readonly onStarting?: (name: string, index: number, total: number) => void;
}

function components(config: LoadedConfig, opts: StackOptions): Component[] {
  const env = devEnv(config, opts.env);
  const servers: Component[] = [
    {
      spec: temporalServerSpec(config, { headless: opts.headless ?? false }),
      healthy: () => temporalHealthy(config),
      startTimeoutMs: 60_000,
    },
    {
      spec: minioServerSpec(config, env),
      healthy: () => minioHealthy(config),
      startTimeoutMs: 60_000,
      ready: () => createObjectStore(config.storage, env).ensureBucket(),
    },
  ];
  const scripted = config.dev.scriptedModels;
  const doubles: Component[] =
    scripted === undefined
      ? []
      : [
          {
            spec: {
              name: 'scripted-models',
              command: process.execPath,
              args: [path.resolve(__dirname, '..', 'doubles', 'scripted-models', 'main.js')],
              // The planner's server loads trained planners as LoRA adapters at run time, as vLLM does with this set.
              env: { ...env, CODA_CONFIG: config.file, VLLM_ALLOW_RUNTIME_LORA_UPDATING: 'True' },
            },
            healthy: async () => (await fetch(`http://127.0.0.1:${scripted.port}/v1/models`, { signal: AbortSignal.timeout(2_000) })).ok,
            startTimeoutMs: 30_000,
          },
        ];
  const workers: Component[] = [
    {
      spec: workerSpec(config, 'orchestrator', [], env),
      healthy: () => workerHealthy(config, 'orchestrator', config.taskQueues.orchestrator),
      startTimeoutMs: 90_000,
    },
    ...config.hosts
      .filter((host) => host.kind === 'local')
      .map((host) => ({
        spec: workerSpec(config, 'vm-host', ['--host', host.id], env, `vm-host-${host.id}`),
        healthy: () => workerHealthy(config, `vm-host-${host.id}`, host.taskQueue),
        startTimeoutMs: 60_000,
      })),
    {
      spec: workerSpec(config, 'gpu', [], env),
      healthy: () => workerHealthy(config, 'gpu', config.taskQueues.gpu),
      startTimeoutMs: 60_000,
    },
  ];
  const viewer: Component = {
    spec: { name: 'viewer', command: process.execPath, args: [path.resolve(__dirname, '..', 'cli', 'coda.js'), 'view'], env: { ...env, CODA_CONFIG: config.file } },
    healthy: async () => (await fetch(`${viewerUrl(config)}/healthz`, { signal: AbortSignal.timeout(2_000) })).ok,
    startTimeoutMs: 30_000,
  };
  return opts.workers === false ? servers : [...servers, ...doubles, ...workers, viewer];
}

export interface StackInfo {
  readonly processes: DaemonState[];
  readonly temporalAddress: string;
  readonly namespace: string;
  readonly webUi?: string;
  readonly s3Endpoint: string;
  readonly bucket: string;
  readonly minioConsole: string;
  /** The viewer, when the stack runs it (with the workers). */
  readonly viewer?: string;
  readonly dataDir: string;
}

function describe(config: LoadedConfig, opts: StackOptions): StackInfo {
  return {
    processes: components(config, opts).map((c) => daemonState(config.dataDir, c.spec.name)),
    temporalAddress: config.temporal.address,
    namespace: config.temporal.namespace,
    webUi: opts.headless || !config.dev.webUi ? undefined : config.temporal.webUi,
    s3Endpoint: config.storage.endpoint,
    bucket: config.storage.bucket,
    minioConsole: `http://${config.dev.minioConsole}`,
    ...(opts.workers === false ? {} : { viewer: viewerUrl(config) }),
    dataDir: config.dataDir,
  };
}

/** Starts what is not running (restarting what runs on another config), waits until all of it is healthy, and returns the addresses. */
export async function stackUp(config: LoadedConfig, opts: StackOptions = {}): Promise<StackInfo> {
  const all = components(config, opts);
  for (const [index, component] of all.entries()) {
    opts.onStarting?.(component.spec.name, index, all.length);
    if (runsAnotherSpec(config.dataDir, component.spec)) await stopDaemon(config.dataDir, component.spec.name);
    startDaemon(config.dataDir, component.spec);
    await waitUntilHealthy(config.dataDir, component.spec.name, component.healthy, component.startTimeoutMs);
    await component.ready?.();
  }
  return describe(config, opts);
}

/** Stops every component, the last started first, and the small planner's server of `npm run demo -- --planner small`. Returns the names that were running. */
export async function stackDown(config: LoadedConfig, opts: StackOptions = {}): Promise<string[]> {
  const stopped: string[] = [];
  for (const component of components(config, opts).reverse()) {
    if (await stopDaemon(config.dataDir, component.spec.name)) stopped.push(component.spec.name);
  }
  if (opts.workers !== false && stopSmallPlannerServer(config.dataDir)) stopped.push('small-planner-server');
  return stopped;
}

export function stackStatus(config: LoadedConfig, opts: StackOptions = {}): StackInfo {
  return describe(config, opts);
}

export function formatStack(info: StackInfo): string {
  const lines = [
    `Temporal gRPC     ${info.temporalAddress} (namespace ${info.namespace})`,
    `Temporal Web UI   ${info.webUi ?? '(headless)'}`,
    `MinIO API         ${info.s3Endpoint} (bucket ${info.bucket})`,
    `MinIO console     ${info.minioConsole}`,
    ...(info.viewer === undefined ? [] : [`viewer            ${info.viewer}`]),
    `data directory    ${info.dataDir}`,
    ...info.processes.map(
      (p) => `${p.name.padEnd(17)} ${p.running ? `running (pid ${p.pid})` : 'stopped'}  log ${p.log}`,
    ),
  ];
  return lines.join('\n');
}

async function main(): Promise<void> {
  const command = process.argv[2];
  const headless = process.argv.includes('--headless');
  const config = loadConfig();
  if (command === 'up') {
    const started = Date.now();
    const info = await stackUp(config, { headless });
    console.log(formatStack(info));
    console.log(`stack up in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  } else if (command === 'down') {
    const stopped = await stackDown(config);
    console.log(stopped.length > 0 ? `stopped: ${stopped.join(', ')}` : 'nothing was running');
  } else if (command === 'status') {
    const info = stackStatus(config);
    console.log(formatStack(info));
    if (!info.processes.every((p) => p.running)) process.exitCode = 3;
  } else {
    console.error('usage: node build/infra/stack.js up [--headless] | down | status');
    process.exitCode = 2;
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
