import assert from 'node:assert/strict';
import { defaultStartState, generatedTask } from '../../core/generated-task';
import { subsampleIndices } from '../../core/judge/subsample';
import { dedupeInstructions, instructionSimilarity, normaliseInstruction, similarAtLeast, splitRepeats } from '../../core/task-dedupe';
import { hasEvaluators, parseTask, type Task } from '../../core/task';
import { ValidationError } from '../../core/validation';
import { roundSetsOf } from '../../workflows/training/generalization';
import { APPS } from '../../apps/index';

const seed = (id: string, initialize: Task['initialize']): Task =>
  parseTask(APPS, 
    {
      type: 'KAlgebra',
      sort: 'VM',
      steps: 5,
      instruction: `seed ${id}`,
      version: '0.1',
      snapshot: 'sci_bench',
      initialize,
      evaluate: [{ type: 'stop', value: 'DONE' }],
    },
    id,
  );

const LAUNCH = { func: 'launch', command: '/app/bin/kalgebra', wait: 2 } as const;

describe('generated tasks', () => {
  it('start from the shortest launching initialize of the seeds', () => {
    const seeds = [seed('C-05', [LAUNCH, { func: 'tab', index: 1 }]), seed('A-01', [LAUNCH]), seed('B-01', [])];
    assert.deepEqual(defaultStartState(seeds), { initialize: [LAUNCH], snapshot: 'sci_bench', version: '0.1' });
    assert.equal(defaultStartState([seed('B-01', [])]), undefined);
  });

  it('are runnable tasks with provenance and no checks; a task without checks must be generated', () => {
    const task = generatedTask(APPS, {
      id: 'G-001',
      software: 'KAlgebra',
      instruction: 'Store 2^10 in variable q.',
      maxSteps: 5,
      start: { initialize: [LAUNCH], snapshot: 'sci_bench', version: '0.1' },
      provenance: { set: 'v1', seedTaskIds: ['A-01'], model: 'task-generator', promptVersion: 'task-generator/v1' },
    });
    assert.equal(task.id, 'G-001');
    assert.equal(task.sort, 'generated');
    assert.equal(hasEvaluators(task), false);
    assert.deepEqual(parseTask(APPS, JSON.parse(JSON.stringify({ ...task, id: undefined })), 'G-001'), task);
    const { generated: _generated, id: _id, ...plain } = task;
    assert.throws(() => parseTask(APPS, plain, 'G-001'), (err: unknown) => {
      assert.ok(err instanceof ValidationError);
      assert.deepEqual(err.problems, ['evaluate: expected at least one check (only generated tasks have none)']);
      return true;
    });
    assert.throws(
      () => generatedTask(APPS, { id: 'G-002', software: 'KAlgebra', instruction: '', maxSteps: 0, start: { initialize: [], snapshot: '', version: '' }, provenance: { set: '../x', seedTaskIds: [], model: 'm', promptVersion: 'p' } }),
      (err: unknown) => {
        assert.ok(err instanceof ValidationError);
        assert.deepEqual(err.problems.map((p) => p.split(':')[0]), ['steps', 'instruction', 'generated.set', 'generated.seedTaskIds']);
        return true;
      },
    );
  });
});

