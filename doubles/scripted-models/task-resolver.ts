import type { LoadedConfig } from '../../config/load';
import { defaultStartState, type StartState } from '../../core/generated-task';
import type { Size } from '../../core/smart-resize';
import { parseTask, type Task } from '../../core/task';
import { TaskLibrary } from '../../activities/tasks/library';
import { everyTask, readTask, writesTasksFor, type TemplateContext } from './generated-tasks';
import { APPS } from '../../apps/index';

/**
 * TEST DOUBLE support: how the doubles that play the planner (the scripted model server, the
 * trainer doubles) find the task a prompt is about, from its instruction alone: a ScienceBoard
 * task of the library, or a task the task-generator double wrote (read back through its
 * templates, with the plan it wrote as `ans`).
 */

/** What a software's generated tasks start from (core/generated-task.ts) and the document it shows. */
function startOf(seeds: readonly Task[]): { start: StartState; context: TemplateContext } | undefined {
  const start = defaultStartState(seeds);
  if (start === undefined) return undefined;
  const touched = start.initialize.filter((step) => step.func === 'touch');
  return { start, context: touched.length === 0 ? {} : { document: (touched.at(-1) as { text: string }).text } };
}

/** A generated task known by its instruction, as a runnable task whose `ans` is the plan the generator double wrote. */
function generatedTaskOf(software: string, instruction: string, start: { start: StartState; context: TemplateContext }): Task | undefined {
  const written = readTask(software, instruction, start.context);
  if (written === undefined) return undefined;
  return parseTask(APPS, 
    {
      type: software,
      sort: 'generated',
      steps: 15,
      instruction,
      version: start.start.version,
      snapshot: start.start.snapshot,
      initialize: start.start.initialize,
      evaluate: [],
      ...(written.ans === undefined ? {} : { ans: written.ans }),
      generated: { set: 'double', seedTaskIds: ['seeds'], model: 'task-generator double', promptVersion: 'templates' },
    },
    'generated',
  );
}

export interface TaskResolver {
  /** Every task of the library. */
  readonly tasks: readonly Task[];
  /** The task an instruction names (of `software`, when given): a library task first, then a generated one. */
  taskOf(instruction: string, software?: string): Task | undefined;
  /** A generated task only (the judge doubles tell them from real ones). */
  generated(instruction: string): Task | undefined;
  /** Every task the generator double can write, read back as `generated` reads it (the executor double grounds their plans). */
  everyGenerated(): Task[];
  /** The document a software's generated tasks show (the generator double's context). */
  contextOf(software: string): TemplateContext;
}

export function taskResolver(library: TaskLibrary = new TaskLibrary()): TaskResolver {
  const tasks = library.software().flatMap((software) => library.load(software));
  const starts = new Map(
    library.software().flatMap((software) => {
      const start = startOf(tasks.filter((t) => t.type === software));
      return start === undefined ? [] : [[software, start] as const];
    }),
  );
  const generated = (instruction: string, software?: string): Task | undefined => {
    for (const [name, start] of starts) {
      if (software !== undefined && name !== software) continue;
      const task = generatedTaskOf(name, instruction, start);
      if (task !== undefined) return task;
    }
    return undefined;
  };
  return {
    tasks,
    taskOf: (instruction, software) => tasks.find((t) => t.instruction === instruction && (software === undefined || t.type === software)) ?? generated(instruction, software),
    generated: (instruction) => generated(instruction),
    everyGenerated: () =>
      [...starts].flatMap(([software, start]) =>
        writesTasksFor(software) ? everyTask(software, start.context).flat().flatMap((written) => generatedTaskOf(software, written.instruction, start) ?? []) : [],
      ),
    contextOf: (software) => starts.get(software)?.context ?? {},
  };
}

/** The desktops' screen (the reference plans' pixels): the local host's, else 1920x1080. */
export function screenOf(config: LoadedConfig): Size {
  const host = config.hosts.find((h) => h.kind === 'local');
  return host?.kind === 'local' ? host.screen : { width: 1920, height: 1080 };
}
