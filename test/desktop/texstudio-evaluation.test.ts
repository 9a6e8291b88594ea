import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { initialText } from '../../apps/texstudio/checks';
import type { Task } from '../../core/task';
import { evaluateTeXstudio } from '../../apps/texstudio/local/evaluators';
import { DEFAULT_TEXSTUDIO_OPTIONS } from '../../apps/texstudio/local/driver';
import { commandWords, RefusedCommandError, runVmCommand } from '../../io/vm-commands';
import { texstudioTask } from '../support/desktop';

const COMPILE = { pdflatex: DEFAULT_TEXSTUDIO_OPTIONS.pdflatex, bibtex: DEFAULT_TEXSTUDIO_OPTIONS.bibtex, timeoutMs: 60_000 };

/** Writes the task's touch steps into `home` as a local desktop does, each text passed through `edit`. */
function writeTouches(task: Task, home: string, edit: (path: string, text: string) => string = (_p, t) => t): void {
  for (const step of task.initialize) {
    if (step.func !== 'touch') continue;
    const file = path.join(home, step.path.slice('/home/user/'.length));
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, edit(step.path, step.text));
  }
}

describe('TeXstudio checks on real files with real pdflatex and bibtex', function () {
  this.timeout(120_000);
  let home: string;

  beforeEach(() => {
    home = mkdtempSync(path.join(tmpdir(), 'coda-texstudio-eval-'));
  });

  afterEach(() => {
    rmSync(home, { recursive: true, force: true });
  });

  it('B-01: the edited document passes file and compile (pdflatex, bibtex, pdflatex twice) and a PDF comes out', async () => {
    const task = texstudioTask('B-01');
    writeTouches(task, home, (p, t) => (p.endsWith('main.tex') ? t.replace('\\cite{}', '\\cite{de2015lean}') : t));
    const result = await evaluateTeXstudio(task, { reason: 'DONE' }, home, COMPILE);
    assert.equal(result.passed, true, JSON.stringify(result.checks));
    assert.match(result.checks[1]?.detail ?? '', /^pdflatex, bibtex, pdflatex, pdflatex: main\.pdf \(\d+ bytes\)$/);
    assert.ok(existsSync(path.join(home, 'atelier', 'main.bbl')), 'bibtex wrote the bibliography');
    assert.match(readFileSync(path.join(home, 'atelier', 'main.bbl'), 'utf8'), /\\bibitem{de2015lean}/);
  });

  it('B-01 unedited: file fails with a diff excerpt, compile still passes (an empty \\cite is a warning)', async () => {
    const task = texstudioTask('B-01');
    writeTouches(task, home);
    const result = await evaluateTeXstudio(task, { reason: 'DONE' }, home, COMPILE);
    assert.deepEqual(
      result.checks.map((c) => c.passed),
      [false, true],
    );
    assert.match(result.checks[0]?.detail ?? '', /^-….*\\cite\{de2015lean\} You can/m);
    assert.match(result.checks[0]?.detail ?? '', /^\+….*\\cite\{\} You can/m);
  });

  it('C-06: compile fails naming the first LaTeX error; the fixed formula compiles', async () => {
    const task = texstudioTask('C-06');
    writeTouches(task, home);
    const broken = await evaluateTeXstudio(task, { reason: 'DONE' }, home, COMPILE);
    assert.equal(broken.passed, false);
    assert.equal(broken.checks[0]?.detail, 'pdflatex exited with code 1: ! Extra \\or. l.18 ...[X, c+1, b], [X, c, a], [a]), X \\neq Z \\or');

    writeTouches(task, home, (_p, t) => t.replace('\\or', '\\vee'));
    const fixed = await evaluateTeXstudio(task, { reason: 'DONE' }, home, COMPILE);
    assert.equal(fixed.passed, true, JSON.stringify(fixed.checks));
    assert.match(fixed.checks[0]?.detail ?? '', /^pdflatex: main\.pdf/);
  });

  it('kills a pdflatex that runs past its timeout and says so', async () => {
    const task: Task = { ...texstudioTask('C-06'), initialize: [{ func: 'touch', path: '/home/user/atelier/main.tex', text: '\\def\\loop{\\loop}\\loop\n' }] };
    writeTouches(task, home);
    const result = await evaluateTeXstudio(task, { reason: 'DONE' }, home, { ...COMPILE, timeoutMs: 1500 });
    assert.deepEqual(result.checks, [{ index: 0, type: 'compile', passed: false, detail: 'pdflatex timed out after 1500 ms' }]);
  });

  it('names a bibtex failure, keeps TeX inside the folder, and refuses folders outside HOME', async () => {
    const task = texstudioTask('B-01');
    writeTouches(task, home);
    rmSync(path.join(home, 'atelier', 'refs.bib'));
    const noBib = await evaluateTeXstudio(task, { reason: 'DONE' }, home, COMPILE);
    assert.equal(noBib.checks[1]?.detail, "bibtex exited with code 2: I couldn't open database file refs.bib");

    const reader: Task = { ...texstudioTask('C-06'), initialize: [{ func: 'touch', path: '/home/user/atelier/main.tex', text: '\\documentclass{article}\\begin{document}\\input{/etc/hostname}\\end{document}\n' }] };
    writeTouches(reader, home);
    const outside = await evaluateTeXstudio(reader, { reason: 'DONE' }, home, COMPILE);
    assert.equal(outside.passed, false);
    assert.match(outside.checks[0]?.detail ?? '', /File `\/etc\/hostname\.tex' not found/);

    const elsewhere: Task = { ...reader, evaluate: [{ type: 'compile', path: '/tmp', file: 'main' }, { type: 'compile', path: '/home/user/atelier', file: '../main' }] };
    const refused = await evaluateTeXstudio(elsewhere, { reason: 'DONE' }, home, COMPILE);
    assert.deepEqual(
      refused.checks.map((c) => c.detail),
      ['cannot compile in /tmp: "/tmp" is outside the VM user\'s home (/home/user)', '"../main" is not a document name in /home/user/atelier'],
    );
  });

  it('D-01: stop ANS compares the answer; KAlgebra checks and unread files fail by name', async () => {
    const task = texstudioTask('D-01');
    writeTouches(task, home);
    assert.equal((await evaluateTeXstudio(task, { reason: 'ANS', answer: '13' }, home, COMPILE)).passed, true);
    assert.deepEqual((await evaluateTeXstudio(task, { reason: 'ANS', answer: '14' }, home, COMPILE)).checks[0]?.detail, 'expected ANS ["13"], found ANS ["14"]');
    const mixed: Task = {
      ...task,
      evaluate: [
        { type: 'var', key: 'p', value: '1' },
        { type: 'include', path: '/home/user/atelier/missing.tex', pattern: 'x' },
      ],
    };
    assert.deepEqual(
      (await evaluateTeXstudio(mixed, { reason: 'DONE' }, home, COMPILE)).checks.map((c) => c.detail),
      ['"var" checks KAlgebra\'s state, not a TeXstudio document', 'cannot read /home/user/atelier/missing.tex: no such file'],
    );
    assert.equal(initialText(task, '/home/user/atelier/main.tex')?.includes('BB(4) = 13'), true);
  });
});

describe('VM commands on a local desktop', () => {
  let home: string;

  beforeEach(() => {
    home = mkdtempSync(path.join(tmpdir(), 'coda-vm-commands-'));
    for (const file of ['.config/ChimeraX/ui-1', '.config/ChimeraX/ui-2', '.config/ChimeraX/keep', 'grassdata/a/PERMANENT/.gislock', 'grassdata/b/x/.gislock', 'notes.txt']) {
      mkdirSync(path.dirname(path.join(home, file)), { recursive: true });
      writeFileSync(path.join(home, file), 'x');
    }
  });

  afterEach(() => {
    rmSync(home, { recursive: true, force: true });
  });

  const exists = (file: string): boolean => existsSync(path.join(home, file));

  it('removes files in HOME as the tasks ask: argv lists, shell globs, missing files, folders only with -r', () => {
    runVmCommand({ command: ['rm', '/home/user/notes.txt', '/home/user/.local/share/ChimeraX/commands'] }, home);
    assert.equal(exists('notes.txt'), false);
    runVmCommand({ command: 'rm -f /home/user/.config/ChimeraX/ui-*', shell: true }, home);
    assert.deepEqual([exists('.config/ChimeraX/ui-1'), exists('.config/ChimeraX/ui-2'), exists('.config/ChimeraX/keep')], [false, false, true]);
    runVmCommand({ command: 'rm -rf /home/user/grassdata/*/*/.gislock', shell: true }, home);
    assert.deepEqual([exists('grassdata/a/PERMANENT/.gislock'), exists('grassdata/b/x/.gislock'), exists('grassdata/a/PERMANENT')], [false, false, true]);
    runVmCommand({ command: ['rm', '/home/user/grassdata'] }, home);
    assert.equal(exists('grassdata'), true, 'rm without -r leaves a folder, as in the VM');
    runVmCommand({ command: ['rm', '-r', '/home/user/grassdata'] }, home);
    assert.equal(exists('grassdata'), false);
    // Without a shell, a * is part of the name.
    runVmCommand({ command: ['rm', '/home/user/.config/ChimeraX/*'] }, home);
    assert.equal(exists('.config/ChimeraX/keep'), true);
  });

  it('refuses every other command, shell syntax, and paths that leave HOME, with the reason', () => {
    const refusals: Array<[string | string[], boolean, RegExp]> = [
      ['chimerax --nogui', true, /only rm of files in the desktop's HOME runs here, not "chimerax"/],
      ['rm -f /home/user/a; ls', true, /";" is shell syntax/],
      ['rm $HOME/a', true, /"\$" is shell syntax/],
      ['rm -rf /', true, /"\/" is outside the VM user's home/],
      [['rm', '-rf', '/home/user/'], false, /leaves the user's home/],
      [['rm', '/home/user/../etc/passwd'], false, /leaves the user's home/],
      [['rm', '--no-preserve-root', '/home/user/a'], false, /rm option "--no-preserve-root" is not one of/],
      [['rm', '-f'], false, /rm names no file/],
    ];
    for (const [command, shell, reason] of refusals) {
      assert.throws(
        () => runVmCommand({ command, shell }, home),
        (err: unknown) => err instanceof RefusedCommandError && reason.test(err.message) && err.message.startsWith('refused to run '),
        JSON.stringify(command),
      );
    }
    assert.equal(exists('notes.txt'), true);
  });

  it('does not follow a link out of HOME', () => {
    const outside = mkdtempSync(path.join(tmpdir(), 'coda-vm-outside-'));
    try {
      writeFileSync(path.join(outside, 'victim'), 'x');
      symlinkSync(outside, path.join(home, 'link'));
      assert.throws(() => runVmCommand({ command: 'rm -f /home/user/link/*', shell: true }, home), /outside the desktop's HOME/);
      assert.equal(existsSync(path.join(outside, 'victim')), true);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('splits command lines into words, refusing quotes', () => {
    assert.deepEqual(commandWords('texstudio  /home/user/atelier/refs.bib /home/user/atelier/main.tex'), ['texstudio', '/home/user/atelier/refs.bib', '/home/user/atelier/main.tex']);
    assert.deepEqual(commandWords(['chimerax', '--cmd', 'a b']), ['chimerax', '--cmd', 'a b']);
    assert.throws(() => commandWords('code "/home/user/my docs"'), /shell syntax/);
  });
});
