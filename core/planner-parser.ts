import { MAX_TEXT_LENGTH, type GuiAction } from './actions';
import { splitThoughtAction } from './reply-text';

/**
 * The planner's output (CODA, ANS variant): `Thought: ...\nAction: ...`. The thought is what the
 * executor receives; the action is either an instruction for the executor or one of the primitives
 * that end the episode without it:
 * - `ANS <answer>` submits an answer, `DONE` says the task is complete, `FAIL` says it cannot be.
 *   Primitives may be wrapped in backticks or a ``` fence, as CODA's prompt shows them.
 * - `WAIT` is an instruction like any other: the executor turns it into `wait()`. Keeping it out of
 *   the primitives leaves one place (the executor) that produces GUI actions.
 * - Without an `Action:` line, a fenced primitive anywhere in the text still counts (CODA extracts
 *   primitives from fences); otherwise the output is malformed.
 * - An instruction needs a non-empty thought, since the thought is all the executor gets.
 */

export type PlannerAction =
  | { readonly kind: 'instruction'; readonly text: string }
  | { readonly kind: 'answer'; readonly text: string }
  | { readonly kind: 'done' }
  | { readonly kind: 'fail' };

export type PlannerParse =
  | { readonly ok: true; readonly thought: string; readonly action: PlannerAction }
  | { readonly ok: false; readonly reason: string };

const PRIMITIVE = /^(?:ANS(?=[\s`]|$)([\s\S]*)|(DONE|FAIL)\.?)$/;

function primitiveOf(text: string): PlannerAction | { error: string } | undefined {
  const match = PRIMITIVE.exec(text);
  if (match === null) return undefined;
  if (match[2] === 'DONE') return { kind: 'done' };
  if (match[2] === 'FAIL') return { kind: 'fail' };
  const answer = (match[1] ?? '').trim();
  if (answer === '') return { error: 'ANS without an answer' };
  if (answer.length > MAX_TEXT_LENGTH) return { error: `the answer is longer than ${MAX_TEXT_LENGTH} characters` };
  return { kind: 'answer', text: answer };
}

/** Removes ``` fences and `backticks` around an action, keeping what they wrap. */
const unwrap = (text: string): string =>
  text
    .trim()
    .replace(/^```(?:[A-Za-z]*\n)?([\s\S]*?)\n?```$/, '$1')
    .replace(/^`([^`]*)`$/, '$1')
    .trim();

export function parsePlannerOutput(raw: string): PlannerParse {
  const { text, thought, action } = splitThoughtAction(raw);
  if (action === undefined) {
    for (const fence of text.matchAll(/```([\s\S]*?)```/g)) {
      const primitive = primitiveOf((fence[1] ?? '').trim());
      if (primitive !== undefined) return settle(thought, primitive);
    }
    return { ok: false, reason: 'no "Action:" line in the planner output' };
  }
  const actionText = unwrap(action);
  if (actionText === '') return { ok: false, reason: 'the "Action:" line is empty' };
  return settle(thought, primitiveOf(actionText) ?? { kind: 'instruction', text: actionText });
}

function settle(thought: string, action: PlannerAction | { error: string }): PlannerParse {
  if ('error' in action) return { ok: false, reason: action.error };
  if (action.kind === 'instruction' && thought === '') {
    return { ok: false, reason: 'an instruction needs a thought: the executor only sees the thought' };
  }
  return { ok: true, thought, action };
}

/** The text of an action as the planner writes it after `Action: `. */
export function plannerActionText(action: PlannerAction): string {
  switch (action.kind) {
    case 'instruction':
      return action.text;
    case 'answer':
      return `ANS ${action.text}`;
    case 'done':
      return 'DONE';
    case 'fail':
      return 'FAIL';
  }
}

/** A planner reply in the format parsePlannerOutput reads (used by scripted model doubles). */
export const formatPlannerOutput = (thought: string, action: PlannerAction): string =>
  `Thought: ${thought}\nAction: ${plannerActionText(action)}`;

/** The GUI action a primitive ends the episode with; undefined for an instruction (the executor acts). */
export function primitiveAction(action: PlannerAction): GuiAction | undefined {
  switch (action.kind) {
    case 'answer':
      return { type: 'answer', text: action.text };
    case 'done':
      return { type: 'done' };
    case 'fail':
      return { type: 'fail' };
    case 'instruction':
      return undefined;
  }
}
