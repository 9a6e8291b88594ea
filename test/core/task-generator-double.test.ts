import assert from 'node:assert/strict';
import { defaultStartState } from '../../core/generated-task';
import { buildTaskGeneratorMessages, readTaskGeneratorReply, type EarlierTask } from '../../core/prompts/task-generator';
import { dedupeInstructions, normaliseInstruction, splitRepeats } from '../../core/task-dedupe';
import type { ChatRequest } from '../../doubles/openai-server';
import { everyTask, readTask, type TemplateContext } from '../../doubles/scripted-models/generated-tasks';
import { readGeneratorPrompt, taskGeneratorPolicy } from '../../doubles/scripted-models/task-generator';
import { loadTasks } from '../support/desktop';

/**
 * The task-generator double (doubles/scripted-models/task-generator.ts) against the real prompt of
 * core/prompts/task-generator.ts and the real seeds: shown the tasks of earlier rounds, it writes
 * new ones, as a model does, and what it repeats the pipeline's deduplication drops as repeats.
 */

const THRESHOLD = 0.85;

const requestOf = (messages: ReturnType<typeof buildTaskGeneratorMessages>): ChatRequest => ({
  model: 'task-generator',
  n: 1,
  temperature: 0,
  messages: messages.map((m) => ({ role: m.role, content: typeof m.content === 'string' ? m.content : m.content.map((p) => ({ ...p })) })),
});

/** The document generated tasks of a software show (the default start's touched file), as the scripted model server gives it. */
function contextOf(software: string): TemplateContext {
  const start = defaultStartState(loadTasks(software));
  const touched = start?.initialize.filter((step) => step.func === 'touch') ?? [];
  return touched.length === 0 ? {} : { document: (touched.at(-1) as { text: string }).text };
}

/** Runs `rounds` rounds of one request each, every round shown the earlier rounds' kept tasks; returns each round's kept and dropped. */
function rounds(software: string, count: number, n: number) {
  const context = contextOf(software);
  const generator = taskGeneratorPolicy({ model: 'task-generator', seed: 1, brokenRate: 0, contextOf: () => context });
  const seeds = loadTasks(software).map((t) => ({ id: t.id, instruction: t.instruction }));
  const earlier: Array<EarlierTask & { id: string; set: string }> = [];
  const results = [];
  for (let round = 1; round <= n; round++) {
    const messages = buildTaskGeneratorMessages({ software, seeds, count, maxSteps: 15, earlier: earlier.map(({ round: r, instruction }) => ({ round: r, instruction, attempts: { judged: 1, approved: r % 2 } })) });
    const reply = generator(requestOf(messages));
    assert.ok('texts' in reply, `round ${round} answered`);
    const read = readTaskGeneratorReply(reply.texts[0] ?? '');
    assert.ok(read.ok, `round ${round}: ${JSON.stringify(read)}`);
    const known = [
      ...earlier.map((t) => ({ name: `${t.set} ${t.id}`, instruction: t.instruction, earlier: { set: t.set, round: t.round, task: t.id } })),
      ...seeds.map((s) => ({ name: s.id, instruction: s.instruction })),
    ];
    const deduped = dedupeInstructions(read.instructions.map((instruction, i) => ({ name: `item ${i + 1}`, instruction })), known, THRESHOLD);
    const dropped = splitRepeats(deduped.duplicates, known);
    results.push({ round, written: read.instructions, kept: deduped.kept.map((k) => k.instruction), shown: earlier.map((t) => t.instruction), ...dropped });
    earlier.push(...deduped.kept.map((k, i) => ({ round, instruction: k.instruction, id: `G-${i + 1}`, set: `r${round}` })));
  }
  return { results, context };
}

