import assert from 'node:assert/strict';
import { decodeEscapes, pythonToJson, readQuoted } from '../../core/python-literal';
import { extractJson, stripOuterFence } from '../../core/reply-text';

describe('Python literals in model text', () => {
  it('reads quoted strings with Python escapes', () => {
    assert.deepEqual(readQuoted(`'it\\'s'`, 0), { value: "it's", end: 7 });
    assert.deepEqual(readQuoted(`x"a\\"b" rest`, 1), { value: 'a"b', end: 7 });
    assert.equal(readQuoted(`'a\\nb\\tc\\\\d\\re'`, 0)?.value, 'a\nb\tc\\d\re');
    assert.equal(readQuoted(`'\\x41\\u00e9\\U0001F600'`, 0)?.value, 'Aé😀');
    assert.equal(readQuoted(`'\\q\\u12'`, 0)?.value, '\\q\\u12', 'unknown or short escapes keep their backslash');
    assert.equal(readQuoted(`'\\a\\b\\f\\v'`, 0)?.value, '\x07\b\f\v');
    assert.equal(readQuoted(`'\\101\\0\\12\\7x\\1234\\08\\777'`, 0)?.value, 'A\0\n\x07x\x534\x008\u01ff', 'octal escapes take 1 to 3 digits');
    assert.equal(readQuoted(`'a\\/b'`, 0)?.value, 'a\\/b', 'Python keeps the backslash of \\/');
    assert.equal(readQuoted(`'\\N{GREEK SMALL LETTER ALPHA}\\N{degree sign}C\\N{BOM}'`, 0)?.value, 'α°C\ufeff');
    assert.equal(readQuoted(`'\\N{NOT A NAME} \\N{ \\N{x'`, 0)?.value, '\\N{NOT A NAME} \\N{ \\N{x', 'unknown or malformed names are kept as written');
    assert.equal(readQuoted(`'\\UFFFFFFFF'`, 0)?.value, '\ufffd', 'code points past Unicode become U+FFFD');
    assert.equal(readQuoted("'raw\nnewline'", 0)?.value, 'raw\nnewline');
    assert.equal(readQuoted(`'never closed`, 0), undefined);
    assert.equal(readQuoted(`'ends in a backslash\\`, 0), undefined);
  });

  it('decodes a body whose quotes are gone', () => {
    assert.equal(decodeEscapes("it's \\'quoted\\' \\n"), "it's 'quoted' \n");
    assert.equal(decodeEscapes('trailing\\'), 'trailing\\');
  });

  it('rewrites Python literals as JSON', () => {
    assert.equal(pythonToJson("{'Correctness': True, 'Redundant': [1, 2,], 'First_Error_Step': None,}"), '{"Correctness": true, "Redundant": [1, 2], "First_Error_Step": null}');
    assert.equal(pythonToJson('{"a": "True"}'), '{"a": "True"}');
    assert.equal(pythonToJson("['it\\'s']"), '["it\'s"]');
    assert.equal(pythonToJson("{'a': 'open"), '{"a": \'open');
    assert.equal(pythonToJson('{"url": "a\\/b"}'), '{"url": "a/b"}', 'in JSON, \\/ is a slash');
  });
});

describe('reply text', () => {
  it('strips one fence around a whole reply', () => {
    assert.equal(stripOuterFence('```\nThought: x\nAction: y\n```'), 'Thought: x\nAction: y');
    assert.equal(stripOuterFence('  ```text\nabc```  '), 'abc');
    assert.equal(stripOuterFence('Action: ```ANS 5```'), 'Action: ```ANS 5```');
  });

  it('finds JSON in fences, bare, or as Python', () => {
    assert.deepEqual(extractJson('Reasoning...\n```json\n{"a": 1}\n```'), { ok: true, value: { a: 1 } });
    assert.deepEqual(extractJson("So: {'a': True, 'b': [None]} done"), { ok: true, value: { a: true, b: [null] } });
    assert.deepEqual(extractJson('first [broken, then {"ok": "yes"}'), { ok: true, value: { ok: 'yes' } });
    assert.deepEqual(extractJson('{"s": "a } in a string", "n": 2}'), { ok: true, value: { s: 'a } in a string', n: 2 } });
    assert.deepEqual(extractJson('```\nnot json\n``` [1, 2]'), { ok: true, value: [1, 2] });
  });

  it('fails with a reason when there is none', () => {
    assert.deepEqual(extractJson('no json here'), { ok: false, reason: 'no JSON object or list found in the reply' });
    assert.equal(extractJson('{unclosed').ok, false);
    assert.equal(extractJson('{"a": nope}').ok, false);
  });
});
