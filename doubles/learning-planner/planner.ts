import { formatPlannerOutput } from '../../core/planner-parser';
import type { Size } from '../../core/smart-resize';
import type { Task } from '../../core/task';
import type { LearningPolicy } from './policy';
import { planSteps, readPlannerView, situationOf, type Situation } from './situation';

/**
 * TEST DOUBLE: the learning planner answering a prompt. The prompt names a task (found by its
 * instruction); the situation's candidates are the plan's right step and the perturbed one, and
 * the policy's logits choose between them. A prompt about no known task, or a task without a
 * replayable plan, gets FAIL, as the scripted planner always answered.
 */

export type TaskOf = (instruction: string, software: string | undefined) => Task | undefined;

export type Reading = { readonly situation: Situation } | { readonly reply: string };

/**
 * The step the prompt plans: one more than the earlier turns whose thought is one of the task's
 * plan steps (a malformed turn wrote none of them, so the plan's step is planned again). Each
 * earlier turn appears once in the prompt, as `Thought: ...` then `Action: ...` (core/prompts/planner.ts).
 */
function stepOf(messages: readonly string[], task: Task, screen: Size): number {
  const text = messages.join('\n');
  const thoughts = new Set(planSteps(task, screen).map((s) => s.thought));
  let earlier = 0;
  for (const thought of thoughts) earlier += text.split(`Thought: ${thought}\nAction:`).length - 1;
  return earlier + 1;
}

/** What a planner prompt (the text of each message) lets the double say. */
export function readPrompt(messages: readonly string[], taskOf: TaskOf, screen: Size): Reading {
  const view = readPlannerView(messages);
  const task = view === undefined ? undefined : taskOf(view.instruction, view.software);
  if (task === undefined) return { reply: formatPlannerOutput('This is not a task I have a script for.', { kind: 'fail' }) };
  const situation = situationOf(task, stepOf(messages, task, screen), screen);
  if ('reason' in situation) return { reply: formatPlannerOutput(`The reference has no replayable answer: ${situation.reason}.`, { kind: 'fail' }) };
  return { situation };
}

/** `n` replies to a prompt drawn from `policy`, sample i with the generator `randomOf(i)` (keyed by what it decides). */
export function sampleReplies(reading: Reading, policy: LearningPolicy, n: number, randomOf: (sample: number) => () => number): Array<{ reply: string; candidate?: number }> {
  return Array.from({ length: n }, (_, sample) => {
    if ('reply' in reading) return { reply: reading.reply };
    const candidate = policy.sample(reading.situation.key, randomOf(sample));
    return { reply: reading.situation.replies[candidate] as string, candidate };
  });
}

/** Which candidate a reply is, when it is one of the situation's and the candidates differ (else it teaches nothing). */
export function candidateOf(situation: Situation, reply: string): number | undefined {
  const [right, wrong] = situation.replies;
  if (right === wrong) return undefined;
  const index = situation.replies.indexOf(reply.trim());
  return index === -1 ? undefined : index;
}
