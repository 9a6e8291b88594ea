import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { deploymentCapabilities, probesOf, taskNeeds, taskSupport, type Capabilities } from '../../core/requirements';
import { parseTask, type Task } from '../../core/task';
import { texDependencies } from '../../core/texstudio/dependencies';
import { APPS } from '../../apps/index';

const ROOT = path.resolve(__dirname, '../../../data/scienceboard');
const load = (software: string): Task[] =>
  readdirSync(path.join(ROOT, software))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => parseTask(APPS, JSON.parse(readFileSync(path.join(ROOT, software, f), 'utf8')), f.replace(/\.json$/, '')));

/** Every TeX file the TeXstudio documents use, but the two fonts of texlive-fonts-extra, which infra/install.sh does not install. */
const TEX_FILES = probesOf(APPS, load('TeXstudio')).texFiles.filter((f) => f !== 'kpfonts.sty' && f !== 'beramono.sty');
const LOCAL: Capabilities = { host: 'local-1', kind: 'local', apps: ['KAlgebra', 'TeXstudio'], programs: ['pdflatex', 'bibtex'], texFiles: TEX_FILES, network: false, vmSnapshot: false };
const VMS: Capabilities = { host: 'rack-3', kind: 'osworld', apps: 'any', programs: 'any', texFiles: 'any', network: true, vmSnapshot: true };

const reasonOf = (task: Task, hosts: readonly Capabilities[]): string => {
  const verdict = taskSupport(APPS, task, hosts);
  assert.ok(!verdict.supported, `${task.id} is unsupported`);
  return verdict.reason;
};

