import type { CheckResult } from '../../core/evaluation';
import type { Evaluator, Task } from '../../core/task';
import type { TeXFileCheck } from './schema';
import { unifiedDiff } from '../../core/unified-diff';

/**
 * ScienceBoard's TeXstudio checks, as pure functions of what was read (checked against
 * OS-Copilot/ScienceBoard sci/TeXstudio/task.py and vm_config/server.py's /tex/check):
 * - file: the file equals the text of the task's first `touch` of that path with every `source`
 *   replaced by `target` (Python's str.replace); without source/target it must be unchanged. A
 *   path the task never wrote fails, as ScienceBoard's lookup does.
 * - include: `re.search(pattern, text)`; the pattern is read as a JavaScript regular expression,
 *   which agrees with Python's for the tasks' patterns (escaped braces, literal text).
 * - compile: pdflatex `file`.tex in the folder `path`, and when the task wrote any `.bib` file,
 *   bibtex then pdflatex twice; every run must exit with 0. The desktops run the programs; this
 *   module says whether bibtex is part of it and reads LaTeX's first error out of its output.
 */

type FileCheck = TeXFileCheck;
type IncludeCheck = Extract<Evaluator, { type: 'include' }>;

/** The text the task's first `touch` of `path` wrote, or undefined. */
export function initialText(task: Task, path: string): string | undefined {
  for (const step of task.initialize) if (step.func === 'touch' && step.path === path) return step.text;
  return undefined;
}

/** ScienceBoard runs bibtex when the task wrote a bibliography. */
export const usesBibtex = (task: Task): boolean => task.initialize.some((s) => s.func === 'touch' && s.path.endsWith('.bib'));

/** The text the file must hold for the check to pass, or why there is none. */
export function expectedText(task: Task, check: FileCheck): { text: string } | { problem: string } {
  const initial = initialText(task, check.path);
  if (initial === undefined) return { problem: `the task writes no initial text for ${check.path}` };
  if (check.source === undefined || check.target === undefined) return { text: initial };
  return { text: initial.split(check.source).join(check.target) };
}

/** `file`: `found` is the file's text now, undefined when it could not be read (with `readError`). */
export function checkFile(task: Task, check: FileCheck, index: number, found: string | undefined, readError?: string): CheckResult {
  const result = (passed: boolean, detail: string): CheckResult => ({ index, type: 'file', passed, detail });
  const expected = expectedText(task, check);
  if ('problem' in expected) return result(false, expected.problem);
  if (found === undefined) return result(false, `cannot read ${check.path}: ${readError ?? 'no such file'}`);
  const wanted =
    check.source === undefined
      ? 'its initial text, unchanged'
      : `its initial text with ${JSON.stringify(check.source)} replaced by ${JSON.stringify(check.target)}`;
  if (found === expected.text) return result(true, `${check.path} is ${wanted}`);
  return result(false, `${check.path} is not ${wanted}:\n${unifiedDiff(expected.text, found)}`);
}

/** `include`: the pattern is found in the file's text. */
export function checkInclude(check: IncludeCheck, index: number, found: string | undefined, readError?: string): CheckResult {
  const result = (passed: boolean, detail: string): CheckResult => ({ index, type: 'include', passed, detail });
  if (found === undefined) return result(false, `cannot read ${check.path}: ${readError ?? 'no such file'}`);
  let pattern: RegExp;
  try {
    pattern = new RegExp(check.pattern);
  } catch (err) {
    return result(false, `the pattern ${JSON.stringify(check.pattern)} is not a valid regular expression: ${(err as Error).message}`);
  }
  const match = pattern.exec(found);
  if (match === null) return result(false, `${JSON.stringify(check.pattern)} is not found in ${check.path} (${found.split('\n').length} lines)`);
  const line = found.slice(0, match.index).split('\n').length;
  return result(true, `${JSON.stringify(check.pattern)} is found in ${check.path} at line ${line}: ${JSON.stringify(match[0])}`);
}

/**
 * LaTeX's first error in a run's output: the `! ...` line and the `l.<n> ...` line that shows
 * where it stopped, e.g. `! Undefined control sequence. l.19 ...X \neq Z \or`.
 */
export function firstLatexError(output: string): string | undefined {
  const lines = output.split(/\r?\n/);
  const at = lines.findIndex((l) => l.startsWith('! '));
  if (at === -1) return undefined;
  const where = lines.slice(at + 1, at + 12).find((l) => /^l\.\d+/.test(l));
  return where === undefined ? lines[at]!.trim() : `${lines[at]!.trim()} ${where.trim()}`;
}
