import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { referencePlanFor } from '../../../apps/policies';
import { describeAction } from '../../../core/actions';
import { buildPlannerMessages } from '../../../core/prompts/planner';
import { candidateOf, readPrompt, sampleReplies } from '../../../doubles/learning-planner/planner';
import { LearningPolicy, POLICY_FILE } from '../../../doubles/learning-planner/policy';
import { readPlannerView, situationOf } from '../../../doubles/learning-planner/situation';
import { keyedRandom } from '../../../doubles/scripted-models/seeded';
import { taskResolver } from '../../../doubles/scripted-models/task-resolver';

/**
 * The learning planner double (doubles/learning-planner/): what it reads from a prompt in each of
 * the three forms the pipeline gives it (a served chat request, an OpenRLHF prompt row, a
 * LLaMA-Factory ShareGPT row), how its logits move under GRPO's and SFT's gradient steps, and
 * that its parameters survive the checkpoint files.
 */
describe('learning planner double', () => {
  const resolver = taskResolver();
  const taskOf = (instruction: string, software: string | undefined) => resolver.taskOf(instruction, software);
  const screen = { width: 1920, height: 1080 };
  const a01 = resolver.tasks.find((t) => t.type === 'KAlgebra' && t.id === 'A-01')!;
  const turn = (thought: string) => ({ thought, actionText: 'act', screenshotKey: 'k' });
  const texts = (history: ReturnType<typeof turn>[]) =>
    buildPlannerMessages({ instruction: a01.instruction, software: 'KAlgebra', history, screenshotKey: 'now' }).map((m) =>
      typeof m.content === 'string' ? m.content : m.content.map((p) => (p.type === 'text' ? p.text : '')).join(''),
    );
  const a01Plan = referencePlanFor(a01, screen);
  /** The thought of A-01's step `step` as the planner writes it: plain words. */
  const a01Thought = (step: number): string => {
    assert.ok(a01Plan.replayable);
    return `Step ${step} of the solution: ${describeAction(a01Plan.actions[step - 1]!)}.`;
  };

  it('reads the software, the instruction and the step from a served prompt and from a ShareGPT row alike', () => {
    const first = readPrompt(texts([]), taskOf, screen);
    assert.ok('situation' in first);
    assert.equal(first.situation.key, 'KAlgebra|click>type>done|1');
    const reply = first.situation.replies[0];
    const second = readPrompt(texts([turn(reply.split('\n')[0]!.slice('Thought: '.length))]), taskOf, screen);
    assert.ok('situation' in second);
    assert.equal(second.situation.key, 'KAlgebra|click>type>done|2');
    assert.notEqual(second.situation.replies[0], second.situation.replies[1], 'step 2 types the expression: the perturbed plan types another');
    // A ShareGPT row joins a message's parts with nothing, each image an <image> token.
    const [system, user] = texts([]);
    const row = [system!, user!.replace('What is', '<image>What is')];
    assert.deepEqual(readPlannerView(row), { software: 'KAlgebra', instruction: a01.instruction, step: 1 });
  });

  it('counts as earlier steps the turns that wrote one of the plan’s thoughts: a malformed turn plans the same step again', () => {
    const keyAfter = (history: ReturnType<typeof turn>[]) => {
      const reading = readPrompt(texts(history), taskOf, screen);
      assert.ok('situation' in reading);
      return reading.situation.key;
    };
    assert.equal(keyAfter([turn(a01Thought(1))]), 'KAlgebra|click>type>done|2');
    assert.equal(keyAfter([turn(a01Thought(1)), turn('')]), 'KAlgebra|click>type>done|2', 'a malformed reply is stored with no thought');
    assert.equal(keyAfter([turn(a01Thought(1)), turn('Click the input field.')]), 'KAlgebra|click>type>done|2', 'words of no plan step are no step of it');
    assert.equal(keyAfter([turn(a01Thought(1)), turn(a01Thought(2))]), 'KAlgebra|click>type>done|3');
  });

  it('writes plain thoughts: no reply to any known task, generated ones included, carries an [action: …] tag', () => {
    let replies = 0;
    for (const task of [...resolver.tasks, ...resolver.everyGenerated()]) {
      for (let step = 1; step <= task.steps; step++) {
        const situation = situationOf(task, step, screen);
        if (!('replies' in situation)) continue;
        for (const reply of situation.replies) {
          replies++;
          assert.ok(!reply.includes('[action'), `${task.instruction} step ${step}: ${reply}`);
        }
      }
    }
    assert.ok(replies > 1000, `${replies} replies`);
  });

  it('answers FAIL, with nothing to learn, for a task it does not know', () => {
    const reading = readPrompt(['Task (in KAlgebra): Make me a sandwich.'], taskOf, screen);
    assert.ok('reply' in reading && reading.reply.endsWith('Action: FAIL'));
  });

  it('the base planner writes the perturbed step at its error rate', () => {
    const reading = readPrompt(texts([turn(a01Thought(1))]), taskOf, screen);
    const drawn = sampleReplies(reading, LearningPolicy.base(0.25), 4000, (sample) => keyedRandom(7, sample));
    const wrong = drawn.filter((d) => d.candidate === 1).length / drawn.length;
    assert.ok(Math.abs(wrong - 0.25) < 0.03, `share of perturbed steps ${wrong}`);
  });

  it('a policy-gradient step with positive advantage on the right step raises its probability; on the wrong one, lowers it', () => {
    const key = 'KAlgebra|click>type>done|2';
    const up = LearningPolicy.base(0.25);
    up.step([{ key, candidate: 0, weight: 1 }, { key, candidate: 1, weight: -1 }], 1);
    assert.ok(up.probabilities(key)[0] > 0.75);
    const down = LearningPolicy.base(0.25);
    down.step([{ key, candidate: 0, weight: -1 }, { key, candidate: 1, weight: 1 }], 1);
    assert.ok(down.probabilities(key)[0] < 0.75);
    const still = LearningPolicy.base(0.25);
    still.step([{ key, candidate: 0, weight: 0 }, { key, candidate: 1, weight: 0 }], 1);
    assert.deepEqual(still.probabilities(key), LearningPolicy.base(0.25).probabilities(key), 'zero advantages (equal rewards) teach nothing');
    assert.ok(up.klFrom(LearningPolicy.base(0.25)) > 0);
  });

  it('maximum likelihood fits the logits to the rows’ choices', () => {
    const key = 'TeXstudio|answer|1';
    const policy = LearningPolicy.base(0.25);
    const rows = [...Array(30).fill(0), ...Array(10).fill(1)].map((candidate: number) => ({ key, candidate, weight: 1 }));
    for (let i = 0; i < 400; i++) policy.step(rows, 1);
    assert.ok(Math.abs(policy.probabilities(key)[1] - 0.25) < 0.01, `fitted ${policy.probabilities(key)[1]}`);
    const onlyRight = LearningPolicy.base(0.25);
    for (let i = 0; i < 50; i++) onlyRight.step(rows.slice(0, 30), 1);
    assert.ok(onlyRight.probabilities(key)[0] > 0.97);
  });

  it('keeps its logits in the model folder and reads them back; a folder without them is not a double’s model', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'coda-policy-'));
    try {
      const policy = LearningPolicy.base(0.2);
      policy.step([{ key: 'KAlgebra|click>type>done|2', candidate: 0, weight: 1 }], 2);
      policy.write(dir);
      const back = LearningPolicy.read(dir)!;
      assert.deepEqual(back.toJSON(), policy.toJSON());
      assert.equal(back.updates, 1);
      rmSync(path.join(dir, POLICY_FILE));
      assert.equal(LearningPolicy.read(dir), undefined);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('tells which candidate a row’s reply is, and none where both plans agree', () => {
    const reading = readPrompt(texts([turn(a01Thought(1))]), taskOf, screen);
    assert.ok('situation' in reading);
    assert.equal(candidateOf(reading.situation, reading.situation.replies[1]), 1);
    assert.equal(candidateOf(reading.situation, 'Thought: hmm\nAction: FAIL'), undefined);
    const first = readPrompt(texts([]), taskOf, screen);
    assert.ok('situation' in first);
    assert.equal(candidateOf(first.situation, first.situation.replies[0]), undefined, 'step 1 clicks the same place in both plans');
  });
});
