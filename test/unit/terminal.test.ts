import assert from 'node:assert/strict';
import { formatHistory, summarizeHistory } from '../../client/history';
import { ProgressLine } from '../../cli/progress-line';
import { textTable } from '../../cli/table';
import { forTerminal } from '../../cli/terminal';

/**
 * What the CLI prints of names it reads from Temporal or S3 (issue 44 item 5): every format
 * character (Unicode category Cf: bidi overrides, embeddings and isolates, zero-width ones, tags)
 * as a `\uXXXX` escape, as control characters already were (test/cli/coda.test.ts prints them
 * through the real `coda tasks`). The texts are built by the CLI's own formatters, then passed
 * through forTerminal as `print` (cli/context.ts) passes everything it writes.
 */
describe('text for a terminal: format characters escaped', () => {
  /** One of each kind of format character, by code point (the test does not use the \p{Cf} class it checks). */
  const FORMAT = [
    ['U+202E right-to-left override', '\u202e', '\\u202e'],
    ['U+202A left-to-right embedding', '\u202a', '\\u202a'],
    ['U+2066 left-to-right isolate', '\u2066', '\\u2066'],
    ['U+2069 pop directional isolate', '\u2069', '\\u2069'],
    ['U+200F right-to-left mark', '\u200f', '\\u200f'],
    ['U+061C Arabic letter mark', '\u061c', '\\u061c'],
    ['U+200B zero-width space', '\u200b', '\\u200b'],
    ['U+200D zero-width joiner', '\u200d', '\\u200d'],
    ['U+2060 word joiner', '\u2060', '\\u2060'],
    ['U+FEFF zero-width no-break space', '\ufeff', '\\ufeff'],
    ['U+00AD soft hyphen', '\u00ad', '\\u00ad'],
    ['U+E0041 tag latin capital A (beyond U+FFFF)', '\u{e0041}', '\\udb40\\udc41'],
  ] as const;

  it('escapes every kind of format character, and decodes back to the same text in JSON', () => {
    for (const [name, character, escaped] of FORMAT) {
      const id = `batch-${character}gpj.exe-KAlgebra`;
      assert.equal(forTerminal(id), `batch-${escaped}gpj.exe-KAlgebra`, name);
      assert.equal(JSON.parse(forTerminal(JSON.stringify({ workflowId: id }))).workflowId, id, name);
    }
  });

  it('leaves letters of every script, emoji and newlines as they are', () => {
    const text = 'KAlgebra é 中文 العربية עברית 😀 ✓\n\ttab';
    assert.equal(forTerminal(text), text);
  });

  it('prints no bidi control raw in `coda runs` rows and `coda history`, whatever the workflow id holds', () => {
    const id = 'rollout-\u202egpj.exe\u202c-\u2066x\u2069';
    const runs = forTerminal(textTable([['WORKFLOW ID', 'TYPE'], [id, 'rollout']]));
    assert.equal(runs.split('\n')[1], 'rollout-\\u202egpj.exe\\u202c-\\u2066x\\u2069  rollout');
    const history = forTerminal(formatHistory(id, summarizeHistory([])));
    assert.ok(history.startsWith('rollout-\\u202egpj.exe\\u202c-\\u2066x\\u2069: '), history);
    for (const printed of [runs, history]) assert.deepEqual(FORMAT.filter(([, c]) => printed.includes(c)), []);
  });

  it("escapes a progress line's text (a stage or a trainer's phase read from Temporal), and only its text", () => {
    const out: string[] = [];
    const line = new ProgressLine({ isTTY: true, columns: 200, write: (t: string) => out.push(t) }, 10_000, () => 0);
    line.update('trainer \u202edesab\u202c');
    line.end('\u200bdone');
    assert.deepEqual(out, ['\r\x1b[Ktrainer \\u202edesab\\u202c (0:00)', '\r\x1b[K\\u200bdone (0:00)\n']);
  });
});
