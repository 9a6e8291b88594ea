import { MAX_TEXT_LENGTH, type GuiAction } from './actions';
import { splitThoughtAction } from './reply-text';

/**
 * The planner's output (CODA, ANS variant): `Thought: ...\nAction: ...`. The thought is what the
 * executor receives; the action is either an instruction for the executor or one of the primitives
 * that end the episode without it, read as ScienceBoard's agent code reads them so that a stop is
 * scored as there (sci/base/prompt.py, CodeLike):
 * - The code is the text after the last `Action:`; when that text holds ``` fences, or when there
 *   is no `Action:` line, the codes are the fences' contents as ScienceBoard's extract_planner takes
 *   them: the regex ```(?:\w*\s+)?(...)``` (a leading word and whitespace is a language tag, so
 *   the inline ```ANS 5``` CODA's prompt shows yields `5`, which is no primitive), each stripped.
 * - A code starting with ANS, DONE or FAIL is a primitive (is_primitive). It runs as CodeLike's
 *   __call__ runs it: split on single spaces, the first part names the primitive, the rest are its
 *   arguments. `ANS <answer>` submits the answer, whose arguments are those parts (`ANS  5` gives
 *   ["", "5"]); `DONE` and `FAIL` take none. A primitive that does not run so (`DONE.`, `DONE now`,
 *   `ANSWER`) raises there and the next fenced code is tried; when none runs the step is wasted:
 *   here the output is malformed. An unfenced Action line that does not run so is an instruction,
 *   as ScienceBoard hands text outside fences to the grounder.
 * - `WAIT` is an instruction like any other: the executor turns it into `wait()`. Keeping it out of
 *   the primitives leaves one place (the executor) that produces GUI actions.
 * - An instruction needs a non-empty thought, since the thought is all the executor gets.
 */

export type PlannerAction =
  | { readonly kind: 'instruction'; readonly text: string }
  /** `text` is everything after `ANS ` (empty for a bare `ANS`): answerArgs gives ScienceBoard's arguments. */
  | { readonly kind: 'answer'; readonly text: string }
  | { readonly kind: 'done' }
  | { readonly kind: 'fail' };

export type PlannerParse =
  | { readonly ok: true; readonly thought: string; readonly action: PlannerAction }
  | { readonly ok: false; readonly reason: string };

/** The primitives that end an episode (ScienceBoard's Primitive.DONE, FAIL and ANS). */
const STOPS = ['ANS', 'DONE', 'FAIL'] as const;


/** The arguments ScienceBoard's ANS receives for an answer: its text split on single spaces, none for an empty one. */
export const answerArgs = (text: string): string[] => (text === '' ? [] : text.split(' '));

/** The characters Python's str.strip() removes without arguments (str.isspace). */
const PY_SPACE = '[\\t\\n\\v\\f\\r \\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const IS_PY_SPACE = new RegExp(`^${PY_SPACE}$`);

/** Python's str.strip(), scanning from both ends (a regex anchored at the end would be quadratic on long runs of spaces). */
function strip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && IS_PY_SPACE.test(text[start]!)) start++;
  while (end > start && IS_PY_SPACE.test(text[end - 1]!)) end--;
  return text.slice(start, end);
}

/** A fence's language tag as ScienceBoard's pattern takes it (`\w*\s+`, Python's \w and \s). */
const LANGUAGE_TAG = new RegExp(`^[\\p{L}\\p{N}_]*${PY_SPACE}+`, 'u');

/**
 * The codes of fences as ScienceBoard's CodeLike.extract_planner takes them, each stripped: its
 * regex ```(?:\w*\s+)?([\w\W]*?)```, found with indexOf so that long replies stay linear.
 */
export function fencedCodes(text: string): string[] {
  const codes: string[] = [];
  for (let open = text.indexOf('```'); open >= 0; ) {
    const close = text.indexOf('```', open + 3);
    if (close < 0) break;
    const inner = text.slice(open + 3, close);
    codes.push(strip(inner.slice(LANGUAGE_TAG.exec(inner)?.[0].length ?? 0)));
    open = text.indexOf('```', close + 3);
  }
  return codes;
}

/** Whether ScienceBoard treats the code as a primitive call (CodeLike.is_primitive). */
const isPrimitive = (code: string): boolean => STOPS.some((name) => code.startsWith(name));

/** The primitive a code runs as ScienceBoard calls it; undefined when the call fails there. */
function run(code: string): PlannerAction | { error: string } | undefined {
  const [name, ...args] = code.split(' ');
  if (name === 'ANS') {
    const text = code.slice('ANS '.length);
    return text.length > MAX_TEXT_LENGTH ? { error: `the answer is longer than ${MAX_TEXT_LENGTH} characters` } : { kind: 'answer', text };
  }
  if ((name === 'DONE' || name === 'FAIL') && args.length === 0) return { kind: name === 'DONE' ? 'done' : 'fail' };
  return undefined;
}

/** The first primitive among fenced codes that runs; a reason when some look like primitives and none runs. */
function firstRunning(codes: readonly string[]): PlannerAction | { error: string } | undefined {
  const primitives = codes.filter(isPrimitive);
  for (const code of primitives) {
    const action = run(code);
    if (action !== undefined) return action;
  }
  if (primitives.length === 0) return undefined;
  return { error: `${JSON.stringify(primitives[0]!.slice(0, 80))} is not a primitive ScienceBoard runs (ANS <answer>, DONE or FAIL, split on single spaces)` };
}

export function parsePlannerOutput(raw: string): PlannerParse {
  const { thought, action } = splitThoughtAction(raw);
  if (action === undefined) {
    return settle(thought, firstRunning(fencedCodes(raw)) ?? { error: 'no "Action:" line in the planner output' });
  }
  const actionText = strip(action);
  if (actionText === '') return { ok: false, reason: 'the "Action:" line is empty' };
  const fenced = fencedCodes(actionText);
  if (fenced.length > 0) return settle(thought, firstRunning(fenced) ?? { kind: 'instruction', text: actionText });
  return settle(thought, run(actionText) ?? { kind: 'instruction', text: actionText });
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
      return action.text === '' ? 'ANS' : `ANS ${action.text}`;
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
