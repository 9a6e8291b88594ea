import assert from 'node:assert/strict';
import { describeAction } from '../../../core/actions';
import { positiveSteps } from '../../../core/judge/positive-steps';
import { parseJudgeReply } from '../../../core/judge/reply';
import { referencePlanFor } from '../../../apps/policies';
import { buildJudgeMessages } from '../../../core/prompts/judge';
import type { ChatRequest } from '../../../doubles/openai-server';
import { judgePolicy, type JudgeDouble } from '../../../doubles/scripted-models/judge';
import { taskResolver } from '../../../doubles/scripted-models/task-resolver';

/**
 * Where the judge double's false negatives put the first error. A judge that misses names a step
 * drawn at random, and the steps before it may still be positive (core/judge/positive-steps.ts);
 * a judge that inverts its verdicts (`falseNegativeBlames: first-step`, the learning loop's) names
 * step 1, so no step of a successful trajectory is kept. With random steps, the learning loop's
 * "inverted" judge still fed GRPO the right prefixes of successful trajectories, and for one seed
 * its specialist ended above the base (issue 26).
 */
describe('the judge double: where a false negative blames', () => {
  const screen = { width: 1920, height: 1080 };
  const resolver = taskResolver();
  /** A KAlgebra task whose reference plan has at least four steps, one of them an action whose words hold ' -> ' (a 3D plot's function). */
  const [task, actions] = resolver.tasks.flatMap((t) => {
    const plan = t.type === 'KAlgebra' ? referencePlanFor(t, screen) : undefined;
    const words = plan?.replayable === true ? plan.actions.map(describeAction) : [];
    return words.length >= 4 && words.some((w) => w.includes(' -> ')) ? [[t, words] as const] : [];
  })[0] ?? assert.fail('a KAlgebra task with a plan of four steps or more, one an arrow function');

  /** The judge prompt of a trajectory that followed the plan exactly (a success), sampled with `seed`. */
  const request = (seed: number): ChatRequest => {
    const messages = buildJudgeMessages({ instruction: task.instruction, steps: actions.map((a) => ({ actionText: `thought -> ${a}` })), finalScreenshotKey: 'final', resolution: 'high' });
    return {
      model: 'judge-x',
      n: 1,
      temperature: 1,
      seed,
      messages: messages.map((m) => ({ role: m.role, content: typeof m.content === 'string' ? m.content : m.content.flatMap((p) => (p.type === 'text' ? [{ type: 'text', text: p.text }] : [])) })),
    };
  };
  it('a judge that never errs calls the plan followed a success, even where an action reads `(x, y) -> ...`', async () => {
    assert.ok(actions.some((a) => a.includes(' -> ')), `the plan has an action with an arrow: ${JSON.stringify(actions)}`);
    const exact = { falsePositive: 0, falseNegative: 0 };
    const judge = judgePolicy({ judges: { 'judge-x': { high: exact, low: exact, unreadable: 0 } }, lowResolutionWidth: 640, resolveTask: (i) => resolver.taskOf(i), screen, seed: 7 });
    const reply = await judge(request(0));
    assert.ok('texts' in reply, JSON.stringify(reply));
    const parsed = parseJudgeReply(reply.texts[0] as string);
    assert.ok(parsed.ok && parsed.reply.correctness && parsed.reply.firstErrorStep === null, reply.texts[0]);
  });

  /** The positive steps of the replies of a judge that always misses, over 40 samples. */
  const keptSteps = async (blames: JudgeDouble['falseNegativeBlames']): Promise<number[][]> => {
    const always = { falsePositive: 0, falseNegative: 1 };
    const judge = judgePolicy({ judges: { 'judge-x': { high: always, low: always, unreadable: 0, falseNegativeBlames: blames } }, lowResolutionWidth: 640, resolveTask: (i) => resolver.taskOf(i), screen, seed: 7 });
    const kept: number[][] = [];
    for (let seed = 0; seed < 40; seed++) {
      const reply = await judge(request(seed));
      assert.ok('texts' in reply, JSON.stringify(reply));
      const parsed = parseJudgeReply(reply.texts[0] as string);
      assert.ok(parsed.ok, JSON.stringify(parsed));
      assert.equal(parsed.reply.correctness, false, 'every vote is a false negative');
      kept.push(positiveSteps(parsed.reply, actions.length));
    }
    return kept;
  };

  it('a judge that misses names a random step: some successful trajectories keep the steps before it', async () => {
    const kept = await keptSteps('any-step');
    assert.ok(kept.some((steps) => steps.length >= 2), `kept: ${JSON.stringify(kept)}`);
  });

  it('an inverting judge names step 1: nothing of a successful trajectory is kept', async () => {
    const kept = await keptSteps('first-step');
    assert.deepEqual(kept, kept.map(() => []));
  });
});
