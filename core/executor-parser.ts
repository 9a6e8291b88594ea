import { SCROLL_DIRECTIONS, guiActionSchema, type GuiAction, type Point, type ScrollDirection } from './actions';
import { decodeEscapes, readQuoted } from './python-literal';
import { keyName, keyNames, RenderError } from './render/keys';
import { splitThoughtAction } from './reply-text';
import { modelToScreen, screenToModel, smartResize, type Size } from './smart-resize';
import { formatIssues } from './validation';

/**
 * UI-TARS-1.5 executor output (docs/formats.md): `Thought: ...\nAction: <call>`, read into one typed
 * GuiAction in screen pixels. Decisions a reader must know:
 * - `hover(start_box=...)` moves the pointer (GuiAction hover); `select(start_box, end_box)` is a drag,
 *   as in UI-TARS's own conversion.
 * - `finished()` and `finished(content='...')` are both `done`: UI-TARS writes a summary there, not
 *   an answer (answers are the planner's `ANS`, which never reaches the executor).
 * - Typed text ending in a newline, or in a literal backslash-n, is typed without it, then Enter.
 * - `wait()` waits WAIT_SECONDS (UI-TARS sleeps 5 s); `scroll` has no amount in UI-TARS, so it
 *   scrolls SCROLL_AMOUNT wheel clicks (what UI-TARS's own pyautogui conversion does); a scroll
 *   without a point has none: it scrolls where the pointer is, as that conversion's
 *   `pyautogui.scroll(-5)` does.
 * - `press(key=...)` and `keydown(key=...)` are hotkeys of one chord; keys are lower-cased, split on
 *   spaces (and on `+`, which models sometimes write), and must be names pyautogui knows (or an
 *   alias of one, core/render/keys.ts).
 * - One output is one action. UI-TARS sometimes writes several (`click(...)\n\ntype(...)`), which
 *   its own pyautogui conversion runs one after another in one script; a step here performs one
 *   action (its record, replay, judge and GRPO reward hold one), so such a reply is malformed,
 *   its reason naming the calls, rather than any of them dropped unperformed.
 * - UI-TARS's mobile actions (`long_press`, `open_app`, `press_home`, `press_back`) are refused as
 *   such: its desktop prompt never offers them.
 * - A call the output ends in before its final `)` is read as closed.
 * - An unknown call or argument is a failure naming it.
 */

export interface ExecutorView {
  /** The desktop's screen in pixels: where the action happens. */
  readonly screen: Size;
  /** The image the model saw; smartResize(screen) unless the caller resized differently. */
  readonly modelImage?: Size;
}

export type ExecutorParse =
  | { readonly ok: true; readonly thought: string; readonly action: GuiAction }
  | { readonly ok: false; readonly reason: string; readonly thought?: string };

export const WAIT_SECONDS = 5;
export const SCROLL_AMOUNT = 5;

const modelImageOf = (view: ExecutorView): Size => view.modelImage ?? smartResize(view.screen.width, view.screen.height);

/**
 * Longest reply read: a thought and the longest typed text (MAX_TEXT_LENGTH), every character
 * escaped, fit with room to spare. A longer one is degenerate output and never reaches a pattern.
 */
export const MAX_EXECUTOR_REPLY_CHARS = 32_768;

export function parseExecutorOutput(text: string, view: ExecutorView): ExecutorParse {
  if (text.length > MAX_EXECUTOR_REPLY_CHARS) {
    return { ok: false, reason: `the executor reply is ${text.length} characters long; at most ${MAX_EXECUTOR_REPLY_CHARS} are read` };
  }
  const { thought, action: actionText } = splitThoughtAction(text);
  const withThought = (reason: string): ExecutorParse => (thought === '' ? { ok: false, reason } : { ok: false, reason, thought });
  if (actionText === undefined) return withThought('no "Action:" in the executor output');
  const call = readAction(actionText);
  if (!call.ok) return withThought(call.reason);
  const action = toAction(call.call, view.screen, modelImageOf(view));
  if (!action.ok) return withThought(action.reason);
  const checked = guiActionSchema.safeParse(action.action);
  if (!checked.success) return withThought(`${call.call.name}(...) is out of range: ${formatIssues(checked.error.issues).join('; ')}`);
  return { ok: true, thought, action: checked.data };
}

