import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { checkFile, checkInclude, expectedText, firstLatexError, initialText, usesBibtex } from '../../../apps/texstudio/checks';
import { isTeXFileCheck, type TeXFileCheck } from '../../../apps/texstudio/schema';
import { parseTask, type Evaluator, type Task } from '../../../core/task';
import { unifiedDiff } from '../../../core/unified-diff';
import { APPS } from '../../../apps/index';

const DIR = path.resolve(__dirname, '../../../../data/scienceboard/TeXstudio');
const task = (id: string): Task => parseTask(APPS, JSON.parse(readFileSync(path.join(DIR, `${id}.json`), 'utf8')), id);
const fileCheck = (t: Task): TeXFileCheck => {
  const check = t.evaluate.find(isTeXFileCheck);
  assert.ok(check !== undefined);
  return check;
};

describe('TeXstudio checks (pure)', () => {
  const b01 = task('B-01');
  const main = initialText(b01, '/home/user/atelier/main.tex') ?? assert.fail('B-01 writes main.tex');

  it('finds the initial text of a path and whether bibtex runs', () => {
    assert.match(main, /^\\documentclass/);
    assert.equal(initialText(b01, '/home/user/atelier/other.tex'), undefined);
    assert.equal(usesBibtex(b01), true);
    assert.equal(usesBibtex(task('C-06')), false);
  });

  it('file: passes on the initial text with every source replaced, fails with a diff excerpt naming the lines', () => {
    const check = fileCheck(b01);
    const wanted = main.replace('\\cite{}', '\\cite{de2015lean}');
    assert.deepEqual(checkFile(b01, check, 0, wanted), {
      index: 0,
      type: 'file',
      passed: true,
      detail: '/home/user/atelier/main.tex is its initial text with "\\\\cite{}" replaced by "\\\\cite{de2015lean}"',
    });
    const wrong = checkFile(b01, check, 0, main.replace('\\cite{}', '\\cite{lean}'));
    assert.equal(wrong.passed, false);
    const lines = wrong.detail.split('\n');
    assert.equal(lines[0], '/home/user/atelier/main.tex is not its initial text with "\\\\cite{}" replaced by "\\\\cite{de2015lean}":');
    assert.equal(lines[1], '@@ -9 +9 @@');
    // The paragraph is one long line: the excerpt is cut around the difference.
    assert.match(lines[3] ?? '', /^-….*\\cite\{de2015lean\} You can.*…$/);
    assert.match(lines[4] ?? '', /^\+….*\\cite\{lean\} You can.*…$/);
    assert.ok(lines.every((l) => l.length <= 140), wrong.detail);
  });

  it('file: unchanged without source and target; every occurrence replaced, as str.replace does; unread and unknown files fail', () => {
    const unchanged = { type: 'file' as const, path: '/home/user/atelier/refs.bib' };
    const bib = initialText(b01, unchanged.path) ?? '';
    assert.equal(checkFile(b01, unchanged, 1, bib).passed, true);
    assert.equal(checkFile(b01, unchanged, 1, `${bib}\n`).passed, false);
    const twice = { ...b01, initialize: [{ func: 'touch' as const, path: '/home/user/a.tex', text: 'x y x' }] };
    const expected = expectedText(twice, { type: 'file', path: '/home/user/a.tex', source: 'x', target: 'z' });
    assert.deepEqual(expected, { text: 'z y z' });
    assert.deepEqual(checkFile(b01, fileCheck(b01), 0, undefined, 'no such file').detail, 'cannot read /home/user/atelier/main.tex: no such file');
    assert.deepEqual(checkFile(b01, { type: 'file', path: '/home/user/x.tex' }, 0, 'x').detail, 'the task writes no initial text for /home/user/x.tex');
  });

  it('include: searches the pattern as ScienceBoard does and says where it is found', () => {
    const b04 = task('B-04');
    const patterns = b04.evaluate.filter((c): c is Extract<Evaluator, { type: 'include' }> => c.type === 'include');
    const bib = '@article{avagyan2018new,\n  title={A New Method in the Problem of Three Cubes},\n  author={Avagyan, Armen and Dallakyan, Gurgen},\n  journal={arXiv preprint arXiv:1802.06776},\n  year={2018}\n}\n';
    assert.deepEqual(
      patterns.map((p, i) => checkInclude(p, i, bib).passed),
      [true, true, true, true, true],
    );
    assert.equal(checkInclude(patterns[1]!, 1, bib).detail, '"title=\\\\{A New Method in the Problem of Three Cubes\\\\}" is found in /home/user/atelier/refs.bib at line 2: "title={A New Method in the Problem of Three Cubes}"');
    const missing = checkInclude(patterns[4]!, 4, bib.replace('2018}', '2019}'));
    assert.deepEqual(missing, { index: 4, type: 'include', passed: false, detail: '"year=\\\\{2018\\\\}" is not found in /home/user/atelier/refs.bib (7 lines)' });
    assert.match(checkInclude({ type: 'include', path: '/home/user/a', pattern: '(' }, 0, 'x').detail, /is not a valid regular expression/);
  });

  it('reads the first LaTeX error and the line it stopped at', () => {
    const log = 'This is pdfTeX\n(./main.tex\n! Undefined control sequence.\nl.18 ...X \\neq Z \\or\n                  c\n! Emergency stop.\n';
    assert.equal(firstLatexError(log), '! Undefined control sequence. l.18 ...X \\neq Z \\or');
    assert.equal(firstLatexError('! Emergency stop.\n<*> main.tex\n'), '! Emergency stop.');
    assert.equal(firstLatexError('Output written on main.pdf (1 page).'), undefined);
  });

  it('writes short unified diffs: context, hunks, and a cut when long', () => {
    assert.equal(unifiedDiff('a\nb\nc', 'a\nb\nc'), '');
    assert.equal(unifiedDiff('a\nb\nc\nd', 'a\nB\nc\nd'), '@@ -1 +1 @@\n a\n-b\n+B\n c');
    assert.equal(unifiedDiff('a\nb', 'a\nb\nc'), '@@ -2 +2 @@\n b\n+c');
    const many = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n');
    const cut = unifiedDiff(many, many.replace(/line (\d*[05])$/gm, 'LINE $1'), { maxLines: 5 });
    assert.equal(cut.split('\n').length, 6);
    assert.match(cut, /… \d+ more diff lines$/);
  });
});