describe('deduplicating generated instructions', () => {
  const seeds = [
    { name: 'A-01', instruction: 'Calculate the conjugate of (1 + i) and store the answer in variable `p`.' },
    { name: 'C-01', instruction: 'Calculate log2(3) and store it in p.' },
  ];

  it('normalises case, punctuation and spacing, keeping the symbols of formulas', () => {
    assert.equal(normaliseInstruction('  Store 2^10 in  variable `q`. '), 'store 2^10 in variable q');
    assert.equal(normaliseInstruction('Plot y = sin(x), then DONE.'), 'plot y = sin(x) then done');
    assert.equal(instructionSimilarity('Store 2^10 in q.', 'store 2^10 in Q'), 1);
    assert.ok(instructionSimilarity('Store 2^10 in q.', 'Store 3^10 in q.') < 0.5, 'other numbers, other task');
    assert.ok(instructionSimilarity("Replace the text 'paper' with 'lemma'.", "Replace the text 'paper' with 'axiom'.") < 0.5, 'other quoted texts, other task');
    assert.ok(instructionSimilarity("Replace the text 'paper' with 'lemma'.", 'Replace the text "Paper" with "lemma".') >= 0.85, 'the same quoted texts, whatever the quotes');
    assert.ok(instructionSimilarity('Store the answer in variable `p`.', 'Store the answer in variable p.') >= 0.85, 'quoting on one side only changes nothing');
    assert.ok(instructionSimilarity("Plot y = x^2 in KAlgebra's 2D Graph, then in KAlgebra's 3D Graph.", "Plot y = x^2 in KAlgebra's 2D Graph and then in KAlgebra's 3D Graph.") >= 0.85, 'apostrophes are not quotes');
  });

  it('decides similarAtLeast as instructionSimilarity >= the threshold, for every pair, at every threshold', () => {
    const texts = [
      'Store 2^10 in q.', 'store 2^10 in Q', 'Store 3^10 in q.', 'Store 2^10 in variable q, then DONE.', 'Plot y = sin(x).', 'Plot y = sin(x) in the 2D Graph.',
      "Replace the text 'paper' with 'lemma'.", 'Replace the text "Paper" with "lemma".', "Replace the text 'paper' with 'axiom'.", 'Replace the text paper with lemma.',
      'Store the answer in variable `p`.', 'Store the answer in variable p.', 'variable p: store the answer', '', 'x', 'Compute the determinant of [[1, 2], [3, 4]].', 'Compute the determinant of [[1, 2], [3, 5]].',
    ];
    let decided = 0;
    for (const a of texts) {
      for (const b of texts) {
        const similarity = instructionSimilarity(a, b);
        for (const threshold of [0.1, 0.3, 0.425, 0.5, 0.6, 0.85, 0.9, 1]) {
          assert.equal(similarAtLeast(a, b, threshold), similarity >= threshold, `${JSON.stringify(a)} ~ ${JSON.stringify(b)}: ${similarity} against ${threshold}`);
          decided += 1;
        }
      }
    }
    assert.equal(decided, texts.length ** 2 * 8);
  });

  it('drops exact and near repeats of seeds and of earlier candidates, naming what they repeat', () => {
    const candidates = [
      { name: 'reply 1 item 1', instruction: 'Store 2^10 in variable q.' },
      { name: 'reply 1 item 2', instruction: 'calculate LOG2(3) and store it in p' },
      { name: 'reply 1 item 3', instruction: 'Store 2^10 in the variable q.' },
      { name: 'reply 1 item 4', instruction: 'In variable q, store 2^10.' },
      { name: 'reply 1 item 5', instruction: 'Plot the function y = x^3 - 2x in the 2D graph.' },
      { name: 'reply 1 item 6', instruction: 'Store 3^10 in variable r.' },
    ];
    const { kept, duplicates } = dedupeInstructions(candidates, seeds, 0.85);
    assert.deepEqual(kept.map((k) => k.name), ['reply 1 item 1', 'reply 1 item 5', 'reply 1 item 6']);
    assert.deepEqual(duplicates.map((d) => [d.instruction, d.of, d.similarity >= 0.85]), [
      ['calculate LOG2(3) and store it in p', 'C-01', true],
      ['Store 2^10 in the variable q.', 'reply 1 item 1', true],
      ['In variable q, store 2^10.', 'reply 1 item 1', true],
    ]);
    // At threshold 1 only repeats of the normalised text or of its very words go.
    assert.deepEqual(dedupeInstructions(candidates, seeds, 1).kept.map((k) => k.name), ['reply 1 item 1', 'reply 1 item 3', 'reply 1 item 5', 'reply 1 item 6']);
    assert.throws(() => dedupeInstructions(candidates, seeds, 0), /threshold must be in \(0, 1\]/);
  });
});

