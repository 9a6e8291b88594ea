/**
 * Small seeded pseudo-random generators for the pure code that needs randomness — the bootstrap of
 * evaluation reports, the sampling seeds of model requests — and for the test doubles, so the same
 * seed always gives the same figures and a report can say which seed made it. Not for anything
 * that must be unpredictable.
 */

/** A function returning floats in [0, 1), the same sequence for the same 32-bit seed. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [0, n) from `random`. */
export const randomIndex = (random: () => number, n: number): number => Math.min(n - 1, Math.floor(random() * n));

/** FNV-1a over the text's UTF-16 code units, then murmur3's finaliser: a stable, well-mixed 32-bit number. */
export function hashText(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b) >>> 0;
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35) >>> 0;
  return (hash ^ (hash >>> 16)) >>> 0;
}

/**
 * A generator keyed by what its draws decide (a model, a task, an attempt, a step, a sample...):
 * the same parts always give the same sequence, whatever was drawn before or beside it, so draws
 * made by concurrent callers do not depend on the order the callers happen to run in.
 */
export const keyedRandom = (...parts: ReadonlyArray<string | number>): (() => number) => mulberry32(hashText(parts.join('\u241f')));
