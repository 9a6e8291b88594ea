import assert from 'node:assert/strict';
import { answerArgs, fencedCodes, formatPlannerOutput, parsePlannerOutput, plannerActionText, primitiveAction, type PlannerAction } from '../../core/planner-parser';

describe('planner output (CODA, ANS variant)', () => {
  it('reads an instruction for the executor', () => {
    assert.deepEqual(parsePlannerOutput('Thought: The input field at the bottom is empty; click it.\nAction: click the calculator input field'), {
      ok: true,
      thought: 'The input field at the bottom is empty; click it.',
      action: { kind: 'instruction', text: 'click the calculator input field' },
    });
  });

  it('reads the primitives ANS, DONE and FAIL as ScienceBoard runs them: split on single spaces, fences as its extract_planner takes them', () => {
    // sci/base/prompt.py: CodeLike.extract_planner (the fence pattern, each code stripped) and CodeLike.__call__ (split(" ")).
    const cases: Array<[string, PlannerAction]> = [
      ['ANS 46368', { kind: 'answer', text: '46368' }],
      ['  ANS 46368  ', { kind: 'answer', text: '46368' }],
      ['ANS  5', { kind: 'answer', text: ' 5' }],
      ['ANS "5"', { kind: 'answer', text: '"5"' }],
      ['ANS `5`', { kind: 'answer', text: '`5`' }],
      ['ANS Vigili del Fuoco', { kind: 'answer', text: 'Vigili del Fuoco' }],
      ['ANS', { kind: 'answer', text: '' }],
      ['```\nANS 5\n```', { kind: 'answer', text: '5' }],
      ['```text\nANS 5\n```', { kind: 'answer', text: '5' }],
      ['``` ANS 5```', { kind: 'answer', text: '5' }],
      ['DONE', { kind: 'done' }],
      ['```DONE```', { kind: 'done' }],
      ['FAIL', { kind: 'fail' }],
      ['```FAIL```', { kind: 'fail' }],
    ];
    for (const [action, expected] of cases) {
      assert.deepEqual(parsePlannerOutput(`Thought: Finished.\nAction: ${action}`), { ok: true, thought: 'Finished.', action: expected }, action);
    }
    assert.deepEqual(answerArgs('Vigili del Fuoco'), ['Vigili', 'del', 'Fuoco']);
    assert.deepEqual(answerArgs(' 5'), ['', '5']);
    assert.deepEqual(answerArgs(''), []);
  });

  it('extracts fenced codes as ScienceBoard\'s pattern does (sci/base/prompt.py:165, results from Python 3 re)', () => {
    const cases: Array<[string, string[]]> = [
      ['```ANS 5```', ['5']],
      ['````x```', ['`x']],
      ['```ab```cd```ef```', ['ab', 'ef']],
      ['``` \n ANS 5 \n```', ['ANS 5']],
      ['```python\nANS 5```', ['ANS 5']],
      ['```\u00e9 ANS 5```', ['ANS 5']],
      ['```ANS\u00a0 5```', ['5']],
      ['x```DONE``` y ```\nFAIL\n```', ['DONE', 'FAIL']],
      ['```\n\n```', ['']],
      ['```a b```', ['b']],
      ['```' + ' '.repeat(1000), []],
    ];
    for (const [text, codes] of cases) assert.deepEqual(fencedCodes(text), codes, JSON.stringify(text));
  });

  it('reads the inline fence ```ANS 5``` as ScienceBoard does: ANS is taken for a language tag, and what is left is no primitive', () => {
    for (const action of ['```ANS 46368```', '```ANS Vigili del Fuoco```']) {
      assert.deepEqual(parsePlannerOutput(`Thought: t\nAction: ${action}`), { ok: true, thought: 't', action: { kind: 'instruction', text: action } }, action);
    }
    assert.deepEqual(parsePlannerOutput('Thought: p is 1+-i, so ```ANS 1+-i```'), { ok: false, reason: 'no "Action:" line in the planner output' });
  });

  it('treats lookalikes outside fences and WAIT as instructions for the executor', () => {
    for (const text of ['ANSWER the dialog', 'Done editing, now press Enter', 'WAIT', 'WAIT 5', 'done', 'DONE.', 'DONE now', '`ANS 5`', '`DONE`', 'ANS\t5']) {
      assert.deepEqual(parsePlannerOutput(`Thought: t\nAction: ${text}`), { ok: true, thought: 't', action: { kind: 'instruction', text } }, text);
    }
  });

  it('wastes the step on a fenced primitive that ScienceBoard cannot run, and runs the next one that it can', () => {
    assert.deepEqual(parsePlannerOutput('Thought: t\nAction: ```\nDONE now\n```'), { ok: false, reason: '"DONE now" is not a primitive ScienceBoard runs (ANS <answer>, DONE or FAIL, split on single spaces)' });
    assert.deepEqual(parsePlannerOutput('Thought: t\nAction: ```\nDONE.\n``` then ```\nANS 7\n```'), { ok: true, thought: 't', action: { kind: 'answer', text: '7' } });
  });

  it('keeps a multi-line answer and instruction', () => {
    assert.deepEqual(parsePlannerOutput('Thought: t\nAction: ANS line 1\nline 2'), { ok: true, thought: 't', action: { kind: 'answer', text: 'line 1\nline 2' } });
  });

  it('accepts a fenced reply, a missing Thought label, and a fenced primitive without an Action line', () => {
    assert.deepEqual(parsePlannerOutput('```\nThought: x\nAction: DONE\n```'), { ok: true, thought: 'x', action: { kind: 'done' } });
    assert.deepEqual(parsePlannerOutput('The plot is drawn.\nAction: DONE'), { ok: true, thought: 'The plot is drawn.', action: { kind: 'done' } });
    assert.deepEqual(parsePlannerOutput('Thought: p is 1+-i, so\n```\nANS 1+-i\n```'), {
      ok: true,
      thought: 'p is 1+-i, so\n```\nANS 1+-i\n```',
      action: { kind: 'answer', text: '1+-i' },
    });
    assert.deepEqual(parsePlannerOutput('```\nANS 5\n```'), { ok: true, thought: 'ANS 5', action: { kind: 'answer', text: '5' } });
    assert.deepEqual(parsePlannerOutput('Action: FAIL'), { ok: true, thought: '', action: { kind: 'fail' } });
  });

  it('uses the last Action line when the thought mentions one', () => {
    assert.deepEqual(parsePlannerOutput('Thought: The previous Action: was wrong.\nAction: DONE'), {
      ok: true,
      thought: 'The previous Action: was wrong.',
      action: { kind: 'done' },
    });
  });

  it('fails with a reason for malformed output', () => {
    const cases: Array<[string, string]> = [
      ['', 'no "Action:" line in the planner output'],
      ['Thought: just thinking', 'no "Action:" line in the planner output'],
      ['Thought: t ```click OK```', 'no "Action:" line in the planner output'],
      ['Thought: t\nAction:   ', 'the "Action:" line is empty'],
      [`Thought: t\nAction: ANS ${'9'.repeat(10_001)}`, 'the answer is longer than 10000 characters'],
      ['Action: click OK', 'an instruction needs a thought: the executor only sees the thought'],
      ['Thought:\nAction: click OK', 'an instruction needs a thought: the executor only sees the thought'],
    ];
    for (const [text, reason] of cases) assert.deepEqual(parsePlannerOutput(text), { ok: false, reason }, text);
  });

  it('writes replies that read back identically', () => {
    const actions: PlannerAction[] = [
      { kind: 'instruction', text: 'Type p := conjugate(1+i) in the input and press Enter' },
      { kind: 'answer', text: '46368' },
      { kind: 'answer', text: 'TYC 2082-2143-1' },
      { kind: 'answer', text: '' },
      { kind: 'done' },
      { kind: 'fail' },
    ];
    for (const action of actions) {
      const text = formatPlannerOutput('Next I act.', action);
      assert.deepEqual(parsePlannerOutput(text), { ok: true, thought: 'Next I act.', action });
    }
    assert.equal(formatPlannerOutput('t', { kind: 'answer', text: '5' }), 'Thought: t\nAction: ANS 5');
    assert.equal(plannerActionText({ kind: 'done' }), 'DONE');
  });

  it('turns primitives into the GUI actions that end the episode', () => {
    assert.deepEqual(primitiveAction({ kind: 'answer', text: '5' }), { type: 'answer', text: '5' });
    assert.deepEqual(primitiveAction({ kind: 'done' }), { type: 'done' });
    assert.deepEqual(primitiveAction({ kind: 'fail' }), { type: 'fail' });
    assert.equal(primitiveAction({ kind: 'instruction', text: 'x' }), undefined);
  });
});