describe('deduplicating across the rounds of a run', () => {
  const earlier = [
    { name: 'r1 G-001', instruction: 'Store 2^10 in variable q.', earlier: { set: 'run-r1', round: 1, task: 'G-001' } },
    { name: 'r1 G-002', instruction: 'Plot the function y = x^2 in the 2D graph.', earlier: { set: 'run-r1', round: 1, task: 'G-002' } },
    { name: 'r2 G-001', instruction: 'Compute 12*7+5 and submit it.', earlier: { set: 'run-r2', round: 2, task: 'G-001' } },
  ];
  const seeds = [{ name: 'C-01', instruction: 'Calculate log2(3) and store it in p.' }];

  it('drops a repeat of an earlier round\'s task, exact or near, and records its set, round, task and instruction apart from the other duplicates', () => {
    const candidates = [
      { name: 'reply 1 item 1', instruction: 'store 2^10 in variable Q' },
      { name: 'reply 1 item 2', instruction: 'Store 3^10 in variable q.' },
      { name: 'reply 1 item 3', instruction: 'Compute 12*7+5 and submit that.' },
      { name: 'reply 1 item 4', instruction: 'Calculate log2(3) and store it in p.' },
      { name: 'reply 1 item 5', instruction: 'Store 3^10 in the variable q.' },
    ];
    const known = [...earlier, ...seeds];
    const { kept, duplicates } = dedupeInstructions(candidates, known, 0.85);
    assert.deepEqual(kept.map((k) => k.name), ['reply 1 item 2']);
    const split = splitRepeats(duplicates, known);
    assert.deepEqual(split.repeats.map(({ similarity, ...r }) => ({ ...r, similar: similarity >= 0.85 })), [
      { instruction: 'store 2^10 in variable Q', set: 'run-r1', round: 1, task: 'G-001', of: 'Store 2^10 in variable q.', similar: true },
      { instruction: 'Compute 12*7+5 and submit that.', set: 'run-r2', round: 2, task: 'G-001', of: 'Compute 12*7+5 and submit it.', similar: true },
    ]);
    assert.deepEqual(split.duplicates.map((d) => [d.instruction, d.of]), [
      ['Calculate log2(3) and store it in p.', 'C-01'],
      ['Store 3^10 in the variable q.', 'reply 1 item 2'],
    ]);
    // Without the earlier rounds the same candidates are kept: it is the rounds that drop them.
    assert.deepEqual(dedupeInstructions(candidates, seeds, 0.85).kept.map((k) => k.name), ['reply 1 item 1', 'reply 1 item 2', 'reply 1 item 3']);
  });
});

describe('the specialization rounds behind a specialist checkpoint', () => {
  it('are the sets <run>-r1 … <run>-r<n> of a checkpoint <run>-r<n>, used if they exist; a checkpoint named otherwise has none', () => {
    assert.deepEqual(roundSetsOf('KAlg-r2'), [
      { set: 'KAlg-r1', round: 1, rollouts: 'KAlg-r1-gen', ifExists: true },
      { set: 'KAlg-r2', round: 2, rollouts: 'KAlg-r2-gen', ifExists: true },
    ]);
    assert.deepEqual(roundSetsOf('a-r-b-r1').map((r) => r.set), ['a-r-b-r1']);
    assert.deepEqual(roundSetsOf('pipeline-generalist'), []);
    assert.deepEqual(roundSetsOf('x-r0'), []);
  });
});

describe('judge screenshot subsampling', () => {
  it('keeps everything that fits, else the first, the last and evenly spaced ones', () => {
    assert.deepEqual(subsampleIndices(5, 8), [0, 1, 2, 3, 4]);
    assert.deepEqual(subsampleIndices(21, 5), [0, 5, 10, 15, 20]);
    assert.deepEqual(subsampleIndices(10, 4), [0, 3, 6, 9]);
    assert.deepEqual(subsampleIndices(10, 2), [0, 9]);
    assert.deepEqual(subsampleIndices(10, 1), [9]);
    assert.deepEqual(subsampleIndices(0, 3), []);
    for (let count = 1; count <= 40; count++) {
      for (let max = 1; max <= 12; max++) {
        const picked = subsampleIndices(count, max);
        assert.equal(picked.length, Math.min(count, max));
        assert.equal(new Set(picked).size, picked.length, `${count}/${max} repeats an index`);
        assert.equal(picked.at(-1), count - 1, 'the final screen is always shown');
        assert.deepEqual([...picked].sort((a, b) => a - b), picked);
      }
    }
    assert.throws(() => subsampleIndices(3, 0), /at most screenshots|integer >= 1/);
    assert.throws(() => subsampleIndices(-1, 3), /integer >= 0/);
  });
});
