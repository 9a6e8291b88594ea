import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { APPS } from '../../apps/index';
import { appColumn } from '../../core/report';
import { funcDrives, parseTask, parseTaskText, pythonSources, SCIENCEBOARD_SNAPSHOT, type Task } from '../../core/task';
import { ValidationError } from '../../core/validation';

const ROOT = path.resolve(__dirname, '../../../data/scienceboard');
const folders = readdirSync(ROOT).filter((name) => statSync(path.join(ROOT, name)).isDirectory()).sort();
const raw = (software: string, id: string): Record<string, unknown> => JSON.parse(readFileSync(path.join(ROOT, software, `${id}.json`), 'utf8')) as Record<string, unknown>;
const ids = (software: string): string[] => readdirSync(path.join(ROOT, software)).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -'.json'.length)).sort();
const task = (software: string, id: string): Task => parseTask(APPS, raw(software, id), id);

describe('every ScienceBoard application\'s tasks', () => {
  it('ships the tasks of the six applications, each app in the registry', () => {
    assert.deepEqual(
      folders.map((f) => [f, ids(f).length]),
      [['Celestia', 22], ['ChimeraX', 20], ['GrassGIS', 23], ['KAlgebra', 20], ['Lean', 18], ['TeXstudio', 12]],
    );
    assert.deepEqual(APPS.map((a) => a.software).sort(), folders);
    assert.deepEqual(APPS.map(appColumn), ['Algebra (KAlgebra)', 'Biochemistry (ChimeraX)', 'GIS (GRASS GIS)', 'Astronomy (Celestia)', 'Documents (TeXstudio)', 'Theorem proving (Lean)']);
    assert.match(readFileSync(path.join(ROOT, 'NOTICE.md'), 'utf8'), /ChimeraX.*GrassGIS.*Celestia.*Lean/s);
  });

  it('parses every task file unchanged, knowing every func and check', () => {
    let count = 0;
    for (const software of folders) {
      for (const id of ids(software)) {
        const file = raw(software, id);
        const parsed = parseTaskText(APPS, readFileSync(path.join(ROOT, software, `${id}.json`), 'utf8'), id);
        assert.equal(parsed.unknown, undefined, `${software}/${id}: ${parsed.unknown?.join('; ')}`);
        // KAlgebra's plot points are kept as the file spells them; their values are the file's numbers.
        const evaluate = parsed.evaluate.map((c) => (c.type === 'eqn' && c.key !== '#SIZE' ? { ...c, key: c.key.map((p) => p.map(Number)) } : c));
        assert.deepEqual({ ...parsed, evaluate }, { id, ...file }, `${software}/${id}`);
        assert.equal(parsed.type, software);
        count++;
      }
    }
    assert.equal(count, 115);
  });

  it('covers the funcs and checks ScienceBoard defines and its tasks use, per application', () => {
    const used = (software: string): { funcs: string[]; checks: string[] } => {
      const funcs = new Set<string>();
      const checks = new Set<string>();
      for (const id of ids(software)) {
        const t = task(software, id);
        t.initialize.forEach((s) => funcs.add(s.func));
        t.evaluate.forEach((c) => checks.add(c.type));
      }
      return { funcs: [...funcs].sort(), checks: [...checks].sort() };
    };
    assert.deepEqual(used('Celestia'), { funcs: ['launch', 'opt'], checks: ['info', 'stop'] });
    assert.deepEqual(used('ChimeraX'), { funcs: ['alphafold_match', 'clear_log', 'color', 'download', 'execute', 'launch', 'open', 'turn'], checks: ['file', 'info', 'states', 'stop'] });
    assert.deepEqual(used('GrassGIS'), { funcs: ['execute', 'launch', 'layer', 'map', 'scale'], checks: ['db', 'info', 'stop'] });
    assert.deepEqual(used('Lean'), { funcs: ['def', 'import', 'launch', 'open', 'query'], checks: ['placeholder'] });
  });

  it('reads each application\'s fields: Celestia\'s query, ChimeraX\'s find and null values, GRASS\'s db kwargs, Lean without a snapshot', () => {
    const b08 = task('Celestia', 'B-08');
    assert.deepEqual(b08.query, [{ name: 'Jupiter', type: 2 }, { name: 'Callisto', type: 2 }]);
    assert.deepEqual(b08.initialize[0], { func: 'opt', depth: 6 });
    const a10 = task('ChimeraX', 'A-10');
    assert.deepEqual(a10.evaluate[0], { type: 'states', key: "lambda key: key.startswith('_state_containers.models._models.(1,)._nucleotide_info')", value: null });
    const d02 = task('ChimeraX', 'D-02');
    assert.deepEqual(d02.evaluate.find((c) => c.type === 'states' && c.pattern === '41 distances'), {
      type: 'states',
      find: "lambda key, value: key.endswith('page_source')",
      key: 'lambda key: key',
      pattern: '41 distances',
    });
    const g = task('GrassGIS', 'D-04');
    assert.deepEqual(g.evaluate[0], {
      type: 'db',
      cmd: 'v.to.db',
      kwargs: { flags: 'p', map: 'countries@PERMANENT', type: 'point', option: 'coor' },
      key: 'lambda out: out.strip()',
      value: 'cat|x|y|z\n257|-79.1050308691105|8.348947891274|0',
      pred: 'lambda key, value: key == value',
    });
    const lean = task('Lean', 'A-05');
    assert.equal(lean.snapshot, undefined);
    assert.equal(SCIENCEBOARD_SNAPSHOT, 'sci_bench');
    assert.deepEqual(lean.initialize.map((s) => s.func), ['import', 'open', 'def', 'query', 'launch']);
    assert.deepEqual(lean.evaluate, [{ type: 'placeholder' }]);
  });

  it('says which app each func drives, cross-application funcs included', () => {
    assert.equal(funcDrives(APPS, 'TeXstudio', 'chimerax_open'), 'ChimeraX');
    assert.equal(funcDrives(APPS, 'ChimeraX', 'open'), 'ChimeraX');
    assert.equal(funcDrives(APPS, 'GrassGIS', 'layer'), 'GrassGIS');
    assert.equal(funcDrives(APPS, 'Celestia', 'opt'), undefined);
    assert.equal(funcDrives(APPS, 'Lean', 'launch'), undefined);
  });

  it('lists the Python sources ScienceBoard evaluates, by field', () => {
    assert.deepEqual(pythonSources(APPS, task('Celestia', 'A-01')), [
      { field: 'evaluate[0].key', source: "lambda dump: dump['time']['value']" },
      { field: 'evaluate[0].pred', source: 'lambda key, value: abs(key - value) < 0.1' },
    ]);
    // ChimeraX evaluates a states key only when it is a lambda, and a file value likewise.
    assert.deepEqual(pythonSources(APPS, task('ChimeraX', 'A-01')), []);
    const d03 = pythonSources(APPS, task('ChimeraX', 'D-03'));
    assert.deepEqual(d03, [{ field: 'evaluate[3].value', source: "lambda: __import__('datetime').datetime.today().strftime('%Y-%m-%d')" }]);
    assert.equal(pythonSources(APPS, task('Lean', 'A-01')).length, 0);
    assert.equal(pythonSources(APPS, task('KAlgebra', 'A-01')).length, 0);
  });

  it('names the field of a known check that is broken, and holds Lean tasks to one query ending in "by sorry"', () => {
    const problems = (file: Record<string, unknown>, id: string): string[] => {
      try {
        parseTask(APPS, file, id);
        return [];
      } catch (err) {
        assert.ok(err instanceof ValidationError);
        return err.problems;
      }
    };
    const chimera = raw('ChimeraX', 'A-01');
    assert.deepEqual(problems({ ...chimera, evaluate: [{ type: 'states', key: 'x' }] }, 'A-01'), ['evaluate[0].value: expected value or pattern']);
    const celestia = raw('Celestia', 'B-08');
    assert.deepEqual(problems({ ...celestia, query: [{ name: 'Jupiter', type: 'planet' }] }, 'B-08'), ['query[0].type: Invalid input: expected number, received string']);
    const lean = raw('Lean', 'A-01');
    const steps = lean.initialize as Array<Record<string, unknown>>;
    assert.deepEqual(problems({ ...lean, initialize: steps.filter((s) => s.func !== 'query') }, 'A-01'), ['initialize: expected exactly one "query" func in a Lean task, found 0']);
    assert.deepEqual(
      problems({ ...lean, initialize: steps.map((s) => (s.func === 'query' ? { ...s, expr: 'theorem t : True := by trivial' } : s)) }, 'A-01'),
      [`initialize[${steps.findIndex((s) => s.func === 'query')}].expr: expected the statement to end in "by sorry"`],
    );
  });
});
