import { APP_MODULES } from '../../apps/index';
import type { Template, TemplateContext, TemplateTask } from '../../apps/seeds';

/**
 * TEST DOUBLE support. The tasks the scripted task-generator double writes, and how the scripted
 * planner and judge doubles read them back. A real generator writes free text; this one writes
 * instructions from templates, each with the reference plan (in ScienceBoard's `ans` notation, the
 * one apps/policies.ts replays) that solves it, so that the doubles downstream know the plan the way
 * a person who wrote the task would: the planner double can attempt the task (and botch it at its
 * error rate), the judge double can tell whether a trajectory followed it. Some templates ask for
 * things the scripted planner has no plan for: it answers FAIL, and those rollouts fail for real.
 */

export type { TemplateContext, TemplateTask } from '../../apps/seeds';

/** Each registered app's seeds (apps/<slug>/seeds.ts), by software. */
const TEMPLATES: Readonly<Record<string, readonly Template[]>> = Object.fromEntries(APP_MODULES.map((app) => [app.schema.software, app.seeds]));

/** Whether the generator double can write tasks for `software`. */
export const writesTasksFor = (software: string): boolean => TEMPLATES[software] !== undefined;

/** One new task of `software` (the generator double's output), from `random` in [0, 1). */
export function writeTask(software: string, random: () => number, context: TemplateContext = {}): TemplateTask {
  const templates = TEMPLATES[software];
  if (templates === undefined) throw new Error(`the task-generator double has no templates for ${software}`);
  const pick = <T>(options: readonly T[]): T => options[Math.floor(random() * options.length)] as T;
  for (;;) {
    const task = pick(templates).write(pick, context);
    if (task !== undefined) return task;
  }
}

/** Most picks enumerated per template: every template of the apps has far fewer combinations. */
const MAX_COMBINATIONS = 10_000;

/**
 * Every task each template of `software` can write from `context`, one list per template, in the
 * order of its picks: each combination of the options its `pick` calls offer is tried once (an
 * odometer over the picks), so the generator double can write a task it has not written before
 * rather than hope a random pick is new.
 */
export function everyTask(software: string, context: TemplateContext = {}): TemplateTask[][] {
  const templates = TEMPLATES[software];
  if (templates === undefined) throw new Error(`the task-generator double has no templates for ${software}`);
  return templates.map((template) => {
    const tasks = new Map<string, TemplateTask>();
    const choices: number[] = [];
    for (let n = 0; n < MAX_COMBINATIONS; n++) {
      const sizes: number[] = [];
      const pick = <T>(options: readonly T[]): T => {
        const i = sizes.length;
        sizes.push(options.length);
        choices[i] ??= 0;
        return options[choices[i]] as T;
      };
      const task = template.write(pick, context);
      if (task !== undefined && !tasks.has(task.instruction)) tasks.set(task.instruction, task);
      // Next combination: the last pick that has options left moves on, the picks after it start over.
      choices.length = sizes.length;
      let last = sizes.length - 1;
      while (last >= 0 && (choices[last] as number) + 1 >= (sizes[last] as number)) last -= 1;
      if (last < 0) break;
      choices[last] = (choices[last] as number) + 1;
      choices.length = last + 1;
    }
    return [...tasks.values()];
  });
}

/** The task behind an instruction the generator double wrote, with its plan; undefined for any other text. */
export function readTask(software: string, instruction: string, context: TemplateContext = {}): TemplateTask | undefined {
  for (const template of TEMPLATES[software] ?? []) {
    const task = template.read(instruction, context);
    if (task !== undefined) return task;
  }
  return undefined;
}