describe('the task-generator double across rounds', () => {
  it('reads the seeds, the earlier rounds and the tasks already written from their sections of the user message only', () => {
    const seeds = [{ id: 'A-01', instruction: 'Store 2 in p.' }];
    const prompt = readGeneratorPrompt(
      requestOf(buildTaskGeneratorMessages({ software: 'KAlgebra', seeds, count: 7, maxSteps: 5, avoid: ['Plot y = x.'], earlier: [{ round: 1, instruction: 'Store 3 in q.', attempts: { judged: 1, approved: 1 } }, { round: 2, instruction: 'Store 4 in r.' }] })),
    );
    assert.deepEqual(prompt, { software: 'KAlgebra', count: 7, seeds: ['Store 2 in p.'], earlier: ['Store 3 in q.', 'Store 4 in r.'], written: ['Plot y = x.'] });
  });

  it('answers the same prompt the same way when greedy, and anew for each request seed when sampling', () => {
    const generator = taskGeneratorPolicy({ model: 'task-generator', seed: 1, brokenRate: 0 });
    const request = requestOf(buildTaskGeneratorMessages({ software: 'KAlgebra', seeds: [{ id: 'A-01', instruction: 'Store 2 in p.' }], count: 6, maxSteps: 15 }));
    const reply = (temperature: number, seed?: number) => {
      const answer = generator({ ...request, temperature, ...(seed === undefined ? {} : { seed }) });
      assert.ok('texts' in answer);
      return answer.texts[0];
    };
    assert.equal(reply(0, 1), reply(0, 2));
    assert.equal(reply(0.7, 1), reply(0.7, 1));
    assert.notEqual(reply(0.7, 1), reply(0.7, 2));
  });

  it('never turns the system prompt\'s bullets into tasks', () => {
    const { results } = rounds('KAlgebra', 30, 2);
    for (const { written } of results) {
      for (const instruction of written) assert.doesNotMatch(instruction, /atomic|self-contained|has a result|is new:/i, instruction);
    }
  });

  for (const [software, count, n] of [['KAlgebra', 12, 2], ['KAlgebra', 12, 3], ['TeXstudio', 6, 2], ['Celestia', 3, 2]] as const) {
    it(`${software}: ${n} rounds of ${count} share no task; each new template task reads back with its plan, and what it repeats is dropped as a repeat of the round it repeats`, () => {
      const { results, context } = rounds(software, count, n);
      const first = results[0]!;
      assert.ok(first.kept.length >= count / 2, `round 1 kept ${first.kept.length} of ${count}`);
      for (const { round, written, kept, shown, repeats } of results.slice(1)) {
        const earlierSet = new Set(shown.map(normaliseInstruction));
        assert.ok(kept.length > 0, `round ${round} kept new tasks`);
        assert.deepEqual(kept.filter((k) => earlierSet.has(normaliseInstruction(k))), [], `round ${round} keeps no earlier task`);
        for (const instruction of written) {
          const task = readTask(software, instruction, context);
          // Template tasks are new; anything else is a reworded seed, earlier or written task.
          if (task !== undefined) {
            assert.equal(task.instruction, instruction);
            assert.ok(!earlierSet.has(normaliseInstruction(instruction)), `round ${round} wrote an earlier task again: ${instruction}`);
          }
        }
        for (const repeat of repeats) {
          assert.ok(shown.includes(repeat.of), `a repeat names the earlier task: ${repeat.of}`);
          assert.ok(repeat.round < round && repeat.set === `r${repeat.round}`);
        }
      }
      // The rounds' kept tasks are all different; every template task reads back.
      const all = results.flatMap((r) => r.kept);
      assert.equal(new Set(all.map(normaliseInstruction)).size, all.length);
      assert.ok(all.every((instruction) => readTask(software, instruction, context) !== undefined), 'every kept task is a template task');
    });
  }

  it('writes more tasks of the kinds its seeds show most, and still some of the others', () => {
    // The kind of a task is the shape of its plan; here, named by the template that writes it.
    const templates = everyTask('KAlgebra', {});
    const templateOf = (instruction: string): number => templates.findIndex((tasks) => tasks.some((t) => t.instruction === instruction));
    const kindOf = (instruction: string): string | undefined => {
      const i = templateOf(instruction);
      return i === -1 ? (instruction.startsWith('Seed') ? 'kind 0' : undefined) : `kind ${i}`;
    };
    const shares = (seeds: Array<{ id: string; instruction: string }>): number[] => {
      const counts = templates.map(() => 0);
      for (let seed = 1; seed <= 20; seed++) {
        const generator = taskGeneratorPolicy({ model: 'task-generator', seed, brokenRate: 0, kindOf });
        const reply = generator(requestOf(buildTaskGeneratorMessages({ software: 'KAlgebra', seeds, count: 10, maxSteps: 15 })));
        assert.ok('texts' in reply);
        const read = readTaskGeneratorReply(reply.texts[0] ?? '');
        assert.ok(read.ok);
        for (const instruction of read.instructions) if (templateOf(instruction) !== -1) counts[templateOf(instruction)]! += 1;
      }
      const total = counts.reduce((a, b) => a + b, 0);
      return counts.map((c) => c / total);
    };
    // Nine seeds of template 0's kind: weight 10 of 10 + 1 × (templates - 1).
    const leaning = shares(Array.from({ length: 9 }, (_, i) => ({ id: `S-${i}`, instruction: `Seed ${i}: store a value in a variable.` })));
    const expected = 10 / (10 + templates.length - 1);
    assert.ok(Math.abs(leaning[0]! - expected) < 0.12, `template 0's share ${leaning[0]} ≈ ${expected}`);
    assert.ok(leaning.slice(1).every((share) => share > 0), `every other kind is still written: ${leaning}`);
    // Seeds of no known kind: every template alike.
    const even = shares([{ id: 'S-1', instruction: 'Something else entirely.' }]);
    assert.ok(even.every((share) => Math.abs(share - 1 / templates.length) < 0.1), `even shares: ${even}`);
  });

  it('when shown every task its templates can write, writes only repeats, which deduplication drops', () => {
    const context = contextOf('Celestia');
    const all = everyTask('Celestia', context).flat();
    const generator = taskGeneratorPolicy({ model: 'task-generator', seed: 1, brokenRate: 0, contextOf: () => context });
    const seeds = loadTasks('Celestia').map((t) => ({ id: t.id, instruction: t.instruction }));
    const earlier = all.map((t, i) => ({ name: `r1 G-${i}`, instruction: t.instruction, earlier: { set: 'r1', round: 1, task: `G-${i}` } }));
    const reply = generator(requestOf(buildTaskGeneratorMessages({ software: 'Celestia', seeds, count: 8, maxSteps: 15, earlier: earlier.map((t) => ({ round: 1, instruction: t.instruction })) })));
    assert.ok('texts' in reply);
    const read = readTaskGeneratorReply(reply.texts[0] ?? '');
    assert.ok(read.ok && read.instructions.length > 0);
    const known = [...earlier, ...seeds.map((s) => ({ name: s.id, instruction: s.instruction }))];
    const deduped = dedupeInstructions(read.instructions.map((instruction, i) => ({ name: `item ${i + 1}`, instruction })), known, THRESHOLD);
    assert.deepEqual(deduped.kept, []);
    assert.ok(splitRepeats(deduped.duplicates, known).repeats.length > 0, 'repeats of round 1 are recorded');
  });

  it('enumerates every combination of a template once, and reads each back with its plan', () => {
    const kalgebra = everyTask('KAlgebra');
    assert.deepEqual(kalgebra.map((t) => t.length), [80, 8, 5, 16, 4]);
    for (const task of kalgebra.flat()) assert.deepEqual(readTask('KAlgebra', task.instruction), task, task.instruction);
    const tex = contextOf('TeXstudio');
    const texTasks = everyTask('TeXstudio', tex);
    assert.ok(texTasks[0]!.length > 1 && texTasks[1]!.length > 1, 'the document gives words to replace and count');
    for (const task of texTasks.flat()) assert.deepEqual(readTask('TeXstudio', task.instruction, tex), task, task.instruction);
  });
});
