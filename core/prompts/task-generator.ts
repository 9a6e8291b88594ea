import { extractJson } from '../reply-text';
import { text, type ChatMessage } from './messages';

/**
 * The task generator's prompt (REFERENCE.md §1, as in SEAgent): a text model reads a few real tasks
 * of one application and writes many new atomic tasks of growing difficulty, as JSON.
 */
export const TASK_GENERATOR_PROMPT_VERSION = 'task-generator/v1';

export interface SeedTask {
  readonly id: string;
  readonly instruction: string;
}

export interface TaskGeneratorInput {
  readonly software: string;
  readonly seeds: readonly SeedTask[];
  /** How many tasks to ask for. */
  readonly count: number;
  /** The step budget each task must fit in. */
  readonly maxSteps: number;
  /** Tasks already written for this set (by earlier requests), not to be written again. */
  readonly avoid?: readonly string[];
}

export function buildTaskGeneratorMessages(input: TaskGeneratorInput): ChatMessage[] {
  const seeds = input.seeds.map((seed, i) => `${i + 1}. ${seed.instruction}`).join('\n');
  const system = `You write practice tasks for a GUI agent that is learning to use ${input.software}. The agent works only through the application's graphical interface: mouse clicks, typing and keyboard shortcuts.

A good task:
- is atomic: one clear goal that takes at most ${input.maxSteps} GUI actions;
- is self-contained: it gives every number, expression or name it needs;
- has a result that can be checked from the screen or the application's state (a value stored in a variable, a plot shown, a setting changed);
- is new: not a copy or a light rewording of an example or of another task in your list.

Order the tasks from the easiest to the hardest. Reply with JSON only:
{"tasks": [{"instruction": "..."}, ...]}`;
  const avoid = (input.avoid ?? []).map((instruction) => `- ${instruction}`).join('\n');
  const user = `Here are real tasks for ${input.software}:\n${seeds}\n\n${avoid === '' ? '' : `These tasks are already written; do not repeat them:\n${avoid}\n\n`}Write ${input.count} new tasks.`;
  return [
    { role: 'system', content: system },
    { role: 'user', content: [text(user)] },
  ];
}

export type TaskGeneratorReply =
  | { readonly ok: true; readonly instructions: string[]; readonly invalid: string[] }
  | { readonly ok: false; readonly reason: string };

/** Longest instruction kept: a task is one goal, not an essay. */
export const MAX_INSTRUCTION_LENGTH = 2000;

/**
 * The task instructions in a generator reply: `{"tasks": [...]}` or a bare list, items as objects
 * with an `instruction` or as plain strings. JSON damaged in the usual ways (a fence around it,
 * Python literals, single quotes, trailing commas) is repaired by extractJson. Items that are not
 * usable instructions are listed in `invalid` with the reason; a reply with no list at all is a
 * failure with its reason. Deduplication is not done here (core/task-dedupe.ts).
 */
export function readTaskGeneratorReply(reply: string): TaskGeneratorReply {
  const json = extractJson(reply);
  if (!json.ok) return json;
  const value = json.value;
  const items = Array.isArray(value) ? value : typeof value === 'object' && value !== null && 'tasks' in value ? value.tasks : undefined;
  if (!Array.isArray(items)) return { ok: false, reason: 'the reply has no list of tasks' };
  const instructions: string[] = [];
  const invalid: string[] = [];
  items.forEach((item: unknown, i) => {
    const instruction =
      typeof item === 'string' ? item : typeof item === 'object' && item !== null && 'instruction' in item ? item.instruction : undefined;
    if (typeof instruction !== 'string' || instruction.trim() === '') invalid.push(`item ${i + 1} has no instruction`);
    else if (instruction.trim().length > MAX_INSTRUCTION_LENGTH) invalid.push(`item ${i + 1} is longer than ${MAX_INSTRUCTION_LENGTH} characters`);
    else instructions.push(instruction.trim().replace(/\s+/g, ' '));
  });
  return { ok: true, instructions, invalid };
}
