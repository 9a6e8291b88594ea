import type { Client } from '@temporalio/client';
import type { Config } from '../../config/schema';
import { batchDefaults, type BatchDefaults } from '../../config/workflow-inputs';
import type { RolloutResult } from '../../workflows/rollout-types';
import { withHeartbeat } from '../heartbeat';

/**
 * Activities about runs (orchestrator queue): the deployment's defaults for a batch started by
 * hand (`temporal workflow start` with only run, software and attempts), and the results of
 * workflows that already exist.
 */
export function createRunActivities(client: Client, config: Config) {
  return {
    /** Rollout settings and concurrency from this worker's temporal.yaml. */
    async deploymentDefaults(): Promise<BatchDefaults> {
      return batchDefaults(config);
    },

    /** The result of a rollout that already exists (a batch never starts an attempt twice). */
    async awaitRollout(workflowId: string): Promise<RolloutResult> {
      return withHeartbeat(() => client.workflow.getHandle(workflowId).result() as Promise<RolloutResult>, () => ({ workflowId }), 20_000);
    },
  };
}

export type RunActivities = ReturnType<typeof createRunActivities>;
