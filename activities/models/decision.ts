import { z } from 'zod';
import { guiActionSchema } from '../../core/actions';
import { tokenUsageSchema } from '../../core/trajectory';
import { PromiseCache } from '../cache';
import type { ObjectStore } from '../storage/object-store';

/**
 * What one decision leaves in S3 (core/keys.ts decisionKey): the raw planner and executor texts
 * with usage and latency. The rollout workflow only carries the key; the manifest joins it back.
 */
const call = z.strictObject({
  raw: z.string(),
  model: z.string(),
  baseUrl: z.string(),
  latencyMs: z.number().min(0),
  usage: tokenUsageSchema,
  promptVersion: z.string(),
});

export const decisionRecordSchema = z.strictObject({
  planner: call.extend({ thought: z.string(), actionText: z.string() }),
  executor: call.optional(),
  action: guiActionSchema.nullable(),
  error: z.string().optional(),
  /**
   * Raw calls the executor wrote after the one taken, never performed: written only before such
   * replies were refused as malformed; kept so a record of a rollout in flight then still reads.
   */
  droppedActions: z.array(z.string()).optional(),
});

export type DecisionRecord = z.output<typeof decisionRecordSchema>;

/**
 * Decision records in S3 through a cache. They never change once written (their key carries the
 * activity attempt), so the worker that wrote one keeps it: the next step's decision and the
 * manifest writer read it without going to S3.
 */
export function decisionStore(store: ObjectStore, limit = 1024) {
  const cache = new PromiseCache<DecisionRecord>(limit);
  return {
    read(key: string): Promise<DecisionRecord> {
      return cache.get(key, async () => decisionRecordSchema.parse(await store.getJson(key)));
    },
    async write(key: string, record: DecisionRecord): Promise<void> {
      await store.putJson(key, record);
      cache.set(key, record);
    },
  };
}

export type DecisionStore = ReturnType<typeof decisionStore>;