type Failure = { readonly ok: false; readonly reason: string };
const fail = (reason: string): Failure => ({ ok: false, reason });
const preview = (text: string): string => JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}...` : text);

interface Call {
  readonly name: string;
  readonly args: ReadonlyMap<string, string>;
}

const IDENT = /^[A-Za-z_]\w*/;
const identAt = (src: string, i: number): string | undefined => IDENT.exec(src.slice(i, i + 64))?.[0];
const skipSpace = (src: string, i: number): number => {
  while (i < src.length && /\s/.test(src[i] as string)) i += 1;
  return i;
};

/**
 * One Python-style call with keyword arguments; string values are decoded, bare values kept raw.
 * A call the text ends in before its `)` is closed there (UI-TARS's parser appends the `)`).
 */
function readCall(src: string): { ok: true; call: Call; rest: string } | Failure {
  let i = skipSpace(src, 0);
  const name = identAt(src, i);
  if (name === undefined) return fail(`expected a call such as click(...), found ${preview(src.trim())}`);
  i = skipSpace(src, i + name.length);
  if (src[i] !== '(') return fail(`expected "(" after ${name}`);
  i += 1;
  const args = new Map<string, string>();
  for (;;) {
    i = skipSpace(src, i);
    if (i >= src.length || src[i] === ')') break;
    const key = identAt(src, i);
    if (key === undefined) return fail(`expected an argument name in ${name}(...) at ${preview(src.slice(i))}`);
    i = skipSpace(src, i + key.length);
    if (src[i] !== '=') return fail(`argument ${key} of ${name}(...) has no "=" (only keyword arguments are allowed)`);
    i = skipSpace(src, i + 1);
    let value: string;
    if (src[i] === "'" || src[i] === '"') {
      const quoted = readQuoted(src, i);
      if (quoted === undefined) return fail(`the string for ${key} in ${name}(...) is not closed`);
      value = quoted.value;
      i = quoted.end;
    } else {
      value = /^[^,)\s]*/.exec(src.slice(i))?.[0] ?? '';
      if (value === '') return fail(`argument ${key} of ${name}(...) has no value`);
      i += value.length;
    }
    if (args.has(key)) return fail(`argument ${key} is given twice in ${name}(...)`);
    args.set(key, value);
    i = skipSpace(src, i);
    if (i >= src.length) break;
    if (src[i] === ',') i += 1;
    else if (src[i] !== ')') return fail(`expected "," or ")" after ${key} in ${name}(...), found ${preview(src.slice(i))}`);
  }
  return { ok: true, call: { name, args }, rest: src.slice(i + 1) };
}

const CALL_START = /^[A-Za-z_]\w*\s*\(/;

/**
 * UI-TARS often leaves quotes unescaped inside typed text (`type(content='it's')`). When the strict
 * reading fails, a type/finished call whose content runs to a quote and `)` that end the text, or
 * that a line break and another call follow, is read that way, as UI-TARS's own parser does (it
 * splits actions at `)` and a blank line). The `)` may be missing at the end of the text. The blanks
 * before that line break exclude it, so no run of line breaks is read twice.
 */
