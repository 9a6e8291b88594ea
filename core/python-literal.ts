import { characterNamed } from './unicode-names';

/**
 * Models write Python-flavoured literals: UI-TARS calls such as `type(content='it\'s')`, judge
 * replies such as `{'Correctness': True, 'First_Error_Step': None}`. These helpers read them
 * without ever evaluating anything.
 */

/** Python's one-character escapes. */
const PYTHON_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
};

/** For text that may be JSON as well as Python: `\/` is a slash in JSON, where Python keeps its backslash. */
const JSON_OR_PYTHON_ESCAPES: Readonly<Record<string, string>> = { ...PYTHON_ESCAPES, '/': '/' };

const HEX_ESCAPES: Record<string, number> = { x: 2, u: 4, U: 8 };

/** `\N{name}`: names are upper-case letters, digits, spaces and hyphens (any case in Python), at most ~90 long. */
const MAX_NAME_LENGTH = 100;
const NAMED_ESCAPE = new RegExp(`^\\{([A-Za-z0-9 -]{1,${MAX_NAME_LENGTH}})\\}`);

const isHex = (digits: string, length: number): boolean => digits.length === length && /^[0-9a-fA-F]+$/.test(digits);

/**
 * Decodes Python escapes from `start` until an unescaped `quote` (or the end when quote is
 * undefined): the one-character ones of `simple`, octal `\ooo` (1 to 3 digits), `\xhh`, `\uhhhh`,
 * `\Uhhhhhhhh` and `\N{name}`. An unknown or malformed escape keeps its backslash, as Python does for
 * unknown ones (where it refuses a malformed one, the text is kept: it is what the model wrote);
 * raw newlines are accepted (models emit them).
 */
function scan(
  src: string,
  start: number,
  quote: string | undefined,
  simple: Readonly<Record<string, string>>,
): { value: string; end: number } | undefined {
  let value = '';
  let i = start;
  while (i < src.length) {
    const ch = src[i] as string;
    if (ch === quote) return { value, end: i + 1 };
    if (ch !== '\\' || i + 1 >= src.length) {
      value += ch;
      i += 1;
      continue;
    }
    const next = src[i + 1] as string;
    const hexLength = HEX_ESCAPES[next];
    const octal = /^[0-7]{1,3}/.exec(src.slice(i + 1, i + 4))?.[0];
    const named = next === 'N' ? NAMED_ESCAPE.exec(src.slice(i + 2, i + 2 + MAX_NAME_LENGTH + 2)) : null;
    const character = named === null ? undefined : characterNamed(named[1] as string);
    if (Object.hasOwn(simple, next)) {
      value += simple[next];
      i += 2;
    } else if (character !== undefined) {
      value += character;
      i += 2 + (named as RegExpExecArray)[0].length;
    } else if (octal !== undefined) {
      value += String.fromCodePoint(Number.parseInt(octal, 8));
      i += 1 + octal.length;
    } else if (hexLength !== undefined && isHex(src.slice(i + 2, i + 2 + hexLength), hexLength)) {
      const code = Number.parseInt(src.slice(i + 2, i + 2 + hexLength), 16);
      value += code <= 0x10ffff ? String.fromCodePoint(code) : '\ufffd';
      i += 2 + hexLength;
    } else {
      value += `\\${next}`;
      i += 2;
    }
  }
  return quote === undefined ? { value, end: i } : undefined;
}

/**
 * Reads the Python string literal that starts at `start` (which holds ' or "): its decoded value
 * and the index just past the closing quote, or undefined when it never closes.
 */
export const readQuoted = (src: string, start: number): { value: string; end: number } | undefined =>
  scan(src, start + 1, src[start], PYTHON_ESCAPES);

/** Decodes the Python escapes of a string body whose quotes are already gone. */
export const decodeEscapes = (body: string): string => (scan(body, 0, undefined, PYTHON_ESCAPES) as { value: string }).value;

/**
 * Drops a comma (and the whitespace after it) that ends the output so far: Python allows `[1, 2,]`,
 * JSON not. The output is a list of small chunks, so this looks back over a few entries instead of
 * re-reading one long string.
 */
function dropTrailingComma(out: string[]): void {
  let i = out.length - 1;
  while (i >= 0 && /^\s+$/.test(out[i] as string)) i -= 1;
  if (out[i] === ',') out.splice(i, 1);
}

const PYTHON_CONSTANTS: Record<string, string> = { True: 'true', False: 'false', None: 'null' };

/**
 * Rewrites a Python literal (dict/list with single- or double-quoted strings, True/False/None,
 * trailing commas) as JSON text. Anything else passes through, so JSON stays JSON and garbage
 * stays garbage for JSON.parse to refuse.
 */
export function pythonToJson(src: string): string {
  const out: string[] = [];
  let i = 0;
  while (i < src.length) {
    const ch = src[i] as string;
    if (ch === '"' || ch === "'") {
      const quoted = scan(src, i + 1, ch, JSON_OR_PYTHON_ESCAPES);
      if (quoted === undefined) return out.join('') + src.slice(i);
      out.push(JSON.stringify(quoted.value));
      i = quoted.end;
    } else if (/[A-Za-z_]/.test(ch)) {
      const word = /^[A-Za-z_]\w*/.exec(src.slice(i, i + 64))?.[0] ?? ch;
      out.push(PYTHON_CONSTANTS[word] ?? word);
      i += word.length;
    } else {
      if (ch === '}' || ch === ']') dropTrailingComma(out);
      out.push(ch);
      i += 1;
    }
  }
  return out.join('');
}
