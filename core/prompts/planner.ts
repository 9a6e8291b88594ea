import { formatPlannerOutput } from '../planner-parser';
import { image, text, type ChatMessage } from './messages';

/**
 * The planner's prompt, CODA's ANS variant in our own words: the planner writes a thought naming
 * the next immediate goal and the exact element, then an action that is an instruction for the
 * executor or one of the primitives ANS / DONE / FAIL (read by core/planner-parser.ts).
 */
export const PLANNER_PROMPT_VERSION = 'coda-planner-ans/v2';

const SYSTEM = `You operate a desktop application for a user. Each turn you see the task, what was done so far and the current screen, and you decide the one next step. A helper carries out that step as a single mouse or keyboard action; it reads only your Thought.

## Output format
Thought: what the screen shows now, the immediate goal, and exactly which element to act on and how
Action: the step as a short instruction, or one of the primitives below

## Primitives (alone on the Action line)
ANS <answer>   the task asks a question and the screen shows enough to answer it, e.g. ANS 5
DONE           the task is complete
FAIL           the task cannot be completed

## Rules
- Name the target element precisely: its label or text, its place on the screen, its kind (button, menu, field, tab).
- To replace the text of a field, select or delete what is there before typing.
- One step per turn: do not plan several actions at once.
- Write in English.`;

/** One earlier turn of the planner: what it said, and the screen it saw before acting. */
export interface PlannerTurn {
  readonly thought: string;
  readonly actionText: string;
  readonly screenshotKey: string;
}

export interface PlannerPromptInput {
  readonly instruction: string;
  readonly history: readonly PlannerTurn[];
  /** The screen now, before the step being planned. */
  readonly screenshotKey: string;
  /** The application's name, when it helps the planner (e.g. "KAlgebra"). */
  readonly software?: string;
}

const turnText = (turn: PlannerTurn): string => formatPlannerOutput(turn.thought, { kind: 'instruction', text: turn.actionText });

/**
 * CODA's context window: only the previous and the current screenshot are images; earlier turns
 * are text (thought and action), which keeps long trajectories inside the model's context. After
 * the system turn the roles alternate user, assistant, user, as every chat server and template
 * accepts (LLaMA-Factory's API answers 400 "Only supports u/a/u/a/u..." to two user turns in a
 * row): the task opens the first user turn, before the first screenshot.
 */
export function buildPlannerMessages(input: PlannerPromptInput): ChatMessage[] {
  const previous = input.history.at(-1);
  const earlier = input.history.slice(0, -1);
  const intro = [input.software === undefined ? `Task: ${input.instruction}` : `Task (in ${input.software}): ${input.instruction}`];
  if (earlier.length > 0) {
    const lines = earlier.map((turn, i) => `Step ${i + 1}\n${turnText(turn)}`);
    intro.push(`Earlier steps (their screenshots are no longer shown):\n\n${lines.join('\n\n')}`);
  }
  const step = input.history.length + 1;
  const now = [text(`Screen now, before step ${step}:`), image(input.screenshotKey), text('What is the next step?')];
  const opening = text(`${intro.join('\n\n')}\n\n`);
  if (previous === undefined) {
    return [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: [opening, ...now] },
    ];
  }
  return [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: [opening, text(`Screen before step ${step - 1}:`), image(previous.screenshotKey)] },
    { role: 'assistant', content: turnText(previous) },
    { role: 'user', content: now },
  ];
}