const CONTENT_CALL = /^\s*(type|finished)\s*\(\s*content\s*=\s*(['"])([\s\S]*?)\2\s*(?:\)|$)(?=\s*$|[^\S\n]*\n\s*[A-Za-z_]\w*\s*\()/;

/** The one call of an action text; text after it that is not a call makes the output malformed, and another call too. */
function readAction(src: string): { ok: true; call: Call } | Failure {
  const first = firstCall(src);
  if (!first.ok) return first;
  const names = [first.call.name, ...callNames(first.rest)];
  if (names.length === 1) return { ok: true, call: first.call };
  return fail(`several actions in one reply (${names.join(', ')}): a step performs one action, so none is taken`);
}

function firstCall(src: string): { ok: true; call: Call; rest: string } | Failure {
  const strict = readCall(src);
  if (strict.ok && (strict.rest.trim() === '' || CALL_START.test(strict.rest.trim()))) return strict;
  const content = CONTENT_CALL.exec(src);
  if (content !== null) {
    const call = { name: content[1] as string, args: new Map([['content', decodeEscapes(content[3] as string)]]) };
    return { ok: true, call, rest: src.slice(content[0].length) };
  }
  return strict.ok ? fail(`unexpected text after ${strict.call.name}(...): ${preview(strict.rest.trim())}`) : strict;
}

/** A reason names this many of the calls after the first, then `...`. */
const NAMED_CALLS = 5;

/** The names of the calls `text` holds, in order, up to the first that cannot be read. */
function callNames(text: string): string[] {
  const names: string[] = [];
  let rest = text.trimStart();
  while (rest !== '' && names.length < NAMED_CALLS) {
    const next = readCall(rest);
    names.push(next.ok ? next.call.name : (identAt(rest, 0) ?? preview(rest)));
    if (!next.ok) break;
    rest = next.rest.trimStart();
  }
  return rest === '' || names.length < NAMED_CALLS ? names : [...names, '...'];
}

const POINT_TAGS = /<\|box_start\|>|<\|box_end\|>|<\/?point>|<\/?bbox>/g;
const NUMBER = /^[-+]?(\d+(\.\d*)?|\.\d+)$/;

/**
 * A point in model-image pixels from any of UI-TARS's spellings: `(x,y)`, `[x, y]`,
 * `<|box_start|>(x,y)<|box_end|>`, `<point>x y</point>`, or a box `(x1,y1,x2,y2)` (its centre).
 */
function readPoint(value: string): { ok: true; x: number; y: number } | Failure {
  const inner = unbracketed(value.replace(POINT_TAGS, ''));
  const parts = inner.split(/[\s,]+/).filter((part) => part !== '');
  if ((parts.length !== 2 && parts.length !== 4) || !parts.every((part) => NUMBER.test(part))) {
    return fail(`expected a point (x,y) or a box (x1,y1,x2,y2), found ${preview(value)}`);
  }
  const n = parts.map(Number);
  if (!n.every(Number.isFinite)) return fail(`coordinates are not finite numbers: ${preview(value)}`);
  const [x1, y1, x2 = x1, y2 = y1] = n as [number, number, number?, number?];
  return { ok: true, x: (x1 + x2) / 2, y: (y1 + y2) / 2 };
}

/** The text inside one pair of ( ) or [ ], blanks trimmed (by trim: a pattern ending in \s*$ would go quadratic on a long run of them). */
function unbracketed(text: string): string {
  let inner = text.trim();
  if (inner.startsWith('(') || inner.startsWith('[')) inner = inner.slice(1).trimStart();
  if (inner.endsWith(')') || inner.endsWith(']')) inner = inner.slice(0, -1).trimEnd();
  return inner;
}

/** The names UI-TARS uses for an action's (first) point. */
const START = ['start_box', 'point', 'start_point'] as const;
const END = ['end_box', 'end_point'] as const;

/** The calls and their arguments; a Map, so a name such as `constructor` is no call. */
const CALL_ARGS: ReadonlyMap<string, readonly string[]> = new Map<string, readonly string[]>([
  ['click', START],
  ['left_single', START],
  ['left_double', START],
  ['right_single', START],
  ['hover', START],
  ['drag', [...START, ...END]],
  ['select', [...START, ...END]],
  ['scroll', [...START, 'direction']],
  ['hotkey', ['key']],
  ['press', ['key']],
  ['keydown', ['key']],
  ['type', ['content']],
  ['wait', []],
  ['finished', ['content']],
  ['call_user', []],
]);

/**
 * Typed text that ends in a newline submits (presses Enter). So does a literal backslash-n, which
 * UI-TARS writes when it escapes once too often; its own conversion presses Enter for it too (but
 * strips every trailing backslash and `n` with it: only these two characters go here).
 */
const SUBMIT_ENDINGS = ['\n', '\\n'] as const;

type PointActionType = 'click' | 'double_click' | 'right_click' | 'hover';
const POINT_ACTIONS: Record<string, PointActionType> = { click: 'click', left_single: 'click', left_double: 'double_click', right_single: 'right_click', hover: 'hover' };

type Built = { ok: true; action: GuiAction } | Failure;

/** UI-TARS's phone actions (its MOBILE_USE prompt). */
const MOBILE_ACTIONS = new Set(['long_press', 'open_app', 'press_home', 'press_back']);

function toAction(call: Call, screen: Size, modelImage: Size): Built {
  const allowed = CALL_ARGS.get(call.name);
  if (MOBILE_ACTIONS.has(call.name)) return fail(`${call.name}(...) is a mobile action of UI-TARS: a desktop has no such action, and its prompt offers none`);
  if (allowed === undefined) return fail(`unknown action ${call.name}(...)`);
  for (const key of call.args.keys()) {
    if (!allowed.includes(key)) return fail(`unknown argument ${key} in ${call.name}(...)`);
  }
  const point = (names: readonly string[], optional = false): { ok: true; point: Point | undefined } | Failure => {
    const given = names.filter((name) => call.args.has(name));
    if (given.length > 1) return fail(`${given.join(' and ')} both name the same point in ${call.name}(...)`);
    const name = given[0];
    if (name === undefined) return optional ? { ok: true, point: undefined } : fail(`${call.name}(...) needs ${names[0]}`);
    const read = readPoint(call.args.get(name) as string);
    return read.ok ? { ok: true, point: modelToScreen(read.x, read.y, modelImage, screen) } : read;
  };
  switch (call.name) {
    case 'click':
    case 'left_single':
    case 'left_double':
    case 'right_single':
    case 'hover': {
      const at = point(START);
      if (!at.ok) return at;
      const { x, y } = at.point as Point;
      return { ok: true, action: { type: POINT_ACTIONS[call.name] as PointActionType, x, y } };
    }
    case 'drag':
    case 'select': {
      const from = point(START);
      if (!from.ok) return from;
      const to = point(END);
      if (!to.ok) return to;
      return { ok: true, action: { type: 'drag', from: from.point as Point, to: to.point as Point } };
    }
    case 'scroll': {
      const at = point(START, true);
      if (!at.ok) return at;
      const direction = (call.args.get('direction') ?? '').trim().toLowerCase();
      if (!(SCROLL_DIRECTIONS as readonly string[]).includes(direction)) {
        return fail(`scroll direction must be one of ${SCROLL_DIRECTIONS.join(', ')}, found ${preview(direction)}`);
      }
      return { ok: true, action: { type: 'scroll', ...at.point, direction: direction as ScrollDirection, amount: SCROLL_AMOUNT } };
    }
    case 'hotkey':
    case 'press':
    case 'keydown':
      return readKeys(call.name, call.args.get('key'));
    case 'type': {
      const content = call.args.get('content');
      if (content === undefined) return fail('type(...) needs content');
      const ending = SUBMIT_ENDINGS.find((end) => content.endsWith(end));
      return { ok: true, action: { type: 'type', text: ending === undefined ? content : content.slice(0, -ending.length), submit: ending !== undefined } };
    }
    case 'wait':
      return { ok: true, action: { type: 'wait', seconds: WAIT_SECONDS } };
    case 'finished':
      return { ok: true, action: { type: 'done' } };
    default: // call_user, the last name CALL_ARGS allows
      return { ok: true, action: { type: 'call_user' } };
  }
}

function readKeys(name: string, value: string | undefined): Built {
  if (value === undefined) return fail(`${name}(...) needs key`);
  const keys = value
    .trim()
    .toLowerCase()
    .split(/\s+/)
    .flatMap((token) => (token.length > 1 ? token.split(/\+(?!$)/) : [token]))
    .filter((key) => key !== '');
  if (keys.length === 0) return fail(`${name}(...) has an empty key`);
  const unknown = keys.find((key) => keyName(key, 'pyautogui') === undefined);
  if (unknown !== undefined) return fail(`unknown key ${preview(unknown)} in ${name}(...)`);
  return { ok: true, action: { type: 'hotkey', keys } };
}

/** Escapes typed text the way UI-TARS is told to: backslash, quote and line breaks. */
const escapeContent = (text: string): string =>
  text.replace(/[\\'\n\r\t]/g, (ch) => ({ '\\': '\\\\', "'": "\\'", '\n': '\\n', '\r': '\\r', '\t': '\\t' })[ch] as string);

/**
 * An action written back in exact UI-TARS-1.5 syntax, with model-image coordinates: what the
 * executor would have said to produce it (used by scripted model doubles). Scroll amounts and wait
 * times are not part of the syntax, so they come back as SCROLL_AMOUNT and WAIT_SECONDS; typed text
 * that ends in a newline reads back as a submit (the same keystroke), and so does text ending in a
 * literal backslash-n (SUBMIT_ENDINGS: the syntax cannot say it otherwise). `fail` and `answer` are
 * planner primitives with no executor call: RenderError.
 */
export function formatExecutorAction(action: GuiAction, view: ExecutorView): string {
  const modelImage = modelImageOf(view);
  const box = (point: Point): string => {
    const m = screenToModel(point, view.screen, modelImage);
    return `'(${m.x},${m.y})'`;
  };
  switch (action.type) {
    case 'click':
      return `click(start_box=${box(action)})`;
    case 'double_click':
      return `left_double(start_box=${box(action)})`;
    case 'right_click':
      return `right_single(start_box=${box(action)})`;
    case 'hover':
      return `hover(start_box=${box(action)})`;
    case 'drag':
      return `drag(start_box=${box(action.from)}, end_box=${box(action.to)})`;
    case 'scroll':
      return action.x === undefined || action.y === undefined
        ? `scroll(direction='${action.direction}')`
        : `scroll(start_box=${box({ x: action.x, y: action.y })}, direction='${action.direction}')`;
    case 'type':
      return `type(content='${escapeContent(action.submit ? `${action.text}\n` : action.text)}')`;
    case 'hotkey': {
      keyNames(action.keys, 'pyautogui'); // throws RenderError for a key pyautogui does not know
      return `hotkey(key='${escapeContent(action.keys.map((key) => key.toLowerCase()).join(' '))}')`;
    }
    case 'wait':
      return 'wait()';
    case 'done':
      return 'finished()';
    case 'call_user':
      return 'call_user()';
    case 'fail':
    case 'answer':
      throw new RenderError(`${action.type} is a planner primitive; UI-TARS has no call for it`);
  }
}

/** A whole executor reply, `Thought: ...\nAction: ...`, as UI-TARS-1.5 writes it. */
export const formatExecutorOutput = (thought: string, action: GuiAction, view: ExecutorView): string =>
  `Thought: ${thought}\nAction: ${formatExecutorAction(action, view)}`;
