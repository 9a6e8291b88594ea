import type { Client } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { LoadedConfig } from '../config/load';
import { connectTemporal } from '../config/temporal-connection';
import { connectClient } from '../client/connection';
import { createObjectStore, type ObjectStore } from '../activities/storage/object-store';
import { startEphemeralStack, type EphemeralStack } from '../infra/ephemeral';

/**
 * The real servers every integration test shares: one Temporal dev server (SQLite) and one
 * MinIO, started on first use in a temporary data directory on free ports, stopped once after
 * the whole run. If a server cannot start, the test that asked for it fails with the reason.
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

async function start(): Promise<TestStack> {
  servers = await startEphemeralStack('coda-test');
  const { config, env } = servers;
  const [client, connection, workflowBundle] = await Promise.all([
    connectClient(config),
    connectTemporal(config, NativeConnection),
    bundleWorkflowCode({ workflowsPath: require.resolve('../workflows'), logger: quietLogger }),
  ]);
  return { config, env, client, connection, store: createObjectStore(config.storage, env), workflowBundle };
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
