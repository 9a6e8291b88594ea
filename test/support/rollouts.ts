import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { waitUntilHealthy, type DaemonState } from '../../infra/daemon';
import { stageTasks, TaskLibrary } from '../../activities/tasks/library';
import { type TrajectoryManifest } from '../../core/trajectory';
import type { RolloutResult } from '../../core/rollout-types';
import type { Harness } from './harness';
import { isPolling } from '../../infra/worker-process';
import { rolloutWorkflowId } from '../../workflows/names';
import { parseTrajectoryManifest } from '../../apps/manifests';

/** Stages KAlgebra tasks in S3 and starts one rollout of `taskId`; returns its handle. */
export async function startRollout(h: Harness, run: string, taskId: string, attempt = 0) {
  const [entry] = await stageTasks(h.stack.store, h.config.storage.prefix, new TaskLibrary().load('KAlgebra', [taskId]));
  const ref = { run, software: 'KAlgebra', task: taskId, attempt };
  return h.stack.client.workflow.start('rollout', {
    taskQueue: h.config.taskQueues.orchestrator,
    workflowId: rolloutWorkflowId(ref),
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    args: [{ run, stage: 'test', task: entry!, attempt, settings: h.settings }],
  });
}

export async function manifestOf(h: Harness, result: RolloutResult): Promise<TrajectoryManifest> {
  return parseTrajectoryManifest(await h.stack.store.getJson(result.manifestKey), result.manifestKey);
}

/**
 * Resolves once Temporal lists the worker daemon (by its identity `pid@host`) among the pollers of
 * `taskQueue`; fails at once, with the last lines of its log, if the process exits first.
 */
export async function waitForPoller(h: Harness, daemon: DaemonState, taskQueue: string, timeoutMs = 180_000): Promise<void> {
  const identity = `${daemon.pid}@${hostname()}`;
  await waitUntilHealthy(h.config.dataDir, daemon.name, () => isPolling(h.stack.client.connection, h.config.temporal.namespace, taskQueue, identity), timeoutMs);
}

/** Polls `check` until it returns a value, failing after `timeoutMs`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await sleep(250);
  }
  throw new Error(`timed out waiting for ${what}`);
}
