import { pythonToJson } from '../python-literal';
import { extractJson } from '../reply-text';
import type { JudgeReply } from './verdict';

/**
 * Reads a judge reply in SEAgent's shape: `Correctness` (bool), `Redundant` (step numbers),
 * `First_Error_Step` (step number or None), plus free text. Accepted spellings: a JSON or Python
 * dict, bare or in a ``` fence (True/False/None, single quotes), or `Key: value` lines as judges
 * write in markdown. Keys match case- and punctuation-insensitively. A reply missing any of the
 * three fields is a failure: a vote that cannot be read must not count as success.
 */

export type JudgeReplyParse = { readonly ok: true; readonly reply: JudgeReply } | { readonly ok: false; readonly reason: string };

type Fields = Map<string, unknown>;

const normaliseKey = (key: string): string => key.toLowerCase().replace(/[^a-z]/g, '');
const REASONING_KEYS = ['thoughts', 'thought', 'reasoning', 'reason', 'analysis', 'explanation'];

/**
 * Longest reply read: 4 characters for each of the 32,768 tokens judging.maxTokens allows. A
 * longer one is degenerate output, a failed vote, and never reaches a pattern.
 */
export const MAX_JUDGE_REPLY_CHARS = 131_072;

export function parseJudgeReply(text: string): JudgeReplyParse {
  if (text.length > MAX_JUDGE_REPLY_CHARS) {
    return { ok: false, reason: `the judge reply is ${text.length} characters long; at most ${MAX_JUDGE_REPLY_CHARS} are read` };
  }
  const json = extractJson(text);
  let fields: Fields | undefined;
  if (json.ok && typeof json.value === 'object' && json.value !== null && !Array.isArray(json.value)) {
    fields = new Map(Object.entries(json.value).map(([key, value]) => [normaliseKey(key), value]));
  }
  if (fields === undefined || !fields.has('correctness')) {
    const lines = fieldsFromLines(text);
    if (lines.has('correctness') || fields === undefined) fields = lines;
  }
  return readFields(fields);
}

/**
 * A field's name at the start of a line, markdown around it, up to its `:` or `=`. Its value is the
 * rest of the line, trimmed by valueOf: no pattern looks past the name, so each line is read once
 * whatever runs of blanks it holds.
 */
const FIELD_NAME = /^[\s*#>`\-"']*(correctness|redundant|first[\s_-]*error[\s_-]*step)["'*`\s]*[:=]/i;

function fieldsFromLines(text: string): Fields {
  const fields: Fields = new Map();
  for (const line of text.split('\n')) {
    const match = FIELD_NAME.exec(line);
    if (match === null) continue;
    const key = normaliseKey(match[1] as string);
    if (!fields.has(key)) fields.set(key, literal(valueOf(line.slice(match[0].length))));
  }
  return fields;
}

/** Markdown that may close a value: trailing blanks, commas, asterisks and backquotes. */
const TRAILING = new Set([',', '*', '`']);

function valueOf(rest: string): string {
  const value = rest.trim();
  let end = value.length;
  while (end > 0 && (TRAILING.has(value[end - 1] as string) || /\s/.test(value[end - 1] as string))) end -= 1;
  return value.slice(0, end);
}

/** A value written on a line: a Python/JSON literal when it is one, else the raw text. */
function literal(raw: string): unknown {
  try {
    return JSON.parse(pythonToJson(raw)) as unknown;
  } catch {
    return raw;
  }
}

type Read<T> = { ok: true; value: T } | { ok: false; reason: string };
const show = (value: unknown): string => JSON.stringify(value)?.slice(0, 60) ?? String(value);

function readFields(fields: Fields): JudgeReplyParse {
  if (!fields.has('correctness') && !fields.has('redundant') && !fields.has('firsterrorstep')) {
    return { ok: false, reason: 'no Correctness, Redundant or First_Error_Step in the judge reply' };
  }
  for (const [key, name] of [
    ['correctness', 'Correctness'],
    ['redundant', 'Redundant'],
    ['firsterrorstep', 'First_Error_Step'],
  ] as const) {
    if (!fields.has(key)) return { ok: false, reason: `the judge reply has no ${name}` };
  }
  const correctness = readBoolean(fields.get('correctness'));
  if (!correctness.ok) return correctness;
  const redundant = readSteps(fields.get('redundant'));
  if (!redundant.ok) return redundant;
  const firstErrorStep = readOptionalStep(fields.get('firsterrorstep'));
  if (!firstErrorStep.ok) return firstErrorStep;
  const reasoningKey = REASONING_KEYS.find((key) => typeof fields.get(key) === 'string');
  const reply: JudgeReply = { correctness: correctness.value, redundant: redundant.value, firstErrorStep: firstErrorStep.value };
  return { ok: true, reply: reasoningKey === undefined ? reply : { ...reply, reasoning: fields.get(reasoningKey) as string } };
}

/** A text value trimmed and in lower case (trim, not a pattern, takes off the blanks: linear however many). */
const word = (value: unknown): string | undefined => (typeof value === 'string' ? value.trim().toLowerCase() : undefined);

function readBoolean(value: unknown): Read<boolean> {
  if (typeof value === 'boolean') return { ok: true, value };
  const said = word(value);
  if (said === 'true' || said === 'yes') return { ok: true, value: true };
  if (said === 'false' || said === 'no') return { ok: true, value: false };
  return { ok: false, reason: `Correctness must be true or false, found ${show(value)}` };
}

function readStep(value: unknown): number | undefined {
  const said = word(value);
  const n = said !== undefined && /^\d+$/.test(said) ? Number(said) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 ? n : undefined;
}

function isNone(value: unknown): boolean {
  const said = word(value);
  return value === null || said === '' || said === 'none' || said === 'null';
}

/** Step numbers, sorted and without repeats; None or an empty text is an empty list. */
function readSteps(value: unknown): Read<number[]> {
  if (isNone(value)) return { ok: true, value: [] };
  const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',').filter((part) => part.trim() !== '') : [value];
  const steps = items.map(readStep);
  if (steps.some((step) => step === undefined)) return { ok: false, reason: `Redundant must list step numbers (1-based), found ${show(value)}` };
  return { ok: true, value: [...new Set(steps as number[])].sort((a, b) => a - b) };
}

function readOptionalStep(value: unknown): Read<number | null> {
  if (isNone(value)) return { ok: true, value: null };
  const step = readStep(value);
  return step === undefined ? { ok: false, reason: `First_Error_Step must be a step number (1-based) or None, found ${show(value)}` } : { ok: true, value: step };
}
