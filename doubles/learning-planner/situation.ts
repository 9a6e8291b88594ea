import { describeAction, type GuiAction } from '../../core/actions';
import { formatPlannerOutput, type PlannerAction } from '../../core/planner-parser';
import { perturbedPlanFor, referencePlanFor } from '../../apps/policies';
import type { Size } from '../../core/smart-resize';
import type { Task } from '../../core/task';

/**
 * TEST DOUBLE support: what the learning planner double (policy.ts) reads from a planner prompt
 * and what it can answer. A *situation* is the application, the kind of task and the step of its
 * plan — all read from the prompt the planner sees (the instruction names the task, whose plan
 * gives the kind; the prompt's "Screen now, before step N" gives the step), never from a task id,
 * so what is learnt on generated tasks carries over to real tasks of the same kind. In each
 * situation the planner chooses among candidate thoughts: the right next step of the plan, and
 * the wrong one the scripted planner has always written at its error rate (the perturbed plan's).
 */

/** What a planner prompt says: the task's software (when named), its instruction and the step being planned. */
export interface PlannerView {
  readonly software?: string;
  readonly instruction: string;
  readonly step: number;
}

/** The candidates, in the order of a situation's logits. */
export const CANDIDATES = ['reference', 'perturbed'] as const;
export type Candidate = (typeof CANDIDATES)[number];

export interface Situation {
  /** `software|kind|step`: the key of the situation's logits. */
  readonly key: string;
  /** The reply each candidate writes (CANDIDATES order); equal texts when both plans agree at this step. */
  readonly replies: readonly [string, string];
}

const BOUNDARY = '\u0000';
const END_OF_INSTRUCTION = /Earlier steps \(their screenshots are no longer shown\):|<\|im_end\|>|\u0000|Screen (?:before|now, before) step \d+:/;

/**
 * Reads a planner prompt given as the text of each message (parts joined with nothing, images
 * left out or as placeholders): core/prompts/planner.ts writes the task as `Task (in X): ...` and
 * the screen being planned for as `Screen now, before step N:`. The same reading serves a served
 * chat request, an OpenRLHF prompt row and a LLaMA-Factory ShareGPT row (whose user turns may hold
 * several messages joined by the chat template's turn break).
 */
export function readPlannerView(messages: readonly string[]): PlannerView | undefined {
  const text = messages.join(BOUNDARY);
  const task = /(?:^|\u0000|\n)Task(?: \(in ([^)]*)\))?: /.exec(text);
  if (task === null) return undefined;
  const rest = text.slice(task.index + task[0].length);
  const end = END_OF_INSTRUCTION.exec(rest);
  const instruction = (end === null ? rest : rest.slice(0, end.index)).trim();
  const steps = [...text.matchAll(/Screen now, before step (\d+):/g)];
  const step = steps.length === 0 ? 1 : Number(steps.at(-1)?.[1]);
  return { ...(task[1] === undefined ? {} : { software: task[1] }), instruction, step };
}

/** What the planner's Action line says for `action`: the primitive that ends the episode, or the action described for the executor. */
export function plannerAction(action: GuiAction): PlannerAction {
  switch (action.type) {
    case 'answer':
      return { kind: 'answer', text: action.text };
    case 'done':
      return { kind: 'done' };
    case 'fail':
      return { kind: 'fail' };
    default:
      return { kind: 'instruction', text: describeAction(action) };
  }
}

/** The thought of a reference plan's step: the step's number and its action described, as a real planner could learn to write it. */
export const referenceThought = (step: number, action: GuiAction): string => `Step ${step} of the solution: ${describeAction(action)}.`;

/** The planner's reply carrying out `action` as step `step`: a thought ending in the action as a tag the scripted executor grounds. */
export function replyFor(step: number, action: GuiAction): string {
  return formatPlannerOutput(`${referenceThought(step, action)} [action: ${JSON.stringify(action)}]`, plannerAction(action));
}

/** The kind of a task: the shape of its plan (its actions' types in order), e.g. `click>type>done`. */
export const kindOf = (actions: readonly GuiAction[]): string => actions.map((a) => a.type).join('>');

/**
 * The situation of `task` at `step`, or why the planner has nothing to choose from (no replayable
 * plan: it answers FAIL then, as the scripted planner always has).
 */
export function situationOf(task: Task, step: number, screen: Size): Situation | { readonly reason: string } {
  const reference = referencePlanFor(task, screen);
  if (!reference.replayable) return { reason: reference.reason };
  const perturbed = perturbedPlanFor(task, screen);
  const right: GuiAction = reference.actions[step - 1] ?? { type: 'done' };
  const wrong: GuiAction = (perturbed.replayable ? perturbed.actions[step - 1] : undefined) ?? right;
  return { key: `${task.type}|${kindOf(reference.actions)}|${step}`, replies: [replyFor(step, right), replyFor(step, wrong)] };
}
