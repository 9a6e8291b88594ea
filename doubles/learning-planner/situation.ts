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
 * chat request, an OpenRLHF prompt row and a LLaMA-Factory ShareGPT row (images as <image> tokens).
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

/** The thought of step `step` carrying out `action`: plain words, as a planner writes them (the executor double grounds the plans' thoughts). */
export const thoughtFor = (step: number, action: GuiAction): string => `Step ${step} of the solution: ${describeAction(action)}.`;

/** The planner's reply carrying out `action` as step `step`. */
export const replyFor = (step: number, action: GuiAction): string => formatPlannerOutput(thoughtFor(step, action), plannerAction(action));

/** The kind of a task: the shape of its plan (its actions' types in order), e.g. `click>type>done`. */
export const kindOf = (actions: readonly GuiAction[]): string => actions.map((a) => a.type).join('>');

/** A task's two plans: the reference's actions, and the perturbed plan's when it has one. */
interface Plans {
  readonly reference: readonly GuiAction[];
  readonly perturbed: readonly GuiAction[] | undefined;
}

function plansOf(task: Task, screen: Size): Plans | { readonly reason: string } {
  const reference = referencePlanFor(task, screen);
  if (!reference.replayable) return { reason: reference.reason };
  const perturbed = perturbedPlanFor(task, screen);
  return { reference: reference.actions, perturbed: perturbed.replayable ? perturbed.actions : undefined };
}

/** The right and the wrong action at `step`: DONE past the reference's end, the right one where the perturbed plan has none. */
function actionsAt(plans: Plans, step: number): readonly [GuiAction, GuiAction] {
  const right: GuiAction = plans.reference[step - 1] ?? { type: 'done' };
  return [right, plans.perturbed?.[step - 1] ?? right];
}

/**
 * The situation of `task` at `step`, or why the planner has nothing to choose from (no replayable
 * plan: it answers FAIL then, as the scripted planner always has).
 */
export function situationOf(task: Task, step: number, screen: Size): Situation | { readonly reason: string } {
  const plans = plansOf(task, screen);
  if ('reason' in plans) return plans;
  const [right, wrong] = actionsAt(plans, step);
  return { key: `${task.type}|${kindOf(plans.reference)}|${step}`, replies: [replyFor(step, right), replyFor(step, wrong)] };
}

/** One step the planner double may write for a task: its thought and the action the thought carries out. */
export interface PlanStep {
  readonly thought: string;
  readonly action: GuiAction;
}

/**
 * Every step the planner double may write for `task` — both candidates of each situation, from
 * step 1 to one past the longer plan (where both are DONE) — or none without a replayable plan.
 */
export function planSteps(task: Task, screen: Size): PlanStep[] {
  const plans = plansOf(task, screen);
  if ('reason' in plans) return [];
  const last = Math.max(plans.reference.length, plans.perturbed?.length ?? 0) + 1;
  return Array.from({ length: last }, (_, i) => actionsAt(plans, i + 1).map((action) => ({ thought: thoughtFor(i + 1, action), action }))).flat();
}
