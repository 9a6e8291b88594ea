import { extractJson } from '../reply-text';
import { text, type ChatMessage } from './messages';

/**
 * The task generator's prompt (docs/method.md, as in SEAgent): a text model reads a few real tasks
 * of one application and writes many new atomic tasks of growing difficulty, as JSON. From the
 * second round of a specialization on, it also reads the tasks of the earlier rounds and which of
 * them the planner solved, so that each round moves on: harder variants of what is solved, simpler
 * steps towards what is not, never the same task again.
 */
export const TASK_GENERATOR_PROMPT_VERSION = 'task-generator/v2';

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
  /** Tasks of the earlier rounds of the same run, oldest first, with how the planner did on them. */
  readonly earlier?: readonly EarlierTask[];
  /** How many earlier tasks there were in all, when `earlier` shows only the latest of them. */
  readonly earlierTotal?: number;
}

/** A task of an earlier round and what the judge said of the planner's attempts at it. */
export interface EarlierTask {
  readonly round: number;
  readonly instruction: string;
  /** Attempts judged and how many of them the judge approved; absent when none was judged. */
  readonly attempts?: { readonly judged: number; readonly approved: number };
}

/** Solved: the judge approved at least one attempt (CODA's reward is the judge's verdict). */
export const solved = (task: EarlierTask): boolean | undefined => (task.attempts === undefined || task.attempts.judged === 0 ? undefined : task.attempts.approved > 0);

/** The earlier rounds' section of the user message: solved, unsolved and unjudged tasks apart, each with its round and share. */
function earlierSection(tasks: readonly EarlierTask[], total: number): string {
  if (tasks.length === 0) return '';
  const line = (t: EarlierTask): string =>
    `- [round ${t.round}${t.attempts === undefined || t.attempts.judged === 0 ? '' : `, solved in ${t.attempts.approved} of ${t.attempts.judged} attempts`}] ${t.instruction}`;
  const groups: Array<[string, EarlierTask[]]> = [
    ['Solved by the agent: write harder variants of these (more steps, other values, goals combined), not the same tasks:', tasks.filter((t) => solved(t) === true)],
    ['Not solved by the agent: write simpler tasks that practise their steps one at a time, or other tasks of the same kind:', tasks.filter((t) => solved(t) === false)],
    ['Not judged (no attempt finished):', tasks.filter((t) => solved(t) === undefined)],
  ];
  const shown = total > tasks.length ? ` (the latest ${tasks.length} of ${total})` : '';
  return `Tasks of earlier rounds${shown}: the agent has practised them already; do not repeat them or reword them.\n${groups
    .filter(([, group]) => group.length > 0)
    .map(([heading, group]) => `${heading}\n${group.map(line).join('\n')}`)
    .join('\n')}\n\n`;
}

export function buildTaskGeneratorMessages(input: TaskGeneratorInput): ChatMessage[] {
  const seeds = input.seeds.map((seed, i) => `${i + 1}. ${seed.instruction}`).join('\n');
  const system = `You write practice tasks for a GUI agent that is learning to use ${input.software}. The agent works only through the application's graphical interface: mouse clicks, typing and keyboard shortcuts.

A good task:
- is atomic: one clear goal that takes at most ${input.maxSteps} GUI actions;
- is self-contained: it gives every number, expression or name it needs;
- has a result that can be checked from the screen or the application's state (a value stored in a variable, a plot shown, a setting changed);
- is new: not a copy or a light rewording of an example, of a task of an earlier round or of another task in your list.

Order the tasks from the easiest to the hardest. Reply with JSON only:
{"tasks": [{"instruction": "..."}, ...]}`;
  const avoid = (input.avoid ?? []).map((instruction) => `- ${instruction}`).join('\n');
  const earlier = earlierSection(input.earlier ?? [], input.earlierTotal ?? input.earlier?.length ?? 0);
  const user = `Here are real tasks for ${input.software}:\n${seeds}\n\n${earlier}${avoid === '' ? '' : `These tasks are already written; do not repeat them:\n${avoid}\n\n`}Write ${input.count} new tasks.`;
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
