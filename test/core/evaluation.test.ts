import assert from 'node:assert/strict';
import { combineChecks, evaluateStop, valueMatches } from '../../core/evaluation';
import { evaluationResultSchema } from '../../apps/manifests';

describe('evaluation', () => {
  it('checks how the agent stopped', () => {
    assert.deepEqual(evaluateStop({ type: 'stop', value: 'DONE' }, 0, { reason: 'DONE' }), {
      index: 0,
      type: 'stop',
      passed: true,
      detail: 'expected DONE, found DONE',
    });
    assert.equal(evaluateStop({ type: 'stop', value: 'DONE' }, 0, { reason: 'TIMEOUT' }).passed, false);
    assert.equal(evaluateStop({ type: 'stop', value: 'FAIL' }, 1, { reason: 'FAIL' }).passed, true);
  });

  it('compares ANS arguments as ScienceBoard does: the answer split on single spaces, list for list', () => {
    const check = { type: 'stop' as const, value: 'ANS' as const, args: ['46368'] };
    assert.equal(evaluateStop(check, 0, { reason: 'ANS', answer: '46368' }).passed, true);
    for (const answer of [' 46368', '46368 ', '"46368"', '`46368`', '46369', '']) assert.equal(evaluateStop(check, 0, { reason: 'ANS', answer }).passed, false, answer);
    assert.equal(evaluateStop(check, 0, { reason: 'DONE' }).passed, false);
    assert.equal(evaluateStop(check, 0, { reason: 'ANS', answer: '"1"' }).detail, 'expected ANS ["46368"], found ANS ["\\"1\\""]');
    assert.equal(evaluateStop({ type: 'stop', value: 'ANS' }, 0, { reason: 'ANS', answer: 'anything' }).passed, true);
    // GRASS GIS C-03 and Celestia C-06 have answers of several words.
    const words = { type: 'stop' as const, value: 'ANS' as const, args: ['Vigili', 'del', 'Fuoco'] };
    assert.equal(evaluateStop(words, 0, { reason: 'ANS', answer: 'Vigili del Fuoco' }).passed, true);
    assert.equal(evaluateStop(words, 0, { reason: 'ANS', answer: 'Vigili  del Fuoco' }).detail, 'expected ANS ["Vigili","del","Fuoco"], found ANS ["Vigili","","del","Fuoco"]');
    assert.equal(evaluateStop(words, 0, { reason: 'ANS', answer: 'Vigili del' }).passed, false);
    // A bare ANS gives no arguments: it matches an empty args list only.
    assert.equal(evaluateStop({ type: 'stop', value: 'ANS', args: [] }, 0, { reason: 'ANS', answer: '' }).passed, true);
    assert.equal(evaluateStop({ type: 'stop', value: 'ANS', args: [''] }, 0, { reason: 'ANS', answer: '' }).passed, false);
  });

  it('passes a task only when every check passes', () => {
    const pass = { index: 0, type: 'var', passed: true, detail: '' } as const;
    const failing = { index: 1, type: 'val', passed: false, detail: '' } as const;
    assert.equal(combineChecks([pass]).passed, true);
    assert.equal(combineChecks([pass, failing]).passed, false);
    assert.equal(combineChecks([]).passed, false);
  });

  it('has a schema for results read back from storage', () => {
    const result = combineChecks([{ index: 0, type: 'eqn', passed: true, detail: 'on curve' }]);
    assert.deepEqual(evaluationResultSchema.parse(JSON.parse(JSON.stringify(result))), result);
    assert.equal(evaluationResultSchema.safeParse({ passed: true, checks: [{ index: 0, type: 'pixel', passed: true, detail: '' }] }).success, false);
  });

  it('applies the val rule: a finite number within 1e-6', () => {
    assert.equal(valueMatches('1.5849625007', Math.log2(3)), true);
    assert.equal(valueMatches('1.58496', Math.log2(3)), false);
    assert.equal(valueMatches(String(2 + 9e-7), 2), true);
    for (const printed of [undefined, '', '  ', 'x', 'Infinity', 'NaN']) assert.equal(valueMatches(printed, 0), false, String(printed));
  });
});
