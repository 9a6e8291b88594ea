import { hostCapacity, type Config } from './schema';
import type { BatchInput } from '../workflows/batch';
import type { RolloutSettings } from '../workflows/rollout-types';

/** What a rollout needs of temporal.yaml (workflows cannot read files; starters pass this in). */
export function rolloutSettings(config: Config): RolloutSettings {
  return {
    leaseQueue: config.taskQueues.desktopLeases,
    resume: config.rollouts.resume,
    heartbeatTimeoutSeconds: config.rollouts.heartbeatTimeoutSeconds,
    hostScheduleToStartSeconds: config.rollouts.hostScheduleToStartSeconds,
    maxMalformedReplies: config.rollouts.maxMalformedReplies,
    maxResumes: config.rollouts.maxResumes,
    modelAttempts: config.rollouts.modelAttempts,
  };
}

/** Every desktop of every host: the most rollouts that can act at once. */
export const desktopCapacity = (config: Config): number =>
  config.hosts.reduce((sum, host) => sum + hostCapacity(host), 0);

/** What a batch takes from the deployment when its starter does not say. */
export type BatchDefaults = Required<Pick<BatchInput, 'concurrency' | 'rolloutsPerRun' | 'settings'>>;

export function batchDefaults(config: Config): BatchDefaults {
  return {
    concurrency: Math.max(1, Math.min(config.limits.maxConcurrentRollouts, desktopCapacity(config))),
    rolloutsPerRun: config.limits.rolloutsPerBatchRun,
    settings: rolloutSettings(config),
  };
}

export interface BatchRequest {
  readonly run: string;
  readonly stage: string;
  readonly software: string;
  readonly attempts: number;
  readonly taskIds?: readonly string[];
}

/** A batch over the hosts of temporal.yaml, bounded by their desktops and the configured limits. */
export const batchInput = (config: Config, request: BatchRequest): BatchInput => ({ ...request, ...batchDefaults(config) });
