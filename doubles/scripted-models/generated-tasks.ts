import { SEEDS as CELESTIA } from '../../apps/celestia/seeds';
import { SEEDS as CHIMERAX } from '../../apps/chimerax/seeds';
import { SEEDS as GRASS } from '../../apps/grassgis/seeds';
import { SEEDS as KALGEBRA } from '../../apps/kalgebra/seeds';
import { SEEDS as LEAN } from '../../apps/lean/seeds';
import { SEEDS as TEXSTUDIO } from '../../apps/texstudio/seeds';
import type { Template, TemplateContext, TemplateTask } from '../../apps/seeds';

/**
 * TEST DOUBLE support. The tasks the scripted task-generator double writes, and how the scripted
 * planner and judge doubles read them back. A real generator writes free text; this one writes
 * instructions from templates, each with the reference plan (in ScienceBoard's `ans` notation, the
 * one core/policies replays) that solves it, so that the doubles downstream know the plan the way
 * a person who wrote the task would: the planner double can attempt the task (and botch it at its
 * error rate), the judge double can tell whether a trajectory followed it. Some templates ask for
 * things the scripted planner has no plan for: it answers FAIL, and those rollouts fail for real.
 */

export type { TemplateContext, TemplateTask } from '../../apps/seeds';

const TEMPLATES: Readonly<Record<string, readonly Template[]>> = { KAlgebra: KALGEBRA, TeXstudio: TEXSTUDIO, Celestia: CELESTIA, ChimeraX: CHIMERAX, GrassGIS: GRASS, Lean: LEAN };

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

/** The task behind an instruction the generator double wrote, with its plan; undefined for any other text. */
export function readTask(software: string, instruction: string, context: TemplateContext = {}): TemplateTask | undefined {
  for (const template of TEMPLATES[software] ?? []) {
    const task = template.read(instruction, context);
    if (task !== undefined) return task;
  }
  return undefined;
}
