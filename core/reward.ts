import type { GuiAction, Point } from './actions';
import { keyName } from './render/keys';
import type { Size } from './smart-resize';

/**
 * CODA's decoupled-GRPO reward (docs/method.md): r = 1[type(a) = type(a*)] + r_dist(a, a*), with
 * r_dist in [0, 1] and 0 when the types differ, so r is in [0, 2]. The rules for r_dist:
 * - click, double_click, right_click, hover: pointSimilarity, 1 minus the L1 distance normalised per axis
 *   by the screen size (|dx|/W + |dy|/H) / 2.
 * - drag: IoU of the boxes the two drags span. A drag along one axis spans no area, so when either
 *   box is degenerate the rule falls back to the mean pointSimilarity of the two endpoints.
 * - scroll: 1 when the direction matches, else 0 (the paper's equality on direction).
 * - type: textSimilarity of the texts, halved when one submits (presses Enter) and the other not:
 *   the right text in the wrong state of the form is half right.
 * - answer: textSimilarity of the answers without surrounding whitespace.
 * - hotkey: hotkeySimilarity, Jaccard of the key sets, order-insensitive, aliases merged through
 *   the key table (control == ctrl, return == enter).
 * - wait, done, fail, call_user: 1 (no parameters, or none that matter).
 * A malformed executor output (null) scores 0.
 */
export function actionReward(candidate: GuiAction | null, reference: GuiAction, screen: Size): number {
  if (candidate === null || candidate.type !== reference.type) return 0;
  return 1 + parameterSimilarity(candidate, reference, screen);
}

function parameterSimilarity(candidate: GuiAction, reference: GuiAction, screen: Size): number {
  switch (candidate.type) {
    case 'click':
    case 'double_click':
    case 'right_click':
    case 'hover':
      return pointSimilarity(candidate, reference as typeof candidate, screen);
    case 'drag':
      return dragSimilarity(candidate, reference as typeof candidate, screen);
    case 'scroll':
      return candidate.direction === (reference as typeof candidate).direction ? 1 : 0;
    case 'type': {
      const ref = reference as typeof candidate;
      return textSimilarity(candidate.text, ref.text) * (candidate.submit === ref.submit ? 1 : 0.5);
    }
    case 'answer':
      return textSimilarity(candidate.text.trim(), (reference as typeof candidate).text.trim());
    case 'hotkey':
      return hotkeySimilarity(candidate.keys, (reference as typeof candidate).keys);
    case 'wait':
    case 'done':
    case 'fail':
    case 'call_user':
      return 1;
  }
}

/** 1 - (|dx|/width + |dy|/height) / 2, floored at 0 for points outside the screen. */
export function pointSimilarity(a: Point, b: Point, screen: Size): number {
  const distance = (Math.abs(a.x - b.x) / screen.width + Math.abs(a.y - b.y) / screen.height) / 2;
  return Math.max(0, 1 - distance);
}

interface Box {
  readonly left: number;
  readonly top: number;
  readonly right: number;
  readonly bottom: number;
}

const spanned = (from: Point, to: Point): Box => ({
  left: Math.min(from.x, to.x),
  top: Math.min(from.y, to.y),
  right: Math.max(from.x, to.x),
  bottom: Math.max(from.y, to.y),
});

const area = (box: Box): number => Math.max(0, box.right - box.left) * Math.max(0, box.bottom - box.top);

/** Intersection over union of two boxes; 0 when the union is empty. */
export function boxIoU(a: Box, b: Box): number {
  const overlap = area({
    left: Math.max(a.left, b.left),
    top: Math.max(a.top, b.top),
    right: Math.min(a.right, b.right),
    bottom: Math.min(a.bottom, b.bottom),
  });
  const union = area(a) + area(b) - overlap;
  return union > 0 ? overlap / union : 0;
}

type Drag = Extract<GuiAction, { type: 'drag' }>;

function dragSimilarity(a: Drag, b: Drag, screen: Size): number {
  const boxA = spanned(a.from, a.to);
  const boxB = spanned(b.from, b.to);
  if (area(boxA) === 0 || area(boxB) === 0) {
    return (pointSimilarity(a.from, b.from, screen) + pointSimilarity(a.to, b.to, screen)) / 2;
  }
  return boxIoU(boxA, boxB);
}

/** Levenshtein distance over code points, in O(min(n, m)) memory. */
export function levenshtein(a: string, b: string): number {
  const [long, short] = [Array.from(a), Array.from(b)].sort((x, y) => y.length - x.length) as [string[], string[]];
  let previous = Int32Array.from({ length: short.length + 1 }, (_, j) => j);
  let current = new Int32Array(short.length + 1);
  for (let i = 1; i <= long.length; i++) {
    current[0] = i;
    for (let j = 1; j <= short.length; j++) {
      const substitution = (previous[j - 1] as number) + (long[i - 1] === short[j - 1] ? 0 : 1);
      current[j] = Math.min(substitution, (previous[j] as number) + 1, (current[j - 1] as number) + 1);
    }
    [previous, current] = [current, previous];
  }
  return previous[short.length] as number;
}

/** 1 - levenshtein / longer length; two empty strings are identical (1). */
export function textSimilarity(a: string, b: string): number {
  const longest = Math.max(Array.from(a).length, Array.from(b).length);
  return longest === 0 ? 1 : 1 - levenshtein(a, b) / longest;
}

/** A key's canonical name: its X keysym when the key table knows it, else its lower-cased self. */
const canonicalKey = (key: string): string => keyName(key, 'x11') ?? key.toLowerCase();

/** Jaccard similarity of the two chords' key sets (order-insensitive, aliases merged). */
export function hotkeySimilarity(a: readonly string[], b: readonly string[]): number {
  const setA = new Set(a.map(canonicalKey));
  const setB = new Set(b.map(canonicalKey));
  const shared = [...setA].filter((key) => setB.has(key)).length;
  const union = setA.size + setB.size - shared;
  return union === 0 ? 1 : shared / union;
}

/**
 * GRPO advantages of one group: (r - mean) / (std + eps), with the sample standard deviation (n - 1)
 * as OpenRLHF's group_norm and verl's GRPO compute it. A group whose rewards are all equal, or a
 * group of one, carries no signal: all zeros.
 */
export function groupAdvantages(rewards: readonly number[], eps = 1e-6): number[] {
  if (!rewards.every(Number.isFinite)) throw new RangeError(`rewards must be finite numbers: ${JSON.stringify(rewards)}`);
  if (rewards.length < 2 || rewards.every((r) => r === rewards[0])) return rewards.map(() => 0);
  const mean = rewards.reduce((sum, r) => sum + r, 0) / rewards.length;
  const variance = rewards.reduce((sum, r) => sum + (r - mean) ** 2, 0) / (rewards.length - 1);
  const std = Math.sqrt(variance);
  return rewards.map((r) => (r - mean) / (std + eps));
}
