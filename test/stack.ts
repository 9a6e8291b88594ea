import type { Client } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { loadConfig, type LoadedConfig } from '../config/load';
import { connectTemporal } from '../config/temporal-connection';
import { connectClient } from '../client/connection';
import { createObjectStore, type ObjectStore } from '../activities/storage/object-store';
import { REPO_CONFIG, startEphemeralStack, type EphemeralStack } from '../infra/ephemeral';

/**
 * The real servers every integration test shares: one Temporal dev server (SQLite) and one
 * MinIO on free ports in a temporary data directory. The whole suite's global setup starts them
 * once for all its worker processes (test/global.ts); a mocha run without it (the unit tier, one
 * file run with --no-config) starts its own on first use. If a server cannot start, the run or
 * the test that asked for it fails with the reason.
 */
export interface TestStack {
  readonly config: LoadedConfig;
  /** Environment that makes the repo's temporal.yaml describe this stack (ports, data dir, S3 keys). */
  readonly env: Record<string, string>;
  readonly client: Client;
  readonly connection: NativeConnection;
  readonly store: ObjectStore;
  /** The workflows, bundled once per run. */
  readonly workflowBundle: WorkflowBundleWithSourceMap;
}

export { freePort, isolatedEnv, REPO_CONFIG } from '../infra/ephemeral';

let started: Promise<TestStack> | undefined;
let servers: EphemeralStack | undefined;

/**
 * The variable through which the run's global setup (test/global.ts) hands the servers it started
 * to every mocha worker: the environment entries that make temporal.yaml describe them, as JSON.
 */
export const SHARED_STACK_VAR = 'CODA_TEST_STACK';

/** The servers: the run's shared ones when the global setup started them, else this process's own. */
async function serversOfRun(): Promise<{ readonly config: LoadedConfig; readonly env: Record<string, string> }> {
  const shared = process.env[SHARED_STACK_VAR];
  if (shared === undefined) {
    servers = await startEphemeralStack('coda-test');
    return servers;
  }
  const env = { ...(process.env as Record<string, string>), ...(JSON.parse(shared) as Record<string, string>) };
  return { config: loadConfig(REPO_CONFIG, env), env };
}

async function start(): Promise<TestStack> {
  const { config, env } = await serversOfRun();
  return connect(config, env, bundleWorkflowCode({ workflowsPath: require.resolve('../workflows'), logger: quietLogger }));
}

async function connect(config: LoadedConfig, env: Record<string, string>, bundle: Promise<WorkflowBundleWithSourceMap>): Promise<TestStack> {
  const [client, connection, workflowBundle] = await Promise.all([connectClient(config), connectTemporal(config, NativeConnection), bundle]);
  return { config, env, client, connection, store: createObjectStore(config.storage, env), workflowBundle };
}

/**
 * A Temporal and a MinIO of the caller's own, for a test that stops or restarts a server: the
 * shared ones serve the files running beside it. The workflows' bundle is the shared stack's.
 */
export async function startPrivateStack(namespace: string): Promise<TestStack & { stop(): Promise<void> }> {
  const own = await startEphemeralStack(namespace);
  try {
    const stack = await connect(own.config, own.env, testStack().then((shared) => shared.workflowBundle));
    return {
      ...stack,
      async stop() {
        await stack.connection.close();
        await stack.client.connection.close();
        await own.stop();
      },
    };
  } catch (err) {
    await own.stop();
    throw err;
  }
}

/** The bundler's logger: warnings and errors only. */
export const quietLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};

/** The shared stack; the first call starts it. */
export function testStack(): Promise<TestStack> {
  started ??= start();
  return started;
}

export async function stopTestStack(): Promise<void> {
  if (started === undefined) return;
  const stack = await started.catch(() => undefined);
  started = undefined;
  if (stack !== undefined) {
    await stack.connection.close();
    await stack.client.connection.close();
  }
  await servers?.stop();
  servers = undefined;
}
