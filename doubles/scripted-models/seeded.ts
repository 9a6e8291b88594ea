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

/** Mulberry32: small, seeded, good enough to decide which replies go wrong. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
