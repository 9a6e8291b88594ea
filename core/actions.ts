import { z } from 'zod';
import { STOP_REASONS } from './episode';

/**
 * Typed GUI actions: what the executor's text becomes after parsing, what a desktop performs,
 * and what a trajectory records. Coordinates are absolute screen pixels of the desktop.
 */

const coord = z.number().int().min(0).max(100_000);
export const pointSchema = z.strictObject({ x: coord, y: coord });

/** Longest typed text or answer: enough for any formula, small enough for a workflow payload. */
export const MAX_TEXT_LENGTH = 10_000;

export const SCROLL_DIRECTIONS = ['up', 'down', 'left', 'right'] as const;

export const guiActionSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('click'), x: coord, y: coord }),
  z.strictObject({ type: z.literal('double_click'), x: coord, y: coord }),
  z.strictObject({ type: z.literal('right_click'), x: coord, y: coord }),
  /** Moves the pointer there and presses nothing (tooltips, hover menus). */
  z.strictObject({ type: z.literal('hover'), x: coord, y: coord }),
  z.strictObject({ type: z.literal('drag'), from: pointSchema, to: pointSchema }),
  /**
   * Without x and y it scrolls where the pointer is, as UI-TARS's `scroll(direction=...)` does; the
   * desktop that performs it records that point (activities/desktop/activities.ts).
   */
  z
    .strictObject({
      type: z.literal('scroll'),
      x: coord.optional(),
      y: coord.optional(),
      direction: z.enum(SCROLL_DIRECTIONS),
      /** Wheel clicks. */
      amount: z.number().int().min(1).max(50),
    })
    .refine((scroll) => (scroll.x === undefined) === (scroll.y === undefined), { message: 'x and y are given together or not at all', path: ['x'] }),
  /** Types `text`; `submit` presses Enter afterwards (UI-TARS writes a trailing `\n` for it). */
  z.strictObject({ type: z.literal('type'), text: z.string().max(MAX_TEXT_LENGTH), submit: z.boolean() }),
  /** A key chord, keys in lower case as UI-TARS writes them: ["ctrl", "c"], ["enter"]. */
  z.strictObject({ type: z.literal('hotkey'), keys: z.array(z.string().min(1).max(32)).min(1).max(6) }),
  z.strictObject({ type: z.literal('wait'), seconds: z.number().min(0).max(60) }),
  z.strictObject({ type: z.literal('done') }),
  z.strictObject({ type: z.literal('fail') }),
  /** CODA's `ANS <answer>`: ends the episode with an answer. */
  z.strictObject({ type: z.literal('answer'), text: z.string().max(MAX_TEXT_LENGTH) }),
  z.strictObject({ type: z.literal('call_user') }),
]);

export type Point = z.output<typeof pointSchema>;
export type GuiAction = z.output<typeof guiActionSchema>;
export type GuiActionType = GuiAction['type'];
export type ScrollDirection = (typeof SCROLL_DIRECTIONS)[number];

/** How an episode ended, as stored in manifests (see core/episode.ts). */
export const stopReasonSchema = z.enum(STOP_REASONS);

/**
 * Low-level input events a local X display performs (xdotool-style). Text travels as data in
 * argv, never through a shell.
 */
export type InputEvent =
  | { readonly kind: 'move'; readonly x: number; readonly y: number }
  /** Press and release `button` (1 left, 2 middle, 3 right, 4-7 wheel) `count` times. */
  | { readonly kind: 'click'; readonly button: 1 | 2 | 3 | 4 | 5 | 6 | 7; readonly count: number }
  | { readonly kind: 'button_down'; readonly button: 1 | 2 | 3 }
  | { readonly kind: 'button_up'; readonly button: 1 | 2 | 3 }
  /** An X keysym chord such as `ctrl+c`, `Return`, `shift+Tab`. */
  | { readonly kind: 'key'; readonly chord: string }
  | { readonly kind: 'type'; readonly text: string }
  | { readonly kind: 'sleep'; readonly ms: number };

/** One line a person (or a judge model) reads: `click at (640, 400)`, `type "p := 2" then Enter`. */
export function describeAction(action: GuiAction): string {
  switch (action.type) {
    case 'click':
    case 'double_click':
    case 'right_click':
    case 'hover':
      return `${action.type.replace('_', ' ')} at (${action.x}, ${action.y})`;
    case 'drag':
      return `drag from (${action.from.x}, ${action.from.y}) to (${action.to.x}, ${action.to.y})`;
    case 'scroll':
      return `scroll ${action.direction} ${action.amount} ${action.x === undefined ? 'at the pointer' : `at (${action.x}, ${action.y})`}`;
    case 'type':
      return `type ${JSON.stringify(action.text)}${action.submit ? ' then Enter' : ''}`;
    case 'hotkey':
      return `press ${action.keys.join('+')}`;
    case 'wait':
      return `wait ${action.seconds} s`;
    case 'answer':
      return `answer ${JSON.stringify(action.text)}`;
    case 'done':
    case 'fail':
      return action.type;
    case 'call_user':
      return 'call the user';
  }
}
