import { readFileSync, statSync } from 'node:fs';
import { combineChecks, evaluateStop, type CheckResult, type EvaluationResult, type StopInfo } from '../../../core/evaluation';
import { checkFile, checkInclude, usesBibtex } from '../checks';
import type { Evaluator, Task } from '../../../core/task';
import { homePath } from '../../../io/vm-commands';
import { compileDocument, type CompileOptions } from './compile';

/**
 * ScienceBoard's TeXstudio checks on a local desktop: the task's VM paths are read in the
 * desktop's HOME (file, include: apps/texstudio/checks.ts) and the document is compiled here
 * (compile.ts); stop is how the agent ended (core/evaluation.ts). Like ScienceBoard's, the checks
 * read the files on disk: what the agent did not save does not count.
 */
export async function evaluateTeXstudio(task: Task, stop: StopInfo, home: string, compile: Omit<CompileOptions, 'home'>): Promise<EvaluationResult> {
  const checks: CheckResult[] = [];
  for (const [index, check] of task.evaluate.entries()) checks.push(await checkOne(task, check, index, stop, home, compile));
  return combineChecks(checks);
}

async function checkOne(task: Task, check: Evaluator, index: number, stop: StopInfo, home: string, compile: Omit<CompileOptions, 'home'>): Promise<CheckResult> {
  const failed = (detail: string): CheckResult => ({ index, type: check.type, passed: false, detail });
  switch (check.type) {
    case 'stop':
      return evaluateStop(check, index, stop);
    case 'file':
    case 'include': {
      if (!('path' in check)) return failed(`this "${check.type}" check is not a TeXstudio one`);
      const read = readText(check.path, home);
      const found = 'text' in read ? read.text : undefined;
      const problem = 'problem' in read ? read.problem : undefined;
      return check.type === 'file' ? checkFile(task, check, index, found, problem) : checkInclude(check, index, found, problem);
    }
    case 'compile': {
      let folder: string;
      try {
        folder = homePath(check.path, home);
      } catch (err) {
        return failed(`cannot compile in ${check.path}: ${(err as Error).message}`);
      }
      if (!/^[\w.-]+$/.test(check.file) || check.file.startsWith('.')) return failed(`${JSON.stringify(check.file)} is not a document name in ${check.path}`);
      if (!statSync(folder, { throwIfNoEntry: false })?.isDirectory()) return failed(`${check.path} is not a folder`);
      const outcome = await compileDocument(folder, check.file, usesBibtex(task), { ...compile, home });
      return { index, type: 'compile', passed: outcome.passed, detail: outcome.detail };
    }
    case 'var':
    case 'val':
    case 'eqn':
      return failed(`"${check.type}" checks KAlgebra's state, not a TeXstudio document`);
    default:
      return failed(`"${check.type}" is not a TeXstudio check`);
  }
}

function readText(vmPath: string, home: string): { text: string } | { problem: string } {
  try {
    return { text: readFileSync(homePath(vmPath, home), 'utf8') };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { problem: code === 'ENOENT' ? 'no such file' : (err as Error).message };
  }
}
