import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULT_TASK_ROOT } from '../../activities/tasks/library';
import { renderCensus, taskCensus } from '../../cli/task-census';
import type { Capabilities } from '../../core/requirements';

const LOCAL: Capabilities = { host: 'local-1', apps: ['KAlgebra', 'TeXstudio'], network: false, vmSnapshot: false };
const VM: Capabilities = { host: 'vm-1', apps: 'any', network: true, vmSnapshot: true };

describe('coda tasks: a census of a folder of task files for a deployment', function () {
  this.timeout(120_000);

  it('counts the shipped tasks per application in the paper\'s order: all parse, a ScienceBoard VM host runs all', () => {
    const census = taskCensus(DEFAULT_TASK_ROOT, [LOCAL, VM]);
    assert.deepEqual(census.map((c) => [c.software, c.files, c.parsed]), [
      ['KAlgebra', 20, 20],
      ['ChimeraX', 20, 20],
      ['GrassGIS', 23, 23],
      ['Celestia', 22, 22],
      ['TeXstudio', 12, 12],
      ['Lean', 18, 18],
    ]);
    for (const c of census) {
      assert.equal(c.supported['vm-1'], c.files, c.software);
      assert.deepEqual(c.broken, []);
    }
    // A host without the app runs none of its tasks, and each is listed with why.
    const celestia = census.find((c) => c.software === 'Celestia')!;
    assert.equal(celestia.supported['local-1'], 0);
    const alone = taskCensus(path.join(DEFAULT_TASK_ROOT, 'Celestia'), [LOCAL]);
    assert.equal(alone.length, 1);
    assert.equal(alone[0]?.unsupported.length, 22);
    assert.match(alone[0]?.unsupported[0]?.reason ?? '', /needs Celestia .*which host local-1 does not have/);
    const text = renderCensus(census, [LOCAL, VM]);
    assert.match(text, /^software\s+files\s+parsed\s+local-1 can run\s+vm-1 can run\n/);
    assert.match(text, /\nall\s+115\s+115\s+\d+\s+115$/);
  });

  it('lists broken files and tasks from a later release apart, without stopping at them', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'coda-census-'));
    try {
      mkdirSync(path.join(root, 'Celestia'));
      copyFileSync(path.join(DEFAULT_TASK_ROOT, 'Celestia', 'A-02.json'), path.join(root, 'Celestia', 'A-02.json'));
      const a01 = JSON.parse(readFileSync(path.join(DEFAULT_TASK_ROOT, 'Celestia', 'A-01.json'), 'utf8')) as { initialize: object[] };
      writeFileSync(path.join(root, 'Celestia', 'A-01.json'), JSON.stringify({ ...a01, initialize: [...a01.initialize, { func: 'zoom', factor: 2 }] }));
      writeFileSync(path.join(root, 'Celestia', 'A-03.json'), JSON.stringify({ ...a01, steps: 0 }));
      const [census] = taskCensus(root, [VM]);
      assert.deepEqual([census?.files, census?.parsed, census?.supported['vm-1']], [3, 2, 1]);
      assert.deepEqual(census?.unsupported.map((u) => u.id), ['A-01']);
      assert.match(census?.unsupported[0]?.reason ?? '', /func "zoom" is not known for Celestia/);
      assert.deepEqual(census?.broken.map((b) => b.id), ['A-03']);
      assert.match(census?.broken[0]?.problem ?? '', /task A-03 is invalid:; steps:/);
      const text = renderCensus(taskCensus(root, [VM]), [VM]);
      assert.match(text, /No host can run:\n {2}Celestia\/A-01: /);
      assert.match(text, /Not valid task files:\n {2}Celestia\/A-03: /);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
