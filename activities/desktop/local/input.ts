import { setTimeout as sleep } from 'node:timers/promises';
import type { InputEvent, Point } from '../../../core/actions';
import { runCommand, type Env } from '../../../io/process';

export interface InputOptions {
  readonly xdotool: string;
  readonly env: Env;
  /** Pause between typed characters; Qt keeps up with 12 ms (xdotool's default). */
  readonly typingDelayMs: number;
  /** Resolves once the app has nothing left to do (or after `maxMs`): where input waits for the app to catch up. */
  readonly untilAppIdle?: (maxMs: number) => Promise<unknown>;
}

/** A pause in the events of typed text: at least `ms`, then until the app is idle. */
export type SettleEvent = { readonly kind: 'settle'; readonly ms: number };
export type LocalInputEvent = InputEvent | SettleEvent;

/** Between the clicks of a double click: well inside Qt's 400 ms double-click interval. */
const CLICK_GAP_MS = 60;
/**
 * Around a Tab typed within text, a settle pause before it and one after it: 300 ms, then until the
 * app is idle (every thread of it asleep). After: a busy TeXstudio was seen to take the first
 * character after a Tab into the field the Tab left (its find field). Before: a TeXstudio still
 * busy with the text just typed (its find field searches as each character comes and keeps a
 * history popup) was seen to lose the Tab itself, the text after it joining the find field: once
 * in CI and once in a clean-clone run here, and once in 107 replays under six busy loops, with
 * fixed pauses of 150 or 300 ms.
 */
const FOCUS_MOVE_MS = 300;
/** The longest a settle pause waits for the app to be idle, beyond its own length. */
const SETTLE_MAX_MS = 3_000;
const COMMAND_TIMEOUT_MS = 10_000;

/**
 * Performs input events on an X display with xdotool, argv only: typed text follows `--`, so
 * text that looks like an option is still typed as text. A move and the click at its end are one
 * call (xdotool chains commands, in order, on one connection): a process less for every click.
 */
export async function performInputEvents(events: readonly InputEvent[], options: InputOptions): Promise<void> {
  for (const call of xdotoolCalls(withKeysForControls(events), options.typingDelayMs)) {
    if ('sleepMs' in call) await sleep(call.sleepMs);
    else if ('settleMs' in call) {
      await sleep(call.settleMs);
      await options.untilAppIdle?.(SETTLE_MAX_MS);
    } else await runCommand(options.xdotool, call.args, { env: options.env, timeoutMs: call.timeoutMs });
  }
}

/** One xdotool process's arguments and time limit, or a pause between two (a settle pause also waits for the app). */
export type XdotoolCall = { readonly args: string[]; readonly timeoutMs: number } | { readonly sleepMs: number } | { readonly settleMs: number };

/** The xdotool calls that perform `events` in order: a move followed by a click chained into one, every other event alone. */
export function xdotoolCalls(events: readonly LocalInputEvent[], typingDelayMs: number): XdotoolCall[] {
  const calls: XdotoolCall[] = [];
  for (const [i, event] of events.entries()) {
    if (event.kind === 'sleep' || event.kind === 'settle') {
      calls.push(event.kind === 'sleep' ? { sleepMs: event.ms } : { settleMs: event.ms });
      continue;
    }
    const args = xdotoolArgs(event, typingDelayMs);
    const previous = calls.at(-1);
    if (event.kind === 'click' && events[i - 1]?.kind === 'move' && previous !== undefined && 'args' in previous) {
      previous.args.push(...args);
      continue;
    }
    // Typing takes its delay per character on top of the usual allowance.
    calls.push({ args, timeoutMs: COMMAND_TIMEOUT_MS + (event.kind === 'type' ? event.text.length * (typingDelayMs + 5) : 0) });
  }
  return calls;
}

/** Where the pointer is, as xdotool reads it (`getmouselocation --shell`: X=, Y=, SCREEN=, WINDOW= lines). */
export async function pointerLocation(options: Pick<InputOptions, 'xdotool' | 'env'>): Promise<Point> {
  const said = (await runCommand(options.xdotool, ['getmouselocation', '--shell'], { env: options.env, timeoutMs: COMMAND_TIMEOUT_MS })).toString('utf8');
  const x = /^X=(\d+)$/m.exec(said)?.[1];
  const y = /^Y=(\d+)$/m.exec(said)?.[1];
  if (x === undefined || y === undefined) throw new Error(`xdotool getmouselocation said ${JSON.stringify(said.slice(0, 200))}, not X= and Y= lines`);
  return { x: Number(x), y: Number(y) };
}

/**
 * A newline in typed text is a press of Enter (each line of several typed into KAlgebra's
 * calculator runs on its own); `xdotool type` would send a Linefeed key that apps ignore. A tab
 * is a press of Tab, which moves the focus, between pauses for the app to catch up and move it.
 */
export function withKeysForControls(events: readonly InputEvent[]): LocalInputEvent[] {
  return events.flatMap((event): LocalInputEvent[] => {
    if (event.kind !== 'type' || !/[\n\t]/.test(event.text)) return [event];
    return event.text.split(/(\r?\n|\t)/).flatMap((part): LocalInputEvent[] => {
      if (part === '\t') return [{ kind: 'settle', ms: FOCUS_MOVE_MS }, { kind: 'key', chord: 'Tab' }, { kind: 'settle', ms: FOCUS_MOVE_MS }];
      if (/^\r?\n$/.test(part)) return [{ kind: 'key', chord: 'Return' }];
      return part === '' ? [] : [{ kind: 'type', text: part }];
    });
  });
}

export function xdotoolArgs(event: Exclude<InputEvent, { kind: 'sleep' }>, typingDelayMs: number): string[] {
  switch (event.kind) {
    case 'move':
      return ['mousemove', String(event.x), String(event.y)];
    case 'click':
      return ['click', '--repeat', String(event.count), '--delay', String(CLICK_GAP_MS), String(event.button)];
    case 'button_down':
      return ['mousedown', String(event.button)];
    case 'button_up':
      return ['mouseup', String(event.button)];
    case 'key':
      return ['key', '--clearmodifiers', event.chord];
    case 'type':
      return ['type', '--delay', String(typingDelayMs), '--', event.text];
  }
}
