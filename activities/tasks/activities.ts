import { finalOnBadInput } from '../bad-input';
import type { TaskEntry } from '../../workflows/rollout-types';
import type { ObjectStore } from '../storage/object-store';
import type { ModelGateway } from '../models/gateway';
import { generateTaskSet, type TaskSetRequest, type TaskSetSummary } from './generation';
import { stageTasks, taskSetEntries, type TaskLibrary } from './library';

/**
 * Task activities (orchestrator queue): stage a task set in S3 for the workers — the real
 * ScienceBoard tasks of the library, or a generated set — and generate new sets.
 */
export function createTaskActivities(deps: { library: TaskLibrary; store: ObjectStore; prefix: string; gateway: ModelGateway }) {
  return {
    async stageTaskSet(input: { software: string; taskIds?: readonly string[]; taskSet?: string }): Promise<TaskEntry[]> {
      return finalOnBadInput(() =>
        input.taskSet === undefined
          ? stageTasks(deps.store, deps.prefix, deps.library.load(input.software, input.taskIds))
          : taskSetEntries(deps.store, deps.prefix, input.software, input.taskSet, input.taskIds),
      );
    },

    /** Writes a versioned task set from the task-generator model (idempotent per version). */
    async generateTaskSet(input: TaskSetRequest): Promise<TaskSetSummary> {
      return finalOnBadInput(() => generateTaskSet({ ...deps }, input));
    },
  };
}

export type TaskActivities = ReturnType<typeof createTaskActivities>;
