import { pythonToJson } from './python-literal';

/** Models often wrap a whole reply in a ``` fence, as prompts show formats; this removes it. */
export function stripOuterFence(text: string): string {
  const trimmed = text.trim();
  return /^```[^\n]*\n([\s\S]*?)\n?```$/.exec(trimmed)?.[1] ?? trimmed;
}

/**
 * A `Thought: ... Action: ...` reply (planner and UI-TARS alike), outer fence removed: the thought
 * (the text before the last `Action:`, after `Thought:` when that label is there) and the text
 * after the last `Action:`, undefined when there is none.
 */
export function splitThoughtAction(raw: string): { readonly text: string; readonly thought: string; readonly action?: string } {
  const text = stripOuterFence(raw);
  const at = text.lastIndexOf('Action:');
  const before = at < 0 ? text : text.slice(0, at);
  const label = before.indexOf('Thought:');
  const thought = (label < 0 ? before : before.slice(label + 'Thought:'.length)).trim();
  return at < 0 ? { text, thought } : { text, thought, action: text.slice(at + 'Action:'.length) };
}

/**
 * Finds the JSON value a model meant in a free-text reply: a fenced block (```json ... ```) first,
 * else the first balanced {...} or [...] that parses. Python literals (True/False/None, single
 * quotes, trailing commas) are accepted. Never throws.
 */
export function extractJson(text: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  for (const candidate of candidates(text)) {
    const value = tryParse(candidate);
    if (value !== undefined) return { ok: true, value };
  }
  return { ok: false, reason: 'no JSON object or list found in the reply' };
}

/** Bounds the work on long garbage: a reply rarely has more than a few brackets before its JSON. */
const MAX_BRACKET_STARTS = 32;

/** The insides of ``` fences, language tag dropped; found with indexOf so long replies stay linear. */
function* fencedBlocks(text: string): Generator<string> {
  let open = text.indexOf('```');
  while (open >= 0) {
    const close = text.indexOf('```', open + 3);
    if (close < 0) return;
    yield text.slice(open + 3, close).replace(/^[A-Za-z]*/, '');
    open = text.indexOf('```', close + 3);
  }
}

function* candidates(text: string): Generator<string> {
  yield* fencedBlocks(text);
  let starts = 0;
  for (let i = 0; i < text.length && starts < MAX_BRACKET_STARTS; i++) {
    const ch = text[i];
    if (ch !== '{' && ch !== '[') continue;
    starts += 1;
    const end = balancedEnd(text, i);
    if (end !== undefined) yield text.slice(i, end);
  }
}

function tryParse(candidate: string): unknown {
  const trimmed = candidate.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return undefined;
  try {
    return JSON.parse(pythonToJson(trimmed)) as unknown;
  } catch {
    return undefined;
  }
}

/** The index just past the bracket that closes the one at `start`, skipping quoted strings. */
function balancedEnd(text: string, start: number): number | undefined {
  let depth = 0;
  let quote: string | undefined;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (quote !== undefined) {
      if (ch === '\\') i += 1;
      else if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
    } else if (ch === '{' || ch === '[') {
      depth += 1;
    } else if (ch === '}' || ch === ']') {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return undefined;
}
