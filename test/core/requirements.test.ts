import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { deploymentCapabilities, taskNeeds, taskSupport, type Capabilities } from '../../core/requirements';
import { parseTask, type Task } from '../../core/task';

const ROOT = path.resolve(__dirname, '../../../data/scienceboard');
const load = (software: string): Task[] =>
  readdirSync(path.join(ROOT, software))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => parseTask(JSON.parse(readFileSync(path.join(ROOT, software, f), 'utf8')), f.replace(/\.json$/, '')));

const LOCAL: Capabilities = { host: 'local-1', apps: ['KAlgebra', 'TeXstudio'], network: false, vmSnapshot: false };
const VMS: Capabilities = { host: 'rack-3', apps: 'any', network: true, vmSnapshot: true };

describe('task requirements and deployment capabilities', () => {
  const texstudio = load('TeXstudio');
  const byId = (id: string): Task => texstudio.find((t) => t.id === id) ?? assert.fail(id);

  it('supports 4 of the 12 TeXstudio tasks on local desktops and says why not for the 8 others', () => {
    const verdicts = Object.fromEntries(texstudio.map((t) => [t.id, taskSupport(t, [LOCAL])]));
    assert.deepEqual(
      Object.entries(verdicts).filter(([, v]) => v.supported).map(([id]) => id),
      ['B-01', 'C-02', 'C-06', 'D-01'],
    );
    const reason = (id: string): string => {
      const v = verdicts[id];
      assert.ok(v !== undefined && !v.supported, id);
      return v.reason;
    };
    assert.equal(
      reason('A-01'),
      'needs ChimeraX (initialize[4] launches it, initialize[5] chimerax_clear_log drives it, initialize[6] chimerax_open drives it, initialize[7] chimerax_turn drives it), which host local-1 does not have',
    );
    for (const id of ['A-02', 'A-03', 'C-01']) assert.match(reason(id), /^needs ChimeraX \(/);
    assert.equal(reason('B-03'), 'needs GRASS GIS (initialize[4] launches it), which host local-1 does not have');
    assert.equal(reason('B-04'), 'needs the internet (its instruction asks for a Google Scholar search, whose BibTeX the checks expect), which host local-1 does not have');
    assert.match(reason('C-03'), /^needs ScienceBoard's VM snapshot \(its document includes figs\/envelope\.pdf, figs\/token\.pdf and figs\/latency\.pdf/);
    assert.equal(reason('C-05'), 'needs VS Code (initialize[0] launches it), which host local-1 does not have');
  });

  it('supports every task on ScienceBoard VMs, and a task when any host of the deployment can run it', () => {
    for (const task of [...texstudio, ...load('KAlgebra')]) assert.deepEqual(taskSupport(task, [VMS]), { supported: true, hosts: ['rack-3'] }, task.id);
    assert.deepEqual(taskSupport(byId('A-01'), [LOCAL, VMS]), { supported: true, hosts: ['rack-3'] });
    assert.deepEqual(taskSupport(byId('B-01'), [LOCAL, VMS]), { supported: true, hosts: ['local-1', 'rack-3'] });
    for (const task of load('KAlgebra')) assert.equal(taskSupport(task, [LOCAL]).supported, true, task.id);
  });

  it('names each host that lacks something, and the apps a task needs', () => {
    const kalgebraOnly: Capabilities = { ...LOCAL, host: 'local-2', apps: ['KAlgebra'] };
    const verdict = taskSupport(byId('B-04'), [LOCAL, kalgebraOnly]);
    assert.deepEqual(verdict, {
      supported: false,
      reason:
        'needs the internet (its instruction asks for a Google Scholar search, whose BibTeX the checks expect), which host local-1 does not have; ' +
        'needs TeXstudio (it is a TeXstudio task, initialize[2] launches it); the internet (its instruction asks for a Google Scholar search, whose BibTeX the checks expect), which host local-2 does not have',
    });
    assert.deepEqual(taskSupport(byId('B-01'), []), { supported: false, reason: 'the deployment has no hosts' });
    assert.deepEqual(
      taskNeeds(byId('B-01')).map((n) => (n.kind === 'app' ? n.app : n.kind)),
      ['TeXstudio', 'TeXstudio'],
    );
    const unknown: Task = { ...byId('D-01'), initialize: [{ func: 'launch', command: 'zotero --headless' }] };
    assert.match((taskSupport(unknown, [LOCAL]) as { reason: string }).reason, /needs the program of "zotero --headless" \(initialize\[0\] launches it\)/);
  });

  it('annotates a task by software, id and instruction, not by id alone', () => {
    const renamed = { ...byId('B-04'), instruction: 'Add a reference to refs.bib.' };
    assert.equal(taskNeeds(renamed).some((n) => n.kind === 'network'), false);
    assert.equal(taskNeeds({ ...byId('B-04'), type: 'KAlgebra' }).some((n) => n.kind === 'network'), false);
  });

  it('derives the capabilities of each host from temporal.yaml', () => {
    const config = {
      hosts: [
        { id: 'local-1', kind: 'local' as const },
        { id: 'rack-3', kind: 'osworld' as const },
      ],
      localApps: [{ software: 'KAlgebra' }, { software: 'TeXstudio' }, { software: 'KAlgebra' }],
    };
    assert.deepEqual(deploymentCapabilities(config), [LOCAL, VMS]);
  });
});
