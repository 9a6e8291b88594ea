/**
 * A small seeded pseudo-random generator (mulberry32) for the pure code that needs randomness —
 * the bootstrap of evaluation reports — so the same seed always gives the same figures and a
 * report can say which seed made it. Not for anything that must be unpredictable.
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
