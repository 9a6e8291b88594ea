import { z } from 'zod';
import type { CheckResult } from '../../core/evaluation';
import type { VmApp } from '../vm-app';

/**
 * Lean 4 on a ScienceBoard VM, as sci/Lean/task.py's VMTask runs it (the agent edits
 * /home/user/sci/Sci/Basic.lean in VS Code; Mathlib is loaded in the VM's project): `import`
 * (Mathlib left out, the project has it), `open` and `def` only collect header lines; `query`
 * appends them and the theorem, its trailing "sorry" cut off and put on a line of its own, to
 * Basic.lean through the VM server's POST /append (success: HTTP 200). After the stop its checks
 * (a `placeholder`) are one POST /lean/check {header}: the server finds the theorem's line in the
 * file and runs `lake build`; `pass` is the answer.
 */

export const BASIC_LEAN = '/home/user/sci/Sci/Basic.lean';

const checkAnswer = z.object({ pass: z.boolean() });

/** The theorem's header as the check looks for it: the query's expression without its last 6 characters (" sorry"). */
export function leanHeader(initialize: readonly unknown[]): string | undefined {
  const query = initialize.find((step): step is { func: 'query'; expr: string } => (step as { func?: unknown }).func === 'query' && typeof (step as { expr?: unknown }).expr === 'string');
  return query?.expr.slice(0, -6);
}

export const leanVm: VmApp = {
  software: 'Lean',
  session(task, { vmHttp }) {
    const header = leanHeader(task.initialize);
    const buffer: string[] = [];
    /** A blank line before what follows, unless the buffer already ends with one (task.py's __probe). */
    const probe = () => {
      if (buffer.length === 0 || buffer[buffer.length - 1] !== '') buffer.push('');
    };
    return {
      async initialize(func, step) {
        const libs = Array.isArray(step.libs) ? step.libs.map(String) : [];
        switch (func) {
          case 'import': {
            const kept = libs.filter((lib) => lib !== 'Mathlib');
            if (kept.length > 0) {
              probe();
              buffer.push(`import ${kept.join(' ')}`);
            }
            return true;
          }
          case 'open':
            probe();
            buffer.push(`open ${libs.join(' ')}`);
            probe();
            return true;
          case 'def':
            buffer.push(String(step.expr));
            return true;
          case 'query': {
            if (header === undefined) throw new Error('the task has no query to append');
            probe();
            buffer.push(`${header}\n  sorry\n`);
            // Appending twice would leave the theorem twice: not retried once it reached the server.
            await vmHttp.send({ method: 'POST', path: '/append', json: { path: BASIC_LEAN, content: buffer.join('\n') }, idempotent: false });
            return true;
          }
          default:
            return false;
        }
      },
      async evaluate(checks) {
        if (checks.length === 0) return [];
        if (header === undefined) return checks.map(({ index, check }) => ({ index, type: check.type as CheckResult['type'], passed: false, detail: 'the task has no query: nothing to check' }));
        // `lake build` of Mathlib's dependants takes minutes: the context's appTimeoutMs (ScienceBoard's 240 s) applies.
        const { pass } = await vmHttp.json({ method: 'POST', path: '/lean/check', json: { header }, idempotent: true }, checkAnswer);
        const detail = `lake build of ${BASIC_LEAN} with ${JSON.stringify(header.slice(0, 80))} ${pass ? 'succeeded without sorry' : 'failed, left a sorry, or the theorem line is gone'} (the VM's /lean/check)`;
        return checks.map(({ index, check }) => ({ index, type: check.type as CheckResult['type'], passed: pass, detail }));
      },
    };
  },
};
