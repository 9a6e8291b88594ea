import { describeAction, guiActionSchema, type GuiAction } from '../../core/actions';
import { formatExecutorOutput } from '../../core/executor-parser';
import { formatPlannerOutput, type PlannerAction } from '../../core/planner-parser';
import { perturbedPlanFor, referencePlanFor } from '../../core/policies';
import { smartResize, type Size } from '../../core/smart-resize';
import type { Task } from '../../core/task';
import type { ChatRequest, Policy, Reply } from '../openai-server';
import { prng } from './seeded';

/**
 * TEST DOUBLE. The scripted planner and executor, replying exactly as a CODA planner and
 * UI-TARS-1.5 write, for the tasks of every software with a reference policy in core/policies
 * (KAlgebra, TeXstudio). The planner finds the task by its instruction (and software, when the
 * prompt names it), reads the step number from its prompt and replays the task's reference plan; with probability
 * `errorRate` a step comes from the perturbed plan instead, so some rollouts fail their checks.
 * Its thought ends with the intended action as a tag, `[action: {...}]`, which the scripted
 * executor grounds into a UI-TARS call in the coordinates of the image it was sent.
 */

export interface ScriptedPolicyOptions {
  readonly tasks: readonly Task[];
  /** Tasks known by instruction only (generated ones, with their plan as `ans`), tried after `tasks`. */
  readonly resolve?: (instruction: string) => Task | undefined;
  /** The desktops' screen: reference plans are in its pixels. */
  readonly screen: Size;
  readonly plannerModel: string;
  readonly executorModel: string;
  /** Share of steps taken from the perturbed plan. */
  readonly errorRate?: number;
  /** Share of replies that are not in the expected format at all. */
  readonly malformedRate?: number;
  readonly seed?: number;
}

const ACTION_TAG = /\[action: (\{.*\})\]\s*$/;

export const textParts = (request: ChatRequest): string[] =>
  request.messages.flatMap((m) =>
    typeof m.content === 'string' ? [m.content] : m.content.filter((p) => p.type === 'text').map((p) => String(p.text)),
  );

/** Width and height of the last PNG image in the request, read from its IHDR chunk. */
export function lastImageSize(request: ChatRequest): Size | undefined {
  let size: Size | undefined;
  for (const m of request.messages) {
    if (typeof m.content === 'string') continue;
    for (const part of m.content) {
      const url = (part.image_url as { url?: string } | undefined)?.url;
      if (part.type !== 'image_url' || url === undefined || !url.startsWith('data:image/png;base64,')) continue;
      const head = Buffer.from(url.slice('data:image/png;base64,'.length, 'data:image/png;base64,'.length + 44), 'base64');
      if (head.length >= 24) size = { width: head.readUInt32BE(16), height: head.readUInt32BE(20) };
    }
  }
  return size;
}

function plannerAction(action: GuiAction): PlannerAction {
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

export function scriptedAgentPolicy(opts: ScriptedPolicyOptions): Policy {
  const random = prng(opts.seed ?? 1);
  const taskOf = (instruction: string, software: string | undefined): Task | undefined =>
    opts.tasks.find((t) => t.instruction === instruction && (software === undefined || t.type === software)) ?? opts.resolve?.(instruction);
  const malformed = (): boolean => random() < (opts.malformedRate ?? 0);

  const planner = (request: ChatRequest): Reply => {
    const texts = textParts(request);
    const named = texts.map((t) => /^Task(?: \(in ([^)]*)\))?: ([\s\S]*)$/.exec(t)).find((m) => m !== null);
    // The next action of the plan follows the earlier turns that named one (a malformed turn named none).
    const step = texts.join('\n').split('[action: {').length;
    const task = named === undefined ? undefined : taskOf((named[2] ?? '').trim(), named[1]);
    const samples = Array.from({ length: request.n }, (): string => {
      if (task === undefined) {
        return formatPlannerOutput('This is not a task I have a script for.', { kind: 'fail' });
      }
      if (malformed()) return 'I think the next step is to look around the window.';
      const wrong = random() < (opts.errorRate ?? 0);
      const plan = (wrong ? perturbedPlanFor : referencePlanFor)(task, opts.screen);
      if (!plan.replayable) return formatPlannerOutput(`The reference has no replayable answer: ${plan.reason}.`, { kind: 'fail' });
      const action: GuiAction = plan.actions[step - 1] ?? { type: 'done' };
      const thought = `Step ${step} of the solution: ${describeAction(action)}. [action: ${JSON.stringify(action)}]`;
      return formatPlannerOutput(thought, plannerAction(action));
    });
    return { texts: samples };
  };

  const executor = (request: ChatRequest): Reply => {
    const instruction = textParts(request)
      .map((t) => /## User Instruction\n([\s\S]*)$/.exec(t)?.[1])
      .find((t) => t !== undefined);
    const tag = instruction === undefined ? null : ACTION_TAG.exec(instruction.trim());
    const parsed = tag === null ? undefined : guiActionSchema.safeParse(JSON.parse(tag[1] ?? 'null'));
    const sent = lastImageSize(request) ?? opts.screen;
    const view = { screen: opts.screen, modelImage: smartResize(sent.width, sent.height) };
    return {
      texts: Array.from({ length: request.n }, () => {
        if (parsed === undefined || !parsed.success || malformed()) return 'Thought: I cannot tell what to do.\nAction: click(start_box=';
        return formatExecutorOutput(`I will ${describeAction(parsed.data)}.`, parsed.data, view);
      }),
    };
  };

  return (request) => {
    if (request.model === opts.plannerModel) return planner(request);
    if (request.model === opts.executorModel) return executor(request);
    return { status: 404, message: `The model \`${request.model}\` does not exist.` };
  };
}
