import type { Size } from '../core/smart-resize';
import type { Task } from '../core/task';
import { perturbStop, stopOf, withinSteps, type ReferencePlan, type StopAction } from '../core/policies/plans';

/**
 * The reference policy of the apps only a ScienceBoard VM runs (Celestia, ChimeraX, GRASS GIS,
 * Lean), where the pipeline has no GUI script of its own: the plan is the task's stop alone.
 * - A `stop` check gives it: `ANS` with its `args` joined by spaces, `FAIL`, `DONE`;
 * - else the task's `ans` line `ANS <answer>`, `FAIL` or `DONE`;
 * - else DONE when the task checks the app's state: on a real VM the plan passes only where the app
 *   already holds what the checks ask (the app-server doubles of the tests, given the task's state);
 * - else none (a generated task the generator double wrote no plan for): the planner gives up.
 * The perturbed plan gives the perturbed stop (an answer off by one, FAIL for DONE); a task whose
 * checks read only the app's state has none (no stop can make them fail), and says so.
 */

function stopOfTask(task: Task): { stop: StopAction; checked: boolean } | undefined {
  const check = task.evaluate.find((c) => c.type === 'stop') as { value: 'ANS' | 'FAIL' | 'DONE'; args?: string[] } | undefined;
  if (check !== undefined) {
    if (check.value === 'ANS') return { stop: { type: 'answer', text: (check.args ?? []).join(' ') }, checked: true };
    return { stop: { type: check.value === 'FAIL' ? 'fail' : 'done' }, checked: true };
  }
  const fromAns = (task.ans ?? '').split('\n').map(stopOf).find((s): s is StopAction => s !== undefined);
  if (fromAns !== undefined) return { stop: fromAns, checked: false };
  // DONE hands over to the checks of the app's state; a task with none (a generated one without a plan) has no reference.
  return task.evaluate.some((c) => c.type !== 'stop') ? { stop: { type: 'done' }, checked: false } : undefined;
}

const NO_REFERENCE = 'no reference answer: no stop check, no ANS, FAIL or DONE in its ans, and no check of the app\'s state';

export function referencePlan(task: Task, _screen?: Size): ReferencePlan {
  const found = stopOfTask(task);
  return found === undefined ? { replayable: false, reason: NO_REFERENCE } : withinSteps(task, [found.stop]);
}

export function perturbedPlan(task: Task, _screen?: Size): ReferencePlan {
  const found = stopOfTask(task);
  if (found === undefined) return { replayable: false, reason: NO_REFERENCE };
  if (!found.checked && task.evaluate.length > 0) return { replayable: false, reason: "its checks read the app's state, which no stop changes" };
  return withinSteps(task, [perturbStop(found.stop)]);
}
