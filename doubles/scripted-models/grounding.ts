import { isDeepStrictEqual } from 'node:util';
import type { GuiAction } from '../../core/actions';
import type { Size } from '../../core/smart-resize';
import type { Task } from '../../core/task';
import { planSteps } from '../learning-planner/situation';

/**
 * TEST DOUBLE support: what the scripted executor can ground. UI-TARS finds on the screen what a
 * thought names; the double reads no pixels, so it knows the thoughts the plans write instead —
 * every step of each known task's reference and perturbed plans, as the planner double words it —
 * and the action each carries out. It never sees the task (the executor's prompt holds only the
 * planner's thought), so the thoughts of all known tasks share one table, looked up by exact text.
 */

/**
 * The action of each thought a plan of `tasks` writes, the planner's primitives aside. A thought that
 * plans write for different actions is left out, so the executor grounds none of them.
 */
export function groundings(tasks: Iterable<Task>, screen: Size): ReadonlyMap<string, GuiAction> {
  const actions = new Map<string, GuiAction>();
  const ambiguous = new Set<string>();
  for (const task of tasks) {
    for (const { thought, action } of planSteps(task, screen)) {
      // ANS, DONE and FAIL are the planner's own primitives: the executor is never asked to carry them out.
      if (action.type === 'answer' || action.type === 'done' || action.type === 'fail') continue;
      const known = actions.get(thought);
      if (known === undefined) actions.set(thought, action);
      else if (!isDeepStrictEqual(known, action)) ambiguous.add(thought);
    }
  }
  for (const thought of ambiguous) actions.delete(thought);
  return actions;
}
