import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULT_TASK_ROOT, stageTasks, TaskLibrary } from '../../../activities/tasks/library';
import type { ObjectStore } from '../../../activities/storage/object-store';
import { SCIENCEBOARD_VM, taskSupport } from '../../../core/requirements';
import { APPS } from '../../../apps/index';

describe('task library', function () {
  this.timeout(120_000);

  it('loads every task of the six applications without a reason against it, predicates compiled by python3', () => {
    const library = new TaskLibrary();
    assert.deepEqual(library.software(), ['Celestia', 'ChimeraX', 'GrassGIS', 'KAlgebra', 'Lean', 'TeXstudio']);
    const loaded = library.software().flatMap((software) => library.load(software));
    assert.equal(loaded.length, 115);
    assert.deepEqual(loaded.filter((t) => t.unknown !== undefined).map((t) => `${t.type}/${t.id}: ${t.unknown?.join('; ')}`), []);
  });

  describe('a folder with tasks from a later release and broken predicates', () => {
    let root: string;
    before(() => {
      root = mkdtempSync(path.join(tmpdir(), 'coda-library-'));
      cpSync(path.join(DEFAULT_TASK_ROOT, 'Celestia'), path.join(root, 'Celestia'), { recursive: true });
      const edit = (id: string, change: (task: Record<string, unknown>) => void): void => {
        const file = path.join(root, 'Celestia', `${id}.json`);
        const task = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
        change(task);
        writeFileSync(file, JSON.stringify(task));
      };
      edit('A-01', (t) => {
        (t.initialize as object[]).push({ func: 'frobnicate', level: 3 });
      });
      edit('A-02', (t) => {
        (t.evaluate as Array<Record<string, unknown>>)[0]!.pred = 'lambda key, value: abs(key - value < 0.001';
      });
      edit('A-04', (t) => {
        (t.evaluate as Array<Record<string, unknown>>)[1]!.key = "lambda dump: dump.__class__.__subclasses__()";
      });
    });
    after(() => rmSync(root, { recursive: true, force: true }));

    it('loads them all and sets apart, with reasons naming the task and field, the ones it cannot run', () => {
      const tasks = new TaskLibrary(root).load('Celestia');
      assert.equal(tasks.length, 22);
      const reasons = Object.fromEntries(tasks.filter((t) => t.unknown !== undefined).map((t) => [t.id, t.unknown]));
      assert.deepEqual(Object.keys(reasons).sort(), ['A-01', 'A-02', 'A-04']);
      assert.match(reasons['A-01']?.[0] ?? '', /^initialize\[2\]: func "frobnicate" is not known for Celestia \(known: launch, execute, touch, download, opt, append\)$/);
      assert.match(reasons['A-02']?.[0] ?? '', /^task A-02 evaluate\[0\]\.pred: the predicate sandbox refuses it: SyntaxError/);
      assert.match(reasons['A-04']?.[0] ?? '', /^task A-04 evaluate\[1\]\.key: the predicate sandbox refuses it: ValueError: names __class__, __subclasses__ are not allowed/);
      const vm = [{ host: 'vm-1', kind: 'osworld' as const, ...SCIENCEBOARD_VM }];
      const a02 = tasks.find((t) => t.id === 'A-02')!;
      const support = taskSupport(APPS, a02, vm);
      assert.ok(!support.supported && /evaluate\[0\]\.pred/.test(support.reason));
      assert.equal(taskSupport(APPS, tasks.find((t) => t.id === 'A-05')!, vm).supported, true);
    });

    it('refuses to stage a task it cannot run', async () => {
      const tasks = new TaskLibrary(root).load('Celestia', ['A-01']);
      // The check comes before any write: the store is never reached.
      await assert.rejects(stageTasks({} as ObjectStore, 'coda', tasks), /unsupported tasks cannot be staged: Celestia\/A-01 \(initialize\[2\]: func "frobnicate"/);
    });
  });
});
