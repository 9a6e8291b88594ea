import { describeAction } from '../../core/actions';
import { referencePlanFor } from '../../apps/policies';
import type { Size } from '../../core/smart-resize';
import type { Task } from '../../core/task';
import type { ChatRequest, Reply } from '../openai-server';
import { textParts } from './agent-policy';
import { hashText, keyedRandom } from './seeded';

/**
 * TEST DOUBLE of the judge models (Qwen2.5-VL-72B, GLM-4.5V... in the paper). It reads the prompt
 * of core/prompts/judge.ts and answers in SEAgent's shape (docs/method.md, "The judge") from ground truth it
 * really has, wrong at configured rates:
 * - the truth is what the task's evaluators said about this very trajectory (its manifest, named
 *   by the request's `user` field, read from S3); for a task without checks (a generated one) it
 *   is whether the trajectory's actions are exactly the plan the task-generator double wrote with
 *   the task (generated-tasks.ts), as the scripted planner replays it;
 * - the first error step is where the actions left that plan;
 * - each vote is wrong with the judge's false-positive / false-negative rate at the resolution of
 *   the images it was sent (low resolution misses more), and unreadable at its `unreadable` rate.
 *   The draw depends on the trajectory, the model, the temperature and the seed, not on the
 *   resolution: what a judge misses at high resolution it also misses at low. At temperature 0
 *   the seed is ignored (greedy decoding says the same thing every time);
 * - a false negative names a first error step drawn at random (the steps before it may still be
 *   kept as positive, core/judge/positive-steps.ts), or step 1 for a judge configured with
 *   `falseNegativeBlames: first-step` — one that inverts its verdicts, so that nothing of a
 *   successful trajectory is positive.
 * Like vLLM started with `--limit-mm-per-prompt`, it refuses a request with more images than the
 * judge's `maxImages`, with vLLM's message.
 * Compared with no real judge run: no judge model runs on this CPU. Its replies are in the shape
 * core/judge/reply.ts parses (test/unit/doubles/judge-double.test.ts reads them with that parser).
 */

export interface JudgeErrorRates {
  readonly falsePositive: number;
  readonly falseNegative: number;
}

/** One judge double: its error rates by resolution, its unreadable rate, where its false negatives blame, its image limit. */
export interface JudgeDouble {
  readonly high: JudgeErrorRates;
  readonly low: JudgeErrorRates;
  readonly unreadable: number;
  /** `first-step`: a false negative names step 1 as the first error, so no step before it is kept (default: a random step). */
  readonly falseNegativeBlames?: 'any-step' | 'first-step';
  readonly maxImages?: number;
}

export interface JudgeDoubleOptions {
  /** By judge model name. */
  readonly judges: Readonly<Record<string, JudgeDouble>>;
  /** Images at most this wide are a low-resolution vote (temporal.yaml judging.images.low). */
  readonly lowResolutionWidth: number;
  /** The task an instruction belongs to: a seed task, or a generated one with its plan as `ans`. */
  readonly resolveTask: (instruction: string) => Task | undefined;
  /** The desktops' screen: reference plans are in its pixels. */
  readonly screen: Size;
  /** What the task's evaluators said about the trajectory whose manifest has this key; undefined when unknown. */
  readonly evaluatorVerdict?: (manifestKey: string) => Promise<boolean | undefined>;
  readonly seed?: number;
}

interface Truth {
  readonly success: boolean;
  readonly firstErrorStep: number | null;
  readonly why: string;
}

/** Widths of the images of a request, from their PNG headers. */
function imageWidths(request: ChatRequest): number[] {
  const widths: number[] = [];
  for (const message of request.messages) {
    if (typeof message.content === 'string') continue;
    for (const part of message.content) {
      const url = (part.image_url as { url?: string } | undefined)?.url;
      if (part.type !== 'image_url' || url === undefined) continue;
      const head = Buffer.from(url.slice(url.indexOf(',') + 1, url.indexOf(',') + 45), 'base64');
      widths.push(head.length >= 24 ? head.readUInt32BE(16) : 0);
    }
  }
  return widths;
}

