import { finalOnBadInput } from '../bad-input';
import type { UnsupportedTask } from '../../core/report';
import { taskSupport, type Capabilities } from '../../core/requirements';
import type { Task } from '../../core/task';
import type { TaskEntry } from '../../core/rollout-types';
import type { ObjectStore } from '../storage/object-store';
import type { ModelGateway } from '../models/gateway';
import { generateTaskSet, type TaskSetRequest, type TaskSetSummary } from './generation';
import { stageTasks, taskSetEntriesOf, taskSetTasks, type TaskLibrary } from './library';
import { APPS } from '../../apps/index';

/** A batch's tasks: those that run, and those no host can run, with why. */
export interface StagedTasks {
  readonly entries: TaskEntry[];
  readonly unsupported: UnsupportedTask[];
}

/**
 * Task activities (orchestrator queue): stage a task set in S3 for the workers — the real
 * ScienceBoard tasks of the library, or a generated set — and generate new sets.
 */
export function createTaskActivities(deps: {
  library: TaskLibrary;
  store: ObjectStore;
  prefix: string;
  gateway: ModelGateway;
  /** What each host of the deployment really has for these tasks (local hosts probed: binaries, kpsewhich). */
  capabilities: (tasks: readonly Task[]) => Promise<readonly Capabilities[]>;
}) {
  return {
    /**
     * Stages the tasks of a batch; those no host of the deployment can run (an app, a TeX file, the
     * network or the VM snapshot it does not have) are set apart with the reason, before any desktop is leased.
     */
    async stageTaskSet(input: { software: string; taskIds?: readonly string[]; taskSet?: string }): Promise<StagedTasks> {
      return finalOnBadInput(async () => {
        const tasks =
          input.taskSet === undefined
            ? deps.library.load(input.software, input.taskIds)
            : await taskSetTasks(deps.store, deps.prefix, input.software, input.taskSet, input.taskIds);
        const unsupported: UnsupportedTask[] = [];
        const capabilities = await deps.capabilities(tasks);
        const supported = tasks.filter((task) => {
          const support = taskSupport(APPS, task, capabilities);
          if (!support.supported) unsupported.push({ software: task.type, taskId: task.id, reason: support.reason });
          return support.supported;
        });
        const entries = input.taskSet === undefined ? await stageTasks(deps.store, deps.prefix, supported) : taskSetEntriesOf(deps.prefix, input.software, input.taskSet, supported);
        return { entries, unsupported };
      });
    },

    /** Writes a versioned task set from the task-generator model (idempotent per version). */
    async generateTaskSet(input: TaskSetRequest): Promise<TaskSetSummary> {
      return finalOnBadInput(() => generateTaskSet({ ...deps }, input));
    },
  };
}

export type TaskActivities = ReturnType<typeof createTaskActivities>;
