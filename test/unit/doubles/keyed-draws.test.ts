import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { ChatMessage } from '../../../core/prompts/messages';
import { buildExecutorMessages } from '../../../core/prompts/executor';
import { buildPlannerMessages } from '../../../core/prompts/planner';
import { parsePlannerOutput, primitiveAction } from '../../../core/planner-parser';
import { samplingSeed } from '../../../core/sampling-seed';
import { LearningPolicy } from '../../../doubles/learning-planner/policy';
import { readPrompt } from '../../../doubles/learning-planner/planner';
import type { ChatRequest, Reply } from '../../../doubles/openai-server';
import { scriptedAgentPolicy } from '../../../doubles/scripted-models/agent-policy';
import { taskResolver } from '../../../doubles/scripted-models/task-resolver';

/**
 * The doubles' draws are keyed by what they decide and the run seed (doubles/scripted-models/seeded.ts),
 * never taken from a stream shared across calls: which request a loaded machine serves first must
 * not change any reply. Before keyed draws, the scripted planner drew from one stream in arrival
 * order, so the same run gave other rollouts when its activities ran in another order.
 */
describe('the doubles draw by key, not by arrival order', () => {
  const resolver = taskResolver();
  const screen = { width: 1920, height: 1080 };
  const firstPrompt = (instruction: string) => buildPlannerMessages({ instruction, software: 'KAlgebra', history: [], screenshotKey: 'now' });
  const promptTexts = (messages: readonly ChatMessage[]) => messages.map((m) => (typeof m.content === 'string' ? m.content : m.content.map((p) => (p.type === 'text' ? p.text : '')).join('')));
  /** Six KAlgebra tasks whose first step offers the planner a choice (a right and a perturbed step). */
  const tasks = resolver.tasks
    .filter((t) => t.type === 'KAlgebra' && 'situation' in readPrompt(promptTexts(firstPrompt(t.instruction)), (i) => resolver.taskOf(i, 'KAlgebra'), screen))
    .slice(0, 6);
  const asRequest = (model: string, messages: readonly ChatMessage[], seed: number | undefined, n = 1): ChatRequest => ({
    model,
    n,
    temperature: 1,
    ...(seed === undefined ? {} : { seed }),
    messages: messages.map((m) => ({ role: m.role, content: typeof m.content === 'string' ? m.content : m.content.flatMap((p) => (p.type === 'text' ? [{ type: 'text', text: p.text }] : [])) })),
  });
  /** The first step of every task's attempts 0-3: the planner's request, then the executor's for its thought. */
  const plannerRequests = tasks.flatMap((task) =>
    [0, 1, 2, 3].map((attempt) =>
      asRequest('planner', firstPrompt(task.instruction), samplingSeed({ software: 'KAlgebra', task: task.id, attempt }, 1), 2),
    ),
  );
  const policy = (seed: number) => scriptedAgentPolicy({ tasks: resolver.tasks, screen, plannerModel: 'planner', executorModel: 'executor', errorRate: 0.5, malformedRate: 0.2, seed });
  const texts = (reply: Reply | Promise<Reply>): readonly string[] => {
    assert.ok(!(reply instanceof Promise) && 'texts' in reply, 'the agent double answers at once');
    return reply.texts;
  };
  const executorRequest = (thought: string, seed: number) => asRequest('executor', buildExecutorMessages({ instruction: thought, screenshotKey: 'now', history: [] }), seed, 2);

  /** Every reply, planner and executor, for the requests taken in `order`; keyed by request index. */
  function answer(order: readonly number[], runSeed: number): Map<number, readonly string[]> {
    const agent = policy(runSeed);
    const replies = new Map<number, readonly string[]>();
    for (const i of order) {
      const request = plannerRequests[i]!;
      const planned = texts(agent(request));
      // As agent-step.ts does: a thought that is not a primitive (ANS, DONE, FAIL) goes to the executor.
      const thoughts = planned.map((t) => parsePlannerOutput(t)).flatMap((p) => (p.ok && primitiveAction(p.action) === undefined ? [p.thought] : []));
      replies.set(i, [...planned, ...thoughts.flatMap((thought) => texts(agent(executorRequest(thought, request.seed!))))]);
    }
    return replies;
  }

  it('the planner and the executor give every request the same replies in any order', () => {
    const forward = plannerRequests.map((_, i) => i);
    const interleaved = [...forward.filter((i) => i % 2 === 1), ...forward.filter((i) => i % 2 === 0).reverse()];
    const first = answer(forward, 1);
    assert.deepEqual(answer([...forward].reverse(), 1), first);
    assert.deepEqual(answer(interleaved, 1), first);
    const all = [...first.values()].flat();
    assert.ok(all.some((t) => t.startsWith('I think')) && all.some((t) => t.includes('Action:')), 'malformed and well-formed replies both occur, so the order could have mattered');
    const differ = tasks.some((_, t) => new Set([0, 1, 2, 3].map((attempt) => first.get(t * 4 + attempt)![0])).size > 1);
    assert.ok(tasks.length === 6 && differ, 'attempts of one task draw differently (their seeds differ)');
  });

  it('another run seed draws otherwise', () => {
    const forward = plannerRequests.map((_, i) => i);
    assert.notDeepEqual(answer(forward, 2), answer(forward, 1));
  });

  it('a request without a seed is keyed by its text: the same text, the same replies', () => {
    const agent = policy(1);
    const request = { ...plannerRequests[0]!, seed: undefined };
    assert.deepEqual(texts(agent(request)), texts(policy(1)(request)));
  });

  it('at the same seed a specialist that prefers the right step writes it wherever the base planner does (common random numbers)', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'coda-crn-'));
    try {
      const trained = LearningPolicy.base(0.5);
      const situations = tasks.flatMap((t) => Array(4).fill(readPrompt(promptTexts(firstPrompt(t.instruction)), (i) => resolver.taskOf(i, 'KAlgebra'), screen)) as ReturnType<typeof readPrompt>[]);
      const keys = [...new Set(situations.flatMap((s) => ('situation' in s ? [s.situation.key] : [])))];
      for (const key of keys) trained.step([{ key, candidate: 0, weight: 1 }], 2);
      trained.write(dir);
      const agent = scriptedAgentPolicy({ tasks: resolver.tasks, screen, plannerModel: 'planner', executorModel: 'executor', errorRate: 0.5, seed: 1 });
      let baseRight = 0;
      let specialistRight = 0;
      plannerRequests.forEach((request, i) => {
        const reading = situations[i]!;
        assert.ok('situation' in reading);
        const right = reading.situation.replies[0];
        const base = texts(agent(request));
        const specialist = texts(agent({ ...request, adapter: { name: 'specialist', path: dir } }));
        base.forEach((reply, sample) => {
          if (reply !== right) return;
          baseRight++;
          assert.equal(specialist[sample], right, `request ${i} sample ${sample}: the base planner wrote the right step and the specialist did not`);
        });
        specialistRight += specialist.filter((reply) => reply === right).length;
      });
      assert.ok(baseRight > 0 && specialistRight > baseRight, `right steps: base ${baseRight}, specialist ${specialistRight} of ${plannerRequests.length * 2}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
