import assert from 'node:assert/strict';
import sharp from 'sharp';
import { perturbedPlanFor, referencePlanFor } from '../../../apps/policies';
import { describeAction, type GuiAction } from '../../../core/actions';
import { parseExecutorOutput, type ExecutorParse } from '../../../core/executor-parser';
import { buildExecutorMessages } from '../../../core/prompts/executor';
import { smartResize, type Size } from '../../../core/smart-resize';
import type { Task } from '../../../core/task';
import type { ChatRequest, Reply } from '../../../doubles/openai-server';
import { scriptedAgentPolicy } from '../../../doubles/scripted-models/agent-policy';
import { taskResolver } from '../../../doubles/scripted-models/task-resolver';

/**
 * The scripted executor (doubles/scripted-models/agent-policy.ts) stands for UI-TARS grounding a
 * planner's thought. It grounds the thoughts the plans write — any step of a known task's reference
 * or perturbed plan, generated tasks included — and no other text: free words, a near miss, or the
 * `[action: {...}]` tag the planner double used to append (which a real planner never writes).
 */
describe('the executor double grounds the plans’ thoughts and nothing else', () => {
  const resolver = taskResolver();
  const screen = { width: 1920, height: 1080 };
  const generated = resolver.everyGenerated();
  const options = { tasks: resolver.tasks, resolve: (i: string) => resolver.generated(i), screen, plannerModel: 'planner', executorModel: 'executor', seed: 1 };
  const agent = scriptedAgentPolicy({ ...options, generated: () => generated });
  const a01 = resolver.tasks.find((t) => t.type === 'KAlgebra' && t.id === 'A-01')!;
  /** A plan's step as the planner writes it: plain words, no tag. */
  const thoughtOf = (step: number, action: GuiAction): string => `Step ${step} of the solution: ${describeAction(action)}.`;
  const plansOf = (task: Task): GuiAction[][] => [referencePlanFor(task, screen), perturbedPlanFor(task, screen)].flatMap((plan) => (plan.replayable ? [plan.actions] : []));

  /** The executor's reply to `thought`, parsed in the pixels of the image it was sent (none: the screen's). */
  async function ground(thought: string, policy = agent, sent?: Size): Promise<ExecutorParse> {
    const png = sent === undefined ? undefined : await sharp({ create: { ...sent, channels: 3, background: '#ffffff' } }).png().toBuffer();
    const [prompt] = buildExecutorMessages({ instruction: thought, screenshotKey: 'now' });
    const request: ChatRequest = {
      model: 'executor',
      n: 1,
      temperature: 0,
      messages: [
        { role: 'user', content: typeof prompt!.content === 'string' ? prompt!.content : prompt!.content.flatMap((p) => (p.type === 'text' ? [{ type: 'text', text: p.text }] : [])) },
        ...(png === undefined ? [] : [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } }] }]),
      ],
    };
    const reply = (await policy(request)) as Reply;
    assert.ok('texts' in reply);
    const image = sent ?? screen;
    return parseExecutorOutput(reply.texts[0]!, { screen, modelImage: smartResize(image.width, image.height) });
  }
  const actionOf = (parse: ExecutorParse): GuiAction | string => (parse.ok ? parse.action : parse.reason);

  it('grounds the right and the perturbed step of a plan, in the pixels of the image it was sent', async () => {
    const [reference, perturbed] = plansOf(a01);
    const [right, wrong] = [reference![1]!, perturbed![1]!];
    assert.notDeepEqual(right, wrong, 'A-01 step 2 types the expression; the perturbed plan types another');
    assert.deepEqual(actionOf(await ground(thoughtOf(2, right))), right);
    assert.deepEqual(actionOf(await ground(thoughtOf(2, wrong))), wrong);
    // Step 1 clicks the input field: sent a 1280x720 image, the executor answers in that image's pixels.
    const click = reference![0]!;
    assert.equal(click.type, 'click');
    const small = await ground(thoughtOf(1, click), agent, { width: 1280, height: 720 });
    assert.ok(small.ok && small.action.type === 'click' && Math.abs(small.action.x - click.x) <= 2 && Math.abs(small.action.y - click.y) <= 2, JSON.stringify(small));
  });

  it('grounds every step of every plan it knows, generated tasks included, each to its own action', async () => {
    const expected = new Map<string, GuiAction>();
    for (const task of [...resolver.tasks, ...generated]) {
      for (const actions of plansOf(task)) {
        actions.forEach((action, i) => {
          // ANS, DONE and FAIL are the planner's primitives: they never reach the executor.
          if (action.type === 'answer' || action.type === 'done' || action.type === 'fail') return;
          const thought = thoughtOf(i + 1, action);
          const known = expected.get(thought);
          assert.ok(known === undefined || JSON.stringify(known) === JSON.stringify(action), `two plans write "${thought}" for different actions`);
          expected.set(thought, action);
        });
      }
    }
    assert.ok(expected.size > 100 && generated.length > 100, `${expected.size} thoughts of ${generated.length} generated tasks`);
    for (const [thought, action] of expected) assert.deepEqual(actionOf(await ground(thought)), action, thought);
    const storing = [...expected.keys()].find((t) => t.includes('"q := 7*8-5"'));
    assert.ok(storing !== undefined, 'a generated task stores 7*8-5 in q');
    assert.equal((await ground(storing, scriptedAgentPolicy(options))).ok, false, 'a generated task’s step is known only with the generated tasks');
  });

  it('cannot ground free words, a near miss or a tagged thought: a malformed reply', async () => {
    const click = plansOf(a01)[0]![0]!;
    assert.ok(click.type === 'click');
    const moved = { ...click, x: click.x + 1 };
    const texts = [
      'Click the input field at the bottom of the calculator window.',
      thoughtOf(1, moved),
      thoughtOf(7, click),
      thoughtOf(1, click).toLowerCase(),
      `${thoughtOf(1, click)} [action: ${JSON.stringify(click)}]`,
      `Click it. [action: ${JSON.stringify(moved)}]`,
    ];
    for (const text of texts) {
      const parse = await ground(text);
      assert.ok(!parse.ok, `${text}: ${JSON.stringify(parse)}`);
    }
  });
});
