import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { hasReferenceAnswer, parseTask } from '../../core/task';
import { ValidationError } from '../../core/validation';

const DIR = path.resolve(__dirname, '../../../data/scienceboard/KAlgebra');
const files = readdirSync(DIR).filter((name) => name.endsWith('.json')).sort();
const load = (name: string): unknown => JSON.parse(readFileSync(path.join(DIR, name), 'utf8'));

describe('ScienceBoard tasks', () => {
  it('ships the 20 KAlgebra tasks with their MIT licence notice', () => {
    assert.equal(files.length, 20);
    const licence = readFileSync(path.join(DIR, '..', 'LICENSE'), 'utf8');
    assert.match(licence, /^MIT License/);
    assert.match(readFileSync(path.join(DIR, '..', 'NOTICE.md'), 'utf8'), /MIT/);
  });

  it('parses every task unchanged', () => {
    for (const name of files) {
      const raw = load(name) as Record<string, unknown>;
      const id = name.replace(/\.json$/, '');
      const task = parseTask(raw, id);
      assert.deepEqual(task, { id, ...raw }, name);
    }
  });

  it('reads the fields the desktop needs', () => {
    const a01 = parseTask(load('A-01.json'), 'A-01');
    assert.equal(a01.steps, 5);
    assert.equal(a01.initialize[0]?.func, 'launch');
    assert.deepEqual(a01.evaluate, [{ type: 'var', key: 'p', value: '1+-i' }]);
    const c03 = parseTask(load('C-03.json'), 'C-03');
    assert.deepEqual(c03.evaluate[0], { type: 'stop', value: 'ANS', args: ['46368'] });
    const d02 = parseTask(load('D-02.json'), 'D-02');
    assert.equal(d02.steps, 10);
  });

  it('covers every initialize func and evaluate type of the KAlgebra set', () => {
    const funcs = new Set<string>();
    const types = new Set<string>();
    for (const name of files) {
      const task = parseTask(load(name), name.replace(/\.json$/, ''));
      task.initialize.forEach((step) => funcs.add(step.func));
      task.evaluate.forEach((check) => types.add(check.type));
    }
    assert.deepEqual([...funcs].sort(), ['func_2d', 'func_3d', 'launch', 'tab', 'touch']);
    assert.deepEqual([...types].sort(), ['eqn', 'stop', 'val', 'var']);
  });

  it('reports an unknown initialize func and evaluate type by name', () => {
    const raw = { ...(load('A-01.json') as object), initialize: [{ func: 'open_browser', url: 'x' }], evaluate: [{ type: 'pixel', at: 1 }] };
    assert.throws(
      () => parseTask(raw, 'A-01'),
      (error: unknown) => {
        assert.ok(error instanceof ValidationError);
        assert.equal(error.source, 'task A-01');
        assert.deepEqual(error.problems, [
          'initialize[0].func: unknown func "open_browser" (expected one of launch, tab, func_2d, func_3d, touch)',
          'evaluate[0].type: unknown type "pixel" (expected one of var, val, eqn, stop)',
        ]);
        return true;
      },
    );
  });

  it('names every bad field, including unknown top-level fields', () => {
    const raw = { ...(load('A-01.json') as object), steps: 0, surprise: true };
    assert.throws(() => parseTask(raw, 'A-01'), (error: unknown) => {
      assert.ok(error instanceof ValidationError);
      assert.equal(error.problems.length, 2);
      assert.ok(error.problems.some((p) => p.startsWith('steps:')));
      assert.ok(error.problems.some((p) => p.includes('surprise')));
      return true;
    });
  });

  it('refuses an id that cannot be a storage key', () => {
    assert.throws(() => parseTask(load('A-01.json'), '../A-01'), /not a valid id/);
    // Valid characters, but a dot-dot: refused here, not later when its keys are built mid-run.
    assert.throws(() => parseTask(load('A-01.json'), 'A..01'), /not a valid id/);
  });

  it('knows which tasks carry a replayable reference answer', () => {
    assert.equal(hasReferenceAnswer(parseTask(load('A-01.json'), 'A-01')), true);
    assert.equal(hasReferenceAnswer(parseTask(load('B-03.json'), 'B-03')), false);
    const raw = load('A-01.json') as Record<string, unknown>;
    delete raw.ans;
    assert.equal(hasReferenceAnswer(parseTask(raw, 'A-01')), false);
  });
});
