import { image, text, type ChatMessage } from './messages';

/**
 * The executor's prompt: UI-TARS-1.5's computer-use format in our own words. The headings and the
 * action calls are the ones UI-TARS-1.5 was trained on, so they stay exact (docs/formats.md;
 * core/executor-parser.ts reads the reply). The instruction is the planner's thought.
 */
export const EXECUTOR_PROMPT_VERSION = 'uitars-1.5-computer/v1';

const ACTION_SPACE = `click(start_box='(x1,y1)')
left_double(start_box='(x1,y1)')
right_single(start_box='(x1,y1)')
drag(start_box='(x1,y1)', end_box='(x3,y3)')
hotkey(key='ctrl c') # Keys in lower case, separated by spaces.
type(content='') # Escape quotes and backslashes as \\' and \\\\, line breaks as \\n. End the content with \\n to submit it.
scroll(start_box='(x1,y1)', direction='down or up or right or left')
wait() # Pause for 5 seconds, then look at the screen again.
finished(content='') # The instruction has been carried out.
call_user() # The instruction cannot be carried out without the user's help.`;

const prompt = (instruction: string): string => `You are a GUI agent. You receive an instruction, your earlier actions and a screenshot, and you perform the next action towards the instruction.

## Output Format
\`\`\`
Thought: ...
Action: ...
\`\`\`

## Action Space
${ACTION_SPACE}

## Note
- Use English in the Thought part.
- Say in one sentence in the Thought part which element you act on and why, then give exactly one action.

## User Instruction
${instruction}`;

export interface ExecutorPromptInput {
  /** The planner's thought for this step. */
  readonly instruction: string;
  readonly screenshotKey: string;
  /** Earlier executor replies of this episode, oldest first, sent as text only. */
  readonly history?: readonly string[];
}

export function buildExecutorMessages(input: ExecutorPromptInput): ChatMessage[] {
  return [
    { role: 'user', content: [text(prompt(input.instruction))] },
    ...(input.history ?? []).map((reply): ChatMessage => ({ role: 'assistant', content: reply })),
    { role: 'user', content: [image(input.screenshotKey)] },
  ];
}
