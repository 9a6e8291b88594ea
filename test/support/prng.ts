import type { GuiAction } from '../../core/actions';
import { mulberry32 } from '../../core/prng';
interface Size {
  readonly width: number;
  readonly height: number;
}

/** core/prng.ts's mulberry32 with helpers, so property and fuzz tests are reproducible. */
export class Prng {
  private readonly random: () => number;

  constructor(seed: number) {
    this.random = mulberry32(seed);
  }

  /** A float in [0, 1). */
  next(): number {
    return this.random();
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)] as T;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  string(length: number, alphabet: string): string {
    const chars = Array.from(alphabet);
    return Array.from({ length }, () => this.pick(chars)).join('');
  }
}

const KEYS = ['ctrl', 'alt', 'shift', 'enter', 'tab', 'a', 'c', 'v', 'l', 'f5', 'esc', 'space', 'up', 'pagedown', '+', "'", '\\'];
const TEXT = 'abcxyz XYZ0123:=+-*/^()[]{}\'"\\\n\té√π✓😀';

/** A random valid GuiAction on `screen`. */
export function randomAction(rng: Prng, screen: Size): GuiAction {
  const x = rng.int(0, screen.width - 1);
  const y = rng.int(0, screen.height - 1);
  switch (rng.int(0, 12)) {
    case 0:
      return { type: 'click', x, y };
    case 1:
      return { type: 'double_click', x, y };
    case 2:
      return { type: 'right_click', x, y };
    case 3:
      return { type: 'drag', from: { x, y }, to: { x: rng.int(0, screen.width - 1), y: rng.int(0, screen.height - 1) } };
    case 4:
      return { type: 'scroll', x, y, direction: rng.pick(['up', 'down', 'left', 'right'] as const), amount: rng.int(1, 10) };
    case 5:
      return { type: 'type', text: rng.string(rng.int(0, 20), TEXT), submit: rng.chance(0.5) };
    case 6:
      return { type: 'hotkey', keys: Array.from({ length: rng.int(1, 3) }, () => rng.pick(KEYS)) };
    case 7:
      return { type: 'wait', seconds: rng.int(0, 10) };
    case 8:
      return { type: 'done' };
    case 9:
      return { type: 'fail' };
    case 10:
      return { type: 'answer', text: rng.string(rng.int(0, 12), TEXT) };
    case 11:
      return { type: 'hover', x, y };
    default:
      return { type: 'call_user' };
  }
}
