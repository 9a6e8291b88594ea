import { describeAction, type GuiAction } from '../../core/actions';
import { formatExecutorOutput } from '../../core/executor-parser';
import { smartResize, type Size } from '../../core/smart-resize';
import type { Task } from '../../core/task';
import { readPrompt, sampleReplies, type TaskOf } from '../learning-planner/planner';
import { LearningPolicy, POLICY_FILE } from '../learning-planner/policy';
import type { ChatRequest, Policy, Reply } from '../openai-server';
import { groundings } from './grounding';
import { keyedRandom, requestKey } from './seeded';

/**
 * TEST DOUBLE. The scripted planner and executor, replying exactly as a CODA planner and
 * UI-TARS-1.5 write, for the tasks of every software with a reference policy in apps/policies.ts.
 * The planner is the learning planner double (doubles/learning-planner/): it finds the task by
 * its instruction (and software, when the prompt names it), reads the step from its prompt, and
 * chooses between the plan's right step and the perturbed one by the logits of the model it is
 * asked for — the base planner's (the perturbed step at `errorRate`) or those a trainer double
 * saved in a LoRA adapter loaded through vLLM's runtime route. Its thought is plain words, e.g.
 * `Step 2 of the solution: click at (412, 300).`, with nothing a real planner would not write. Like
 * vLLM at temperature > 0, it samples (whatever temperature is asked: it stands for a sampled
 * planner), each sample's draw keyed by the request's seed (seeded.ts requestKey), the sample's
 * index and the run seed, as vLLM's seeded sampling is: the same seed gives the same draw whichever
 * model answers, so the base planner and a specialist asked at the same step of the same attempt
 * meet the same draw.
 * The executor stands for UI-TARS-1.5 grounding the planner's thought on the screenshot. It reads no
 * pixels: it recognises the thoughts the plans write — each step of the reference and the perturbed
 * plan of every task it knows, generated ones included (grounding.ts), by exact text — and answers
 * that step's action as a UI-TARS call in the coordinates of the image it was sent. Any other text
 * it cannot ground: it answers a call cut short, which the pipeline scores as a malformed step
 * (reward 0), as a real UI-TARS may fail to ground a vague thought. Compared with no real UI-TARS
 * run (none runs on this CPU): its replies are in UI-TARS-1.5's format (docs/formats.md), read by
 * core/executor-parser.ts; how often a real executor grounds a given wording is not modelled.
 */

export interface ScriptedPolicyOptions {
  readonly tasks: readonly Task[];
  /** Tasks known by instruction only (generated ones, with their plan as `ans`), tried after `tasks`. */
  readonly resolve?: (instruction: string) => Task | undefined;
  /** Every task `resolve` knows: the executor grounds their plans' thoughts as it does those of `tasks` (it never sees an instruction). */
  readonly generated?: () => Iterable<Task>;
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

/** What the executor answers to a thought it cannot ground: a call cut short, which the pipeline scores as a malformed step. */
const UNGROUNDED = 'Thought: I cannot tell what to do.\nAction: click(start_box=';

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

export function scriptedAgentPolicy(opts: ScriptedPolicyOptions): Policy {
  const runSeed = opts.seed ?? 1;
  const taskOf: TaskOf = (instruction, software) =>
    opts.tasks.find((t) => t.instruction === instruction && (software === undefined || t.type === software)) ?? opts.resolve?.(instruction);
  /** Whether a request's sample is not in the expected format: keyed by the role, the request and the sample. */
  const malformed = (role: string, key: string, sample: number): boolean => keyedRandom(runSeed, 'malformed', role, key, sample)() < (opts.malformedRate ?? 0);
  const base = LearningPolicy.base(opts.errorRate ?? 0);
  const adapters = new Map<string, LearningPolicy>();
  /** The base planner's policy, or a loaded adapter's: its folder's policy file, read once per folder. */
  const policyOf = (request: ChatRequest): LearningPolicy => {
    if (request.adapter === undefined) return base;
    const known = adapters.get(request.adapter.path);
    if (known !== undefined) return known;
    const loaded = LearningPolicy.read(request.adapter.path);
    if (loaded === undefined) {
      console.warn(`scripted planner (test double): adapter ${request.adapter.name} at ${request.adapter.path} holds no ${POLICY_FILE} (a real trainer's weights, which the double cannot run): it answers with the base policy`);
    }
    adapters.set(request.adapter.path, loaded ?? base);
    return loaded ?? base;
  };

  let groundable: ReadonlyMap<string, GuiAction> | undefined;
  /** The action a plan's thought carries out, by its exact text; undefined for any other text. Built at the first executor request. */
  const grounding = (thought: string): GuiAction | undefined => (groundable ??= groundings([...opts.tasks, ...(opts.generated?.() ?? [])], opts.screen)).get(thought.trim());

  const planner = (request: ChatRequest): Reply => {
    const messages = request.messages.map((m) => (typeof m.content === 'string' ? m.content : m.content.filter((p) => p.type === 'text').map((p) => String(p.text)).join('')));
    const key = requestKey(request, messages);
    const reading = readPrompt(messages, taskOf, opts.screen);
    const samples = sampleReplies(reading, policyOf(request), request.n, (sample) => keyedRandom(runSeed, 'planner', key, sample)).map(({ reply, candidate }, sample) =>
      candidate !== undefined && malformed('planner', key, sample) ? 'I think the next step is to look around the window.' : reply,
    );
    return { texts: samples };
  };

  const executor = (request: ChatRequest): Reply => {
    const texts = textParts(request);
    const key = requestKey(request, texts);
    const instruction = texts
      .map((t) => /## User Instruction\n([\s\S]*)$/.exec(t)?.[1])
      .find((t) => t !== undefined);
    const action = instruction === undefined ? undefined : grounding(instruction);
    const sent = lastImageSize(request) ?? opts.screen;
    const view = { screen: opts.screen, modelImage: smartResize(sent.width, sent.height) };
    return {
      texts: Array.from({ length: request.n }, (_, sample) => {
        if (action === undefined || malformed('executor', key, sample)) return UNGROUNDED;
        return formatExecutorOutput(`I will ${describeAction(action)}.`, action, view);
      }),
    };
  };

  return (request) => {
    if (request.model === opts.plannerModel) return planner(request);
    if (request.model === opts.executorModel) return executor(request);
    return { status: 404, message: `The model \`${request.model}\` does not exist.` };
  };
}
