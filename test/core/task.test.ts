import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { taskSupport } from '../../core/requirements';
import { parseTask, parseTaskText } from '../../core/task';
import { commandLine, hasReferenceAnswer } from '../../core/task-common';
import { ValidationError } from '../../core/validation';
import { APPS } from '../../apps/index';

const DIR = path.resolve(__dirname, '../../../data/scienceboard/KAlgebra');
const TEX_DIR = path.resolve(DIR, '..', 'TeXstudio');
const files = readdirSync(DIR).filter((name) => name.endsWith('.json')).sort();
const texFiles = readdirSync(TEX_DIR).filter((name) => name.endsWith('.json')).sort();
const load = (name: string, dir = DIR): unknown => JSON.parse(readFileSync(path.join(dir, name), 'utf8'));

describe('ScienceBoard tasks', () => {
  it('ships the 20 KAlgebra tasks with their MIT licence notice', () => {
    assert.equal(files.length, 20);
    const licence = readFileSync(path.join(DIR, '..', 'LICENSE'), 'utf8');
    assert.match(licence, /^MIT License/);
    assert.match(readFileSync(path.join(DIR, '..', 'NOTICE.md'), 'utf8'), /MIT/);
  });

  it('ships the 12 TeXstudio tasks', () => {
    assert.deepEqual(
      texFiles.map((f) => f.replace(/\.json$/, '')),
      ['A-01', 'A-02', 'A-03', 'B-01', 'B-03', 'B-04', 'C-01', 'C-02', 'C-03', 'C-05', 'C-06', 'D-01'],
    );
  });

  it('parses every task unchanged', () => {
    for (const [dir, names] of [
      [DIR, files],
      [TEX_DIR, texFiles],
    ] as const) {
      for (const name of names) {
        const raw = load(name, dir) as Record<string, unknown>;
        const id = name.replace(/\.json$/, '');
        const task = parseTask(APPS, raw, id);
        // Plot points are text: numbers given as JavaScript numbers are spelled as JavaScript writes them.
        const evaluate = (raw.evaluate as Array<{ type: string; key: unknown }>).map((c) => (c.type === 'eqn' && Array.isArray(c.key) ? { ...c, key: c.key.map((p: number[]) => p.map(String)) } : c));
        assert.deepEqual(task, { id, ...raw, evaluate }, name);
      }
    }
  });

  it('reads a task file keeping the spelling of the plot points its app receives (parseTaskText)', () => {
    const c07 = parseTaskText(APPS, readFileSync(path.join(DIR, 'C-07.json'), 'utf8'), 'C-07');
    const eqn = c07.evaluate[0];
    assert.ok(eqn?.type === 'eqn' && eqn.key !== '#SIZE');
    assert.deepEqual(eqn.key[7], ['0', '-1.0']);
    assert.deepEqual(eqn.key[0], ['-11', '-23.18032786885246']);
    const c17 = parseTaskText(APPS, readFileSync(path.join(DIR, 'C-17.json'), 'utf8'), 'C-17');
    assert.deepEqual(c17.evaluate[0]?.type === 'eqn' && c17.evaluate[0].key !== '#SIZE' ? [c17.evaluate[0].key[3], c17.evaluate[0].key[9]] : [], [['0', '-0.0', '1'], ['1.0', '0.9797958971132712', '-1.2']]);
    // Everything else is read as parseTask reads the parsed file, and a parsed task reads back the same (S3, workflow payloads).
    const text = readFileSync(path.join(DIR, 'B-04.json'), 'utf8');
    const b04 = parseTaskText(APPS, text, 'B-04');
    assert.deepEqual({ ...b04, evaluate: [] }, { ...parseTask(APPS, JSON.parse(text), 'B-04'), evaluate: [] });
    const { id: _id, ...stored } = c07;
    assert.deepEqual(parseTask(APPS, JSON.parse(JSON.stringify(stored)), 'C-07'), c07);
  });

  it('refuses a plot point written as a string, and a file that is not JSON, naming the task and the field', () => {
    const raw = load('C-07.json') as { evaluate: Array<{ key: unknown[][] }> };
    raw.evaluate[0]!.key[2] = ['-19', '-39.1'];
    assert.throws(() => parseTaskText(APPS, JSON.stringify(raw), 'C-07'), (err: unknown) => err instanceof ValidationError && /evaluate\[0\]\.key\[2\]\[0\]: expected a number, found the string "-19"/.test(err.message));
    assert.throws(() => parseTaskText(APPS, '{"type": ', 'C-07'), (err: unknown) => err instanceof ValidationError && /task C-07[\s\S]*the file is not JSON/.test(err.message));
  });

  it('reads the fields the desktop needs', () => {
    const a01 = parseTask(APPS, load('A-01.json'), 'A-01');
    assert.equal(a01.steps, 5);
    assert.equal(a01.initialize[0]?.func, 'launch');
    assert.deepEqual(a01.evaluate, [{ type: 'var', key: 'p', value: '1+-i' }]);
    const c03 = parseTask(APPS, load('C-03.json'), 'C-03');
    assert.deepEqual(c03.evaluate[0], { type: 'stop', value: 'ANS', args: ['46368'] });
    const d02 = parseTask(APPS, load('D-02.json'), 'D-02');
    assert.equal(d02.steps, 10);
  });

  it('covers every initialize func and evaluate type of the KAlgebra set', () => {
    const funcs = new Set<string>();
    const types = new Set<string>();
    for (const name of files) {
      const task = parseTask(APPS, load(name), name.replace(/\.json$/, ''));
      task.initialize.forEach((step) => funcs.add(step.func));
      task.evaluate.forEach((check) => types.add(check.type));
    }
    assert.deepEqual([...funcs].sort(), ['func_2d', 'func_3d', 'launch', 'tab', 'touch']);
    assert.deepEqual([...types].sort(), ['eqn', 'stop', 'val', 'var']);
  });

  it('covers every initialize func and evaluate type of the TeXstudio set, argv commands included', () => {
    const funcs = new Set<string>();
    const types = new Set<string>();
    for (const name of texFiles) {
      const task = parseTask(APPS, load(name, TEX_DIR), name.replace(/\.json$/, ''));
      task.initialize.forEach((step) => funcs.add(step.func));
      task.evaluate.forEach((check) => types.add(check.type));
    }
    assert.deepEqual([...funcs].sort(), ['chimerax_clear_log', 'chimerax_open', 'chimerax_turn', 'execute', 'launch', 'touch']);
    assert.deepEqual([...types].sort(), ['compile', 'file', 'include', 'stop']);
    const a01 = parseTask(APPS, load('A-01.json', TEX_DIR), 'A-01');
    assert.deepEqual(a01.initialize[2], {
      func: 'execute',
      command: ['rm', '/home/user/.local/share/ChimeraX/commands', '/home/user/.local/share/ChimeraX/file_history', '/home/user/.local/share/ChimeraX/preregistration'],
    });
    assert.equal(a01.initialize[4]?.func === 'launch' && commandLine(a01.initialize[4].command), 'chimerax --cmd remotecontrol rest start json true port «PORTLIKE»');
    assert.deepEqual(a01.evaluate[1], { type: 'compile', path: '/home/user/atelier', file: 'main' });
  });

  it('wants source and target of a file check together', () => {
    const raw = { ...(load('C-02.json', TEX_DIR) as object), evaluate: [{ type: 'file', path: '/home/user/atelier/main.tex', source: 'M' }] };
    assert.throws(() => parseTask(APPS, raw, 'C-02'), (error: unknown) => {
      assert.ok(error instanceof ValidationError);
      assert.deepEqual(error.problems, ['evaluate[0].target: source and target come together']);
      return true;
    });
  });

  it('loads a task with a func or check it does not know, listing each by name, and makes it unsupported', () => {
    const raw = { ...(load('A-01.json') as object), initialize: [{ func: 'launch', command: 'kalgebra' }, { func: 'open_browser', url: 'x' }], evaluate: [{ type: 'pixel', at: 1 }] };
    const task = parseTask(APPS, raw, 'A-01');
    assert.deepEqual(task.unknown, [
      'initialize[1]: func "open_browser" is not known for KAlgebra (known: launch, execute, touch, download, opt, append, tab, func_2d, func_3d)',
      'evaluate[0]: check "pixel" is not known for KAlgebra (known: stop, var, val, eqn)',
    ]);
    assert.deepEqual(task.initialize, [{ func: 'launch', command: 'kalgebra' }]);
    assert.deepEqual(task.evaluate, []);
    const support = taskSupport(APPS, task, [{ host: 'vm', kind: 'osworld', apps: 'any', programs: 'any', texFiles: 'any', network: true, vmSnapshot: true }]);
    assert.equal(support.supported, false);
    assert.match(support.supported ? '' : support.reason, /func "open_browser" is not known for KAlgebra/);
  });

  it('reads funcs by the task\'s application: Celestia\'s opt is known to every VM task, ChimeraX\'s open is not TeXstudio\'s', () => {
    const tex = load('A-01.json', TEX_DIR) as Record<string, unknown>;
    const withOpen = parseTask(APPS, { ...tex, initialize: [...(tex.initialize as object[]), { func: 'open', name: '2olx' }, { func: 'opt', depth: 6 }] }, 'A-01');
    assert.deepEqual(withOpen.unknown, [
      `initialize[${(tex.initialize as object[]).length}]: func "open" is not known for TeXstudio (known: launch, execute, touch, download, opt, append, chimerax_clear_log, chimerax_open, chimerax_turn)`,
    ]);
    const future = parseTask(APPS, { ...tex, type: 'Stellarium' }, 'A-01');
    assert.equal(future.unknown?.[0], 'type: application "Stellarium" is not known (known: KAlgebra, ChimeraX, GrassGIS, Celestia, TeXstudio, Lean)');
  });

  it('still names the bad field of a func it knows: a broken file is an error, not an unknown func', () => {
    const raw = { ...(load('A-01.json') as object), initialize: [{ func: 'tab', index: 9 }, { func: 'launch', command: 'kalgebra', sudo: true }] };
    assert.throws(
      () => parseTask(APPS, raw, 'A-01'),
      (error: unknown) => {
        assert.ok(error instanceof ValidationError);
        assert.equal(error.source, 'task A-01');
        assert.equal(error.problems.length, 2);
        assert.match(error.problems[0] ?? '', /^initialize\[0\]\.index: /);
        assert.match(error.problems[1] ?? '', /^initialize\[1\]: Unrecognized key: "sudo"/);
        return true;
      },
    );
  });

  it('names every bad field, including unknown top-level fields', () => {
    const raw = { ...(load('A-01.json') as object), steps: 0, surprise: true };
    assert.throws(() => parseTask(APPS, raw, 'A-01'), (error: unknown) => {
      assert.ok(error instanceof ValidationError);
      assert.equal(error.problems.length, 2);
      assert.ok(error.problems.some((p) => p.startsWith('steps:')));
      assert.ok(error.problems.some((p) => p.includes('surprise')));
      return true;
    });
  });

  it('refuses an id that cannot be a storage key', () => {
    assert.throws(() => parseTask(APPS, load('A-01.json'), '../A-01'), /not a valid id/);
    // Valid characters, but a dot-dot: refused here, not later when its keys are built mid-run.
    assert.throws(() => parseTask(APPS, load('A-01.json'), 'A..01'), /not a valid id/);
  });

  it('knows which tasks carry a replayable reference answer', () => {
    assert.equal(hasReferenceAnswer(parseTask(APPS, load('A-01.json'), 'A-01')), true);
    assert.equal(hasReferenceAnswer(parseTask(APPS, load('B-03.json'), 'B-03')), false);
    const raw = load('A-01.json') as Record<string, unknown>;
    delete raw.ans;
    assert.equal(hasReferenceAnswer(parseTask(APPS, raw, 'A-01')), false);
  });
});
