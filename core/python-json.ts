/**
 * JSON as Python's json module writes and reads it: standard JSON plus the constants `NaN`,
 * `Infinity` and `-Infinity`, which json.dump writes for float('nan') and float('inf') (ChimeraX's
 * states bundle and ScienceBoard's app servers dump their state with it) and json.loads reads back.
 * JavaScript's JSON.parse refuses a whole document for one of them and JSON.stringify writes them as
 * null; these read and write them as the numbers they are. Pure.
 */

/** The constants Python's json accepts beyond JSON, and their values. */
const CONSTANTS: ReadonlyArray<readonly [string, number]> = [
  ['NaN', Number.NaN],
  ['Infinity', Number.POSITIVE_INFINITY],
  ['-Infinity', Number.NEGATIVE_INFINITY],
];

type Reviver = (this: unknown, key: string, value: unknown, context?: { readonly source?: string }) => unknown;
const parseWithSource = JSON.parse as (text: string, reviver?: Reviver) => unknown;

/**
 * Reads a document as Python's json.loads does: JSON.parse's grammar and values, plus `NaN`,
 * `Infinity` and `-Infinity` where a value may stand (never inside strings). Throws a SyntaxError
 * as JSON.parse does where it is not.
 */
export function parsePythonJson(text: string): unknown {
  // Each constant becomes a number JSON.parse reads, `0e<D><i><D>`, found again by its source text;
  // D is a run of 9s the document does not hold, so none of its own numbers is taken for one.
  const fence = '9'.repeat((text.match(/9+/g) ?? []).reduce((longest, run) => Math.max(longest, run.length), 0) + 1);
  const marks: number[] = [];
  let marked = '';
  let last = 0;
  let previous = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (ch === '"') {
      i = stringEnd(text, i);
      previous = '"';
      continue;
    }
    const mayStart = (ch === 'N' || ch === 'I' || ch === '-') && (previous === '' || previous === '[' || previous === ',' || previous === ':');
    const constant = mayStart ? CONSTANTS.find(([name]) => text.startsWith(name, i) && !/[\w$.]/.test(text[i + name.length] ?? '')) : undefined;
    if (constant !== undefined) {
      marked += `${text.slice(last, i)}0e${fence}${marks.length}${fence}`;
      marks.push(constant[1]);
      last = i + constant[0].length;
      i = last - 1;
    }
    if (ch !== ' ' && ch !== '\n' && ch !== '\r' && ch !== '\t') previous = constant === undefined ? ch : '0';
  }
  if (marks.length === 0) return JSON.parse(text);
  const placeholder = new RegExp(`^0e${fence}(\\d+)${fence}$`);
  return parseWithSource(marked + text.slice(last), (_key, value, context) => {
    const index = typeof value === 'number' ? placeholder.exec(context?.source ?? '')?.[1] : undefined;
    return index === undefined ? value : marks[Number(index)];
  });
}

/** The index of the quote closing the string that opens at `start` (the text's end when none does). */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return text.length;
}

/** Writes a value as Python's json.dumps writes the same data: NaN and the infinities as its constants, the rest as JSON.stringify does. */
export function stringifyPythonJson(value: unknown): string {
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined || typeof item === 'function' ? 'null' : stringifyPythonJson(item))).join(',')}]`;
  const entries = Object.entries(value).filter(([, item]) => item !== undefined && typeof item !== 'function');
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stringifyPythonJson(item)}`).join(',')}}`;
}