const reply = (thoughts: string, correctness: boolean, firstErrorStep: number | null): string =>
  `${thoughts}\n\`\`\`json\n${JSON.stringify({ Thoughts: thoughts, Correctness: correctness, Redundant: [], First_Error_Step: firstErrorStep })}\n\`\`\``;

export function judgePolicy(opts: JudgeDoubleOptions): (request: ChatRequest) => Promise<Reply> {
  const planTruth = (instruction: string, steps: readonly string[]): Truth => {
    const task = opts.resolveTask(instruction);
    if (task === undefined) return { success: false, firstErrorStep: steps.length > 0 ? 1 : null, why: 'the agent did not do what the task asks' };
    const plan = referencePlanFor(task, opts.screen);
    if (!plan.replayable) return { success: false, firstErrorStep: steps.length > 0 ? 1 : null, why: 'the task was not completed' };
    // The action's words may hold ' -> ' themselves (a 3D plot's `(x, y) -> ...`): match each step by its ending.
    const expected = plan.actions.map(describeAction);
    const deviation = Array.from({ length: Math.max(expected.length, steps.length) }, (_, i) => i).find((i) => !(steps[i] ?? '').endsWith(` -> ${expected[i]}`));
    return deviation === undefined
      ? { success: true, firstErrorStep: null, why: 'every step moved the task forward and the final screen shows it done' }
      : { success: false, firstErrorStep: Math.min(deviation, steps.length - 1) + 1, why: `step ${Math.min(deviation, steps.length - 1) + 1} went the wrong way` };
  };

  return async (request) => {
    const judge = opts.judges[request.model];
    if (judge === undefined) return { status: 404, message: `The model \`${request.model}\` does not exist.` };
    const widths = imageWidths(request);
    if (judge.maxImages !== undefined && widths.length > judge.maxImages) {
      return { status: 400, message: `At most ${judge.maxImages} image(s) may be provided in one prompt. Set \`--limit-mm-per-prompt\` to increase this limit.` };
    }
    const texts = textParts(request);
    const instruction = texts.map((t) => /^Task: ([\s\S]*?)\n\nThe agent took \d+ step\(s\)\./.exec(t)?.[1]).find((t) => t !== undefined);
    if (instruction === undefined) return { status: 400, message: 'the judge double expects the prompt of core/prompts/judge.ts' };
    /** Each step as the prompt writes it: `thought -> action`. */
    const steps = texts.flatMap((t) => {
      const step = /^Step \d+: ([\s\S]*)$/.exec(t)?.[1];
      return step === undefined ? [] : [step];
    });
    const fromPlan = planTruth(instruction, steps);
    const evaluated = request.user === undefined ? undefined : await opts.evaluatorVerdict?.(request.user);
    const truth: Truth = evaluated === undefined || evaluated === fromPlan.success ? fromPlan : { ...fromPlan, success: evaluated, why: evaluated ? 'the final screen shows the task done' : 'the final state does not complete the task' };

    const low = widths.length > 0 && Math.max(...widths) <= opts.lowResolutionWidth;
    const rates = low ? judge.low : judge.high;
    const sampled = request.temperature === 0 ? 'greedy' : `${request.temperature}/${request.seed ?? 'unseeded'}`;
    const random = keyedRandom(opts.seed ?? 1, 'judge', request.model, sampled, hashText(texts.join('\n')));
    const [wrong, unreadable, where] = [random(), random(), random()];
    const texts_ = Array.from({ length: request.n }, () => {
      if (unreadable < judge.unreadable) return 'I cannot assess this trajectory from the screenshots provided.';
      if (truth.success && wrong < rates.falseNegative) {
        const step = judge.falseNegativeBlames === 'first-step' ? 1 : Math.max(1, Math.ceil(where * Math.max(1, steps.length)));
        return reply(`Step ${step} does not seem to change the screen as the task needs; the task looks unfinished.`, false, step);
      }
      if (!truth.success && wrong < rates.falsePositive) return reply('The final screen looks as the task asks.', true, null);
      return reply(`Reviewing the ${steps.length} step(s): ${truth.why}.`, truth.success, truth.firstErrorStep);
    });
    return { texts: texts_ };
  };
}
