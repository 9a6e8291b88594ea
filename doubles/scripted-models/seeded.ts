import { mulberry32 } from '../../core/prng';

/**
 * TEST DOUBLE support: deterministic randomness for the scripted models. A double answers the same
 * request the same way (as a model at temperature 0, or with a fixed seed, does), so tests and
 * benchmarks are reproducible.
 */

/** FNV-1a, 32 bits: a stable number from a text. */
export function hashText(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** Mulberry32 (core/prng.ts): small, seeded, good enough to decide which replies go wrong. */
export const prng = (seed: number): (() => number) => mulberry32(seed);
