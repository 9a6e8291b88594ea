import { textSimilarity } from './reward';

/**
 * Deduplication of generated task instructions (REFERENCE.md §1: a generator asked for 30+ tasks
 * repeats itself and its examples). Two instructions are the same task when their normalised texts
 * are equal, or nearly so: the edit-distance similarity of the normalised texts, or the overlap of
 * their word sets (which catches reorderings), reaches the threshold. Instructions that name
 * different numbers (`2^10` and `3^10`) ask for different results: they are different tasks,
 * however alike their words, and their similarity is halved.
 */

/** Lower case, punctuation dropped, white space folded: how instructions are compared. */
export const normaliseInstruction = (instruction: string): string =>
  instruction
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s^*+/=().,-]/gu, ' ')
    .replace(/[.,]+(\s|$)/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

const words = (normalised: string): Set<string> => new Set(normalised.split(' ').filter((w) => w !== ''));

/** Jaccard overlap of two word sets. */
function wordOverlap(a: Set<string>, b: Set<string>): number {
  const shared = [...a].filter((w) => b.has(w)).length;
  const union = a.size + b.size - shared;
  return union === 0 ? 1 : shared / union;
}

/** The words that carry a number, sorted: what a task asks to compute or plot. */
const values = (normalised: string): string => [...words(normalised)].filter((w) => /\d/.test(w)).sort().join(' ');

/** How alike two instructions are, in [0, 1]: the larger of the edit and word-overlap similarities. */
export function instructionSimilarity(a: string, b: string): number {
  const na = normaliseInstruction(a);
  const nb = normaliseInstruction(b);
  if (na === nb) return 1;
  const similarity = Math.max(textSimilarity(na, nb), wordOverlap(words(na), words(nb)));
  return values(na) === values(nb) ? similarity : similarity / 2;
}

export interface KnownInstruction {
  /** What to call it in a duplicate's reason: a seed's task id, or "item 3 of reply 2". */
  readonly name: string;
  readonly instruction: string;
}

export interface Duplicate {
  readonly instruction: string;
  /** The name of the instruction it repeats. */
  readonly of: string;
  readonly similarity: number;
}

/**
 * Splits `candidates` into new instructions and duplicates of `known` or of earlier candidates,
 * in order; `threshold` in (0, 1] is the similarity from which two are the same task.
 */
export function dedupeInstructions(
  candidates: readonly KnownInstruction[],
  known: readonly KnownInstruction[],
  threshold: number,
): { kept: KnownInstruction[]; duplicates: Duplicate[] } {
  if (!(threshold > 0 && threshold <= 1)) throw new RangeError(`similarity threshold must be in (0, 1], got ${threshold}`);
  const seen = [...known];
  const kept: KnownInstruction[] = [];
  const duplicates: Duplicate[] = [];
  for (const candidate of candidates) {
    let best: { of: string; similarity: number } | undefined;
    for (const other of seen) {
      const similarity = instructionSimilarity(candidate.instruction, other.instruction);
      if (similarity >= threshold && (best === undefined || similarity > best.similarity)) best = { of: other.name, similarity };
    }
    if (best === undefined) {
      kept.push(candidate);
      seen.push(candidate);
    } else {
      duplicates.push({ instruction: candidate.instruction, of: best.of, similarity: Math.round(best.similarity * 1000) / 1000 });
    }
  }
  return { kept, duplicates };
}
