import { hostname } from 'node:os';
import * as path from 'node:path';
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { LoadedConfig } from '../config/load';
import { temporalConnectionOptions } from '../config/temporal-connection';
import { daemonState, type DaemonSpec } from './daemon';

const WORKERS_DIR = path.resolve(__dirname, '..', 'workers');

/** A worker kind's compiled entry point run by this Node, configured by the same temporal.yaml. */
export function workerSpec(
  config: LoadedConfig,
  kind: 'orchestrator' | 'vm-host' | 'gpu',
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  name: string = kind,
): DaemonSpec {
  return {
    name,
    command: process.execPath,
    args: ['--enable-source-maps', path.join(WORKERS_DIR, `${kind}.js`), ...args],
    env: { ...env, CODA_CONFIG: config.file },
    // A worker given another model key (the small planner's, made per start of the demo) is restarted with it.
    secretEnv: modelKeyEnvs(config),
  };
}

/**
 * A worker daemon is healthy once Temporal lists it, by its default identity `pid@host`, among
 * the pollers of its task queue (workflow pollers, or activity pollers for an activity-only worker).
 */
export async function workerHealthy(config: LoadedConfig, name: string, taskQueue: string): Promise<boolean> {
  const state = daemonState(config.dataDir, name);
  const connection = await Connection.connect({ ...temporalConnectionOptions(config), connectTimeout: 2_000 });
  try {
    return await isPolling(connection, config.temporal.namespace, taskQueue, `${state.pid}@${hostname()}`);
  } finally {
    await connection.close();
  }
}

/** True when `identity` polls `taskQueue` for workflow tasks or for activity tasks. */
export async function isPolling(connection: Pick<Connection, 'workflowService'>, namespace: string, taskQueue: string, identity: string): Promise<boolean> {
  for (const taskQueueType of [temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW, temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY]) {
    const described = await connection.workflowService.describeTaskQueue({ namespace, taskQueue: { name: taskQueue }, taskQueueType });
    if ((described.pollers ?? []).some((p) => p.identity === identity)) return true;
  }
  return false;
}

/** The variables holding the model endpoints' keys (models.*.apiKeyEnv). */
function modelKeyEnvs(config: LoadedConfig): string[] {
  const { planner, executor, taskGenerator, judges } = config.models;
  return [...new Set([planner, executor, taskGenerator, ...judges].flatMap((endpoint) => (endpoint.apiKeyEnv === undefined ? [] : [endpoint.apiKeyEnv])))];
}
