import type { GuiAction } from '../actions';
import type { Task } from '../task';

/**
 * What every reference policy shares: a plan is the GUI actions that carry out a task's `ans`
 * (its reference solution), or the reason there is none; a perturbed plan makes one result
 * wrong, so a task's checks can be shown to fail it.
 */

export type ReferencePlan =
  | { readonly replayable: true; readonly actions: GuiAction[] }
  | { readonly replayable: false; readonly reason: string };

export type StopAction = Extract<GuiAction, { type: 'answer' | 'done' | 'fail' }>;

/** The stop an `ans` line names: `ANS <answer>`, `FAIL` or `DONE`; undefined for any other line. */
export function stopOf(line: string): StopAction | undefined {
  const answer = /^ANS\s+(.+)$/.exec(line.trim());
  if (answer !== null) return { type: 'answer', text: (answer[1] ?? '').trim() };
  if (line.trim() === 'FAIL') return { type: 'fail' };
  if (line.trim() === 'DONE') return { type: 'done' };
  return undefined;
}

/** The wrong stop: a numeric answer plus one, another answer with a `1` appended; FAIL for DONE and DONE for FAIL. */
export function perturbStop(stop: StopAction): StopAction {
  switch (stop.type) {
    case 'answer': {
      const n = Number(stop.text);
      return { type: 'answer', text: stop.text !== '' && Number.isFinite(n) ? String(n + 1) : `${stop.text}1` };
    }
    case 'fail':
      return { type: 'done' };
    case 'done':
      return { type: 'fail' };
  }
}

/** The plan, unless it needs more steps than the task allows (its stop counts as a step). */
export function withinSteps(task: Task, actions: GuiAction[]): ReferencePlan {
  if (actions.length > task.steps) return { replayable: false, reason: `the plan needs ${actions.length} steps, the task allows ${task.steps}` };
  return { replayable: true, actions };
}
