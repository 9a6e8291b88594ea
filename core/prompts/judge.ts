import { describeAction } from '../actions';
import { subsampleIndices } from '../judge/subsample';
import type { JudgeResolution } from '../judge/verdict';
import type { TrajectoryManifest } from '../trajectory';
import { image, text, type ChatMessage } from './messages';

/**
 * The judge's prompt: the task, every screenshot of the trajectory at one resolution and what each
 * step did, asking for SEAgent's reply shape (read by core/judge/reply.ts).
 */
export const JUDGE_PROMPT_VERSION = 'seagent-judge/v2';

const SYSTEM = `You review the work of a GUI agent that tried to complete a task in a desktop application. You see the task, the screen before each step (a sample of them when there are many), what the agent did at each step, and the screen after its last step. Judge only from what the screenshots show; the agent's own claims prove nothing.

Decide:
- Correctness: true only if the final state fully completes the task as written (for a question, the submitted answer must be right). When in doubt, false.
- Redundant: the numbers of the steps that did nothing useful toward the task (for example a click that changed nothing, or an action undone later).
- First_Error_Step: the number of the first step that moved away from completing the task, or null if no step did.

Steps are numbered from 1. Reply with your reasoning, then one JSON object in a \`\`\`json fence:
{"Thoughts": "...", "Correctness": true or false, "Redundant": [step numbers], "First_Error_Step": step number or null}`;

export interface JudgeStep {
  /** The screen before this step; undefined when it is left out to fit the judge's image limit. */
  readonly screenshotKey?: string;
  /** What the step did, in words. */
  readonly actionText: string;
}

export interface JudgePromptInput {
  readonly instruction: string;
  readonly steps: readonly JudgeStep[];
  /** The screen after the last step. */
  readonly finalScreenshotKey: string;
  readonly resolution: JudgeResolution;
  /** How many screens the trajectory has, when fewer are shown (a subsample). */
  readonly totalScreens?: number;
}

export function buildJudgeMessages(input: JudgePromptInput): ChatMessage[] {
  const shown = input.steps.filter((step) => step.screenshotKey !== undefined).length + 1;
  const note =
    input.totalScreens !== undefined && input.totalScreens > shown
      ? ` To keep the review short, ${shown} of its ${input.totalScreens} screens are shown: the first, the last and evenly spaced ones between; every step's action is listed.`
      : '';
  const parts = [text(`Task: ${input.instruction}\n\nThe agent took ${input.steps.length} step(s).${note}`)];
  input.steps.forEach((step, i) => {
    if (step.screenshotKey !== undefined) parts.push(text(`Screen before step ${i + 1}:`), image(step.screenshotKey, input.resolution));
    parts.push(text(`Step ${i + 1}: ${step.actionText}`));
  });
  parts.push(text('Screen after the last step:'), image(input.finalScreenshotKey, input.resolution), text('Your review:'));
  return [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: parts },
  ];
}

/**
 * The judge's view of a stored trajectory: each step's thought and the action it became (or why
 * there was none), and the final screen (the last step's screen when no final one was taken).
 * With more screens than `maxImages` (the judge endpoint's limit), a subsample is shown
 * (core/judge/subsample.ts); the final screen is always among them.
 */
export function judgeInputOf(manifest: TrajectoryManifest, resolution: JudgeResolution, maxImages = Number.POSITIVE_INFINITY): JudgePromptInput {
  const total = manifest.steps.length + 1;
  const shown = new Set(subsampleIndices(total, Math.min(total, maxImages)));
  const steps = manifest.steps.map((step, i) => ({
    ...(shown.has(i) ? { screenshotKey: step.screenshotKey } : {}),
    actionText: `${step.planner.thought} -> ${step.action === null ? `no action (${step.error ?? 'malformed output'})` : describeAction(step.action)}`,
  }));
  return {
    instruction: manifest.task.instruction,
    steps,
    finalScreenshotKey: manifest.finalScreenshotKey ?? manifest.steps.at(-1)?.screenshotKey ?? manifest.initialScreenshotKey,
    resolution,
    ...(shown.size < total ? { totalScreens: total } : {}),
  };
}