describe('task requirements derived from the task, capabilities from the host', () => {
  const texstudio = load('TeXstudio');
  const byId = (id: string): Task => texstudio.find((t) => t.id === id) ?? assert.fail(id);

  it('supports 4 of the 12 TeXstudio tasks on a local host with their apps, programs and TeX files, and derives why not for the 8 others', () => {
    assert.deepEqual(
      texstudio.filter((t) => taskSupport(APPS, t, [LOCAL]).supported).map((t) => t.id),
      ['B-01', 'C-02', 'C-06', 'D-01'],
    );
    assert.equal(
      reasonOf(byId('A-01'), [LOCAL]),
      'needs ChimeraX (initialize[4] launches it, initialize[5] chimerax_clear_log drives it, initialize[6] chimerax_open drives it, initialize[7] chimerax_turn drives it); ' +
        'the internet (initialize[6] chimerax_open fetches PDB entry 2olx from the RCSB), which host local-1 does not have',
    );
    for (const id of ['A-02', 'A-03', 'C-01']) assert.match(reasonOf(byId(id), [LOCAL]), /^needs ChimeraX \(.*the internet \(initialize\[\d\] chimerax_open fetches PDB entry \w{4} from the RCSB\)/);
    assert.equal(
      reasonOf(byId('B-03'), [LOCAL]),
      "needs GrassGIS (initialize[4] launches it); /home/user/grassdata/grassdata_piemonte_utm32n_wgs84_grass7/PERMANENT of ScienceBoard's VM snapshot (initialize[4] opens it), which host local-1 does not have",
    );
    assert.equal(reasonOf(byId('B-04'), [LOCAL]), 'needs the internet (its instruction asks for a Google Scholar search, whose BibTeX the checks expect), which host local-1 does not have');
    assert.equal(
      reasonOf(byId('C-03'), [LOCAL]),
      'needs the TeX files kpfonts.sty, beramono.sty (used by /home/user/atelier/main.tex, which initialize[0] writes); ' +
        "/home/user/atelier/figs/envelope.pdf, /home/user/atelier/figs/token.pdf, /home/user/atelier/figs/lat.pdf of ScienceBoard's VM snapshot (used by /home/user/atelier/main.tex, which initialize[0] writes), which host local-1 does not have",
    );
    assert.equal(reasonOf(byId('C-05'), [LOCAL]), "needs Lean (initialize[0] launches it); /home/user/sci, /home/user/sci/Sci/Basic.lean of ScienceBoard's VM snapshot (initialize[0] opens it), which host local-1 does not have");
  });

  it('never calls a document task supported where a TeX file or program it needs is missing, and names it', () => {
    const noFootmisc: Capabilities = { ...LOCAL, texFiles: TEX_FILES.filter((f) => f !== 'footmisc.sty'), vmSnapshot: true };
    assert.match(reasonOf(byId('C-03'), [noFootmisc]), /^needs the TeX files footmisc\.sty, kpfonts\.sty, beramono\.sty \(used by \/home\/user\/atelier\/main\.tex/);
    const noBibtex: Capabilities = { ...LOCAL, programs: ['pdflatex'] };
    assert.equal(reasonOf(byId('B-01'), [noBibtex]), 'needs the program bibtex (evaluate[1] runs bibtex for the .bib the task writes), which host local-1 does not have');
    // Unseen: a document with a package nobody listed.
    const touch = byId('C-02').initialize[0];
    assert.ok(touch?.func === 'touch');
    const unseen: Task = { ...byId('C-02'), id: 'Z-01', initialize: [{ ...touch, text: touch.text.replace('\\usepackage{bussproofs}', '\\usepackage{bussproofs} % a comment: \\usepackage{commented}\n\\usepackage[T1]{fontenc}\\usepackage{tikz-cd}') }, ...byId('C-02').initialize.slice(1)] };
    assert.equal(reasonOf(unseen, [LOCAL]), 'needs the TeX file tikz-cd.sty (used by /home/user/atelier/main.tex, which initialize[0] writes), which host local-1 does not have');
    assert.deepEqual(taskSupport(APPS, unseen, [{ ...LOCAL, texFiles: [...TEX_FILES, 'tikz-cd.sty'] }]), { supported: true, hosts: ['local-1'] });
  });

  it('a cross-application task needs each app it launches on one host', () => {
    const touch = byId('D-01').initialize[0];
    assert.ok(touch?.func === 'touch');
    const cross: Task = {
      ...byId('D-01'),
      id: 'X-01',
      initialize: [...byId('D-01').initialize, { func: 'launch', command: 'LD_LIBRARY_PATH=/home/user/6.5.0/gcc_64/lib /app/bin/kalgebra «PORTLIKE»', shell: true }],
    };
    assert.deepEqual(
      taskNeeds(APPS, cross).flatMap((n) => (n.kind === 'app' ? [n.app] : [])),
      ['TeXstudio', 'TeXstudio', 'KAlgebra'],
    );
    assert.deepEqual(taskSupport(APPS, cross, [LOCAL]), { supported: true, hosts: ['local-1'] });
    const texstudioOnly: Capabilities = { ...LOCAL, host: 'local-2', apps: ['TeXstudio'] };
    assert.equal(reasonOf(cross, [texstudioOnly]), 'needs KAlgebra (initialize[2] launches it), which host local-2 does not have');
  });

  it('derives the network and the VM snapshot from the funcs of every app', () => {
    const base = byId('D-01');
    const steps = (initialize: unknown[]): Task => ({ ...base, id: 'Y-01', type: 'ChimeraX', initialize: initialize as Task['initialize'] });
    const needs = taskNeeds(APPS, 
      steps([
        { func: 'launch', command: ['chimerax', '--cmd', 'remotecontrol rest start json true port «PORTLIKE»'] },
        { func: 'download', url: 'https://files.rcsb.org/download/3ppd.cif', path: '/home/user/Downloads/prot.cif' },
        { func: 'open', name: '/home/user/Downloads/prot.cif' },
        { func: 'alphafold_match', name: 'A8Z1J3' },
      ]),
    ).map((n) => `${n.kind}: ${n.because}`);
    assert.deepEqual(needs, [
      'app: it is a ChimeraX task',
      'app: initialize[0] launches it',
      'network: initialize[1] download downloads https://files.rcsb.org/download/3ppd.cif',
      'network: initialize[3] alphafold_match queries the AlphaFold database',
    ]);
    const grass = taskNeeds(APPS, { ...steps([{ func: 'map', grassdb: '/home/user/grassdata', location: 'natural_earth_dataset', mapset: 'PERMANENT' }]), type: 'GrassGIS' });
    assert.deepEqual(grass.at(-1), { kind: 'vmFile', path: '/home/user/grassdata/natural_earth_dataset', because: 'initialize[0] map opens this GRASS GIS location' });
    // A file the task writes itself is no snapshot file.
    const written = taskNeeds(APPS, { ...base, initialize: [{ func: 'touch', path: '/home/user/w/a.txt', text: '' }, { func: 'launch', command: 'texstudio /home/user/w/a.txt' }] });
    assert.equal(written.some((n) => n.kind === 'vmFile'), false);
  });

  it('a func or check the project does not know makes the task unsupported on every host, naming it', () => {
    const unknown = { ...byId('D-01'), unknown: ['initialize[2]: func "frobnicate" is not known for TeXstudio (known: launch, execute, touch)'] } as Task;
    assert.equal(
      reasonOf(unknown, [LOCAL, VMS]),
      'needs what no host has: initialize[2]: func "frobnicate" is not known for TeXstudio (known: launch, execute, touch), which hosts local-1, rack-3 do not have',
    );
  });

  it('classifies the tasks of the four VM-only applications from their needs: none runs locally, every one on a VM', () => {
    for (const software of ['Celestia', 'ChimeraX', 'GrassGIS', 'Lean']) {
      const tasks = load(software);
      assert.ok(tasks.length >= 18, software);
      for (const task of tasks) {
        assert.deepEqual(taskSupport(APPS, task, [VMS]), { supported: true, hosts: ['rack-3'] }, `${software}/${task.id}`);
        assert.match(reasonOf(task, [LOCAL]), new RegExp(`^needs ${software} \\(it is a ${software} task`), `${software}/${task.id}`);
      }
    }
    // GRASS GIS: every task opens a location of the VM snapshot's grassdata, so even a host with GRASS could not run it.
    const withGrass: Capabilities = { ...LOCAL, apps: ['KAlgebra', 'TeXstudio', 'GrassGIS'] };
    for (const task of load('GrassGIS')) assert.match(reasonOf(task, [withGrass]), /^needs \/home\/user\/grassdata\/\S+(, \S+)* of ScienceBoard's VM snapshot \(initialize\[\d\] (opens it|map opens this GRASS GIS location)/, task.id);
  });

  it('supports every task on ScienceBoard VMs, and a task where any host of the deployment can run it', () => {
    for (const task of [...texstudio, ...load('KAlgebra')]) assert.deepEqual(taskSupport(APPS, task, [VMS]), { supported: true, hosts: ['rack-3'] }, task.id);
    assert.deepEqual(taskSupport(APPS, byId('A-01'), [LOCAL, VMS]), { supported: true, hosts: ['rack-3'] });
    assert.deepEqual(taskSupport(APPS, byId('B-01'), [LOCAL, VMS]), { supported: true, hosts: ['local-1', 'rack-3'] });
    for (const task of load('KAlgebra')) assert.equal(taskSupport(APPS, task, [LOCAL]).supported, true, task.id);
    assert.deepEqual(taskSupport(APPS, byId('B-01'), []), { supported: false, reason: 'the deployment has no hosts' });
  });

  it('keeps an annotation only for what the JSON cannot show, by software, id and instruction', () => {
    assert.equal(taskNeeds(APPS, byId('B-04')).some((n) => n.kind === 'network'), true);
    assert.equal(taskNeeds(APPS, { ...byId('B-04'), instruction: 'Add a reference to refs.bib.' }).some((n) => n.kind === 'network'), false);
    assert.equal(taskNeeds(APPS, { ...byId('B-04'), type: 'KAlgebra' }).some((n) => n.kind === 'network'), false);
  });

  it('takes the local hosts from the probe, and from temporal.yaml alone knows no TeX file', () => {
    const config = {
      hosts: [
        { id: 'local-1', kind: 'local' as const },
        { id: 'rack-3', kind: 'osworld' as const },
      ],
      localApps: [{ software: 'KAlgebra' }, { software: 'TeXstudio' }, { software: 'KAlgebra' }],
    };
    assert.deepEqual(deploymentCapabilities(config, { apps: ['KAlgebra', 'TeXstudio'], programs: ['pdflatex', 'bibtex'], texFiles: TEX_FILES }), [LOCAL, VMS]);
    const unprobed = deploymentCapabilities(config);
    assert.deepEqual(unprobed[0], { ...LOCAL, programs: [], texFiles: [] });
    assert.match(reasonOf(byId('C-06'), unprobed.slice(0, 1)), /^needs the TeX files article\.cls, inputenc\.sty, .*; the program pdflatex \(evaluate\[0\] compiles \/home\/user\/atelier\/main\.tex\), which host local-1 does not have$/);
  });
});

describe('texDependencies', () => {
  it('reads classes, packages with their option files, styles and the files beside the document, comments dropped', () => {
    const deps = texDependencies(
      [
        '\\documentclass[11pt]{article}',
        '\\usepackage[utf8]{inputenc}\\usepackage[english,greek]{babel}',
        '\\usepackage[T1]{fontenc} % \\usepackage{hidden}',
        '\\usepackage{amsmath, amssymb}',
        '\\RequirePackage{xcolor}',
        '50\\% \\usepackage{shown}',
        '\\bibliographystyle{plain}\\bibliography{refs}',
        '\\input{code}\\include{chapter.tex}',
        '\\includegraphics[width=0.48\\textwidth]{figs/envelope}',
      ].join('\n'),
    );
    assert.deepEqual(deps.texFiles, ['article.cls', 'inputenc.sty', 'babel.sty', 'english.ldf', 'greek.ldf', 'fontenc.sty', 't1enc.def', 'amsmath.sty', 'amssymb.sty', 'xcolor.sty', 'shown.sty', 'plain.bst']);
    assert.deepEqual(deps.localFiles, [
      { command: '\\bibliography{refs}', candidates: ['refs.bib'] },
      { command: '\\input{code}', candidates: ['code.tex', 'code'] },
      { command: '\\include{chapter.tex}', candidates: ['chapter.tex'] },
      { command: '\\includegraphics{figs/envelope}', candidates: ['figs/envelope.pdf', 'figs/envelope.png', 'figs/envelope.jpg', 'figs/envelope.jpeg', 'figs/envelope.eps'] },
    ]);
  });
});
