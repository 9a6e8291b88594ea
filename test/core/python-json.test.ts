import assert from 'node:assert/strict';
import { parsePythonJson, stringifyPythonJson } from '../../core/python-json';

describe('JSON as Python writes it (NaN, Infinity)', () => {
  it('reads json.dump\'s NaN, Infinity and -Infinity as those numbers, and the rest as JSON.parse does', () => {
    // What Python 3 json.dumps({"a": float("nan"), "b": [float("inf"), -float("inf"), 1.5], "c": "NaN Infinity", "d": {"e": None}}) writes.
    const text = '{"a": NaN, "b": [Infinity, -Infinity, 1.5], "c": "NaN Infinity", "d": {"e": null}}';
    const value = parsePythonJson(text) as { a: number; b: number[]; c: string; d: unknown };
    assert.ok(Number.isNaN(value.a));
    assert.deepEqual(value.b, [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1.5]);
    assert.deepEqual([value.c, value.d], ['NaN Infinity', { e: null }]);
    assert.ok(Number.isNaN(parsePythonJson('NaN') as number));
    assert.deepEqual(parsePythonJson('{"q\\"NaN": [ -Infinity ,0e99990, 999]}'), { 'q"NaN': [Number.NEGATIVE_INFINITY, 0, 999] });
    assert.deepEqual(parsePythonJson('[1, 2]'), [1, 2]);
  });

  it('refuses what json.loads refuses', () => {
    for (const text of ['[NaNa]', '[1NaN]', '{"a": nan}', '[Infinity1]', '[-NaN]', '"unterminated', '[1,]']) assert.throws(() => parsePythonJson(text), SyntaxError, text);
  });

  it('writes NaN and the infinities as Python does, so python3 reads them back', () => {
    assert.equal(stringifyPythonJson({ a: Number.NaN, b: [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1], c: undefined, d: 'x' }), '{"a":NaN,"b":[Infinity,-Infinity,1],"d":"x"}');
    assert.equal(stringifyPythonJson([undefined, null]), '[null,null]');
    const value = { nested: [{ x: Number.NaN }], text: 'Infinity' };
    assert.deepEqual(JSON.stringify(parsePythonJson(stringifyPythonJson(value))), JSON.stringify(value));
  });
});
