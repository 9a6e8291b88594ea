import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { UNICODE_VERSION } from '../../core/unicode-names-data';
import { characterNamed } from '../../core/unicode-names';

/**
 * Asks real python3 what `\N{name}` is for every name it knows (and for spellings it refuses), and
 * compares: the table must answer as Python does, name for name.
 */
const PYTHON = String.raw`
import json, sys, unicodedata
names = [unicodedata.name(chr(cp), None) for cp in range(0x110000)]
names = [name for name in names if name]
probes = names + json.loads(sys.argv[1]) + [name.lower() for name in names[::97]]
def decode(name):
    try:
        return eval('"\\N{%s}"' % name)
    except SyntaxError:
        return None
print(json.dumps({'version': unicodedata.unidata_version, 'answers': [[name, decode(name)] for name in probes]}))
`;

const SPELLINGS = [
  'BOM', 'bom', 'NBSP', 'zwj', 'LINE FEED', 'BYTE ORDER MARK', 'LATIN CAPITAL LETTER GHA',
  'CJK UNIFIED IDEOGRAPH-04E00', 'CJK UNIFIED IDEOGRAPH-4e00', 'cjk unified ideograph-4E00', 'CJK UNIFIED IDEOGRAPH-4E00A',
  'CJK UNIFIED IDEOGRAPH-0041', 'CJK COMPATIBILITY IDEOGRAPH-f900', 'CJK COMPATIBILITY IDEOGRAPH-0F900', 'NUSHU CHARACTER-1b170',
  'hangul syllable gag', 'HANGUL SYLLABLE GAG', 'HANGUL SYLLABLE', 'LATIN SMALL LETTER A ', 'LATIN  SMALL LETTER A',
  'NOT A REAL NAME', 'TIBETAN LETTER -A', 'tibetan letter -a', 'TIBETAN LETTER A', 'HYPHEN-MINUS', 'HYPHEN MINUS',
];

describe('Unicode character names (\\N{...})', function () {
  this.timeout(60_000);

  it('answers every name, alias and wrong spelling as python3 does', () => {
    const { version, answers } = JSON.parse(
      execFileSync('python3', ['-c', PYTHON, JSON.stringify(SPELLINGS)], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }),
    ) as { version: string; answers: Array<[string, string | null]> };
    assert.equal(version, UNICODE_VERSION, 'python3 has another Unicode: regenerate with python3 infra/unicode-names.py');
    assert.ok(answers.length > 140_000);
    const wrong = answers.filter(([name, character]) => characterNamed(name) !== (character ?? undefined));
    assert.deepEqual(wrong.slice(0, 10), []);
  });
});
