import { textSimilarity } from './reward';

/**
 * Deduplication of generated task instructions (docs/method.md, "Task generation": a generator asked for 30+ tasks
 * repeats itself and its examples). Two instructions are the same task when their normalised texts
 * are equal, or nearly so: the edit-distance similarity of the normalised texts, or the overlap of
 * their word sets (which catches reorderings), reaches the threshold. Instructions that name
 * different numbers (`2^10` and `3^10`), or that both quote text and quote different texts
 * (replace 'paper' and replace 'proof'), ask for different results: they are different tasks,
 * however alike their words, and their similarity is halved. The known instructions may include
 * the tasks of the earlier rounds of a run: a candidate that repeats one of them is a repeat of an
 * earlier round, recorded apart (a round must move on, not train on its predecessor's prompts).
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

/**
 * The texts an instruction quotes ('…', "…", `…`, “…”), lower case, sorted: what it asks to find,
 * type or name. A single quote inside a word (KAlgebra's) is an apostrophe, not a quote.
 */
const quoted = (instruction: string): string =>
  [...instruction.matchAll(/(?<![\p{L}\p{N}])'([^'\n]+)'(?![\p{L}\p{N}])|"([^"\n]+)"|`([^`\n]+)`|“([^”\n]+)”/gu)]
    .map((m) => (m[1] ?? m[2] ?? m[3] ?? m[4] ?? '').trim().toLowerCase())
    .sort()
    .join('\n');

/** How alike two instructions are, in [0, 1]: the larger of the edit and word-overlap similarities. */
export function instructionSimilarity(a: string, b: string): number {
  const na = normaliseInstruction(a);
  const nb = normaliseInstruction(b);
  if (na === nb) return 1;
  const similarity = Math.max(textSimilarity(na, nb), wordOverlap(words(na), words(nb)));
  const [qa, qb] = [quoted(a), quoted(b)];
  return values(na) === values(nb) && (qa === '' || qb === '' || qa === qb) ? similarity : similarity / 2;
}

/**
 * Whether instructionSimilarity(a, b) >= threshold, deciding without the edit distance where the
 * answer is already known: different numbers or quotes need twice the threshold (their similarity
 * is halved), a word overlap that reaches it decides yes, and texts whose lengths differ by more
 * than the edit distance allows decide no (the distance is at least the difference in length).
 * The task-generator double asks it for every pair of its template tasks.
 */
export function similarAtLeast(a: string, b: string, threshold: number): boolean {
  const na = normaliseInstruction(a);
  const nb = normaliseInstruction(b);
  if (na === nb) return 1 >= threshold;
  const [qa, qb] = [quoted(a), quoted(b)];
  // x / 2 >= t exactly when x >= 2 t: halving and doubling are exact in floating point.
  const needed = values(na) === values(nb) && (qa === '' || qb === '' || qa === qb) ? threshold : 2 * threshold;
  if (wordOverlap(words(na), words(nb)) >= needed) return true;
  const [la, lb] = [Array.from(na).length, Array.from(nb).length];
  if (1 - Math.abs(la - lb) / Math.max(la, lb) < needed) return false;
  return textSimilarity(na, nb) >= needed;
}

/** Where a task of an earlier round is: its task set (version), the round and its task id in the set. */
export interface EarlierRound {
  readonly set: string;
  readonly round: number;
  readonly task: string;
}

export interface KnownInstruction {
  /** What to call it in a duplicate's reason: a seed's task id, "reply 2 item 3", or an earlier round's "<set> G-004". */
  readonly name: string;
  readonly instruction: string;
  /** Set when it is a task of an earlier round of the run. */
  readonly earlier?: EarlierRound;
}

export interface Duplicate {
  readonly instruction: string;
  /** The name of the instruction it repeats. */
  readonly of: string;
  readonly similarity: number;
  /** Set when what it repeats is a task of an earlier round. */
  readonly earlier?: EarlierRound;
}

/** A new instruction dropped because it repeats a task of an earlier round: which set, round and task, and that task's instruction. */
export interface Repeat {
  readonly instruction: string;
  readonly set: string;
  readonly round: number;
  readonly task: string;
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
    let best: { other: KnownInstruction; similarity: number } | undefined;
    for (const other of seen) {
      const similarity = instructionSimilarity(candidate.instruction, other.instruction);
      if (similarity >= threshold && (best === undefined || similarity > best.similarity)) best = { other, similarity };
    }
    if (best === undefined) {
      kept.push(candidate);
      seen.push(candidate);
    } else {
      const { other } = best;
      duplicates.push({ instruction: candidate.instruction, of: other.name, similarity: Math.round(best.similarity * 1000) / 1000, ...(other.earlier === undefined ? {} : { earlier: other.earlier }) });
    }
  }
  return { kept, duplicates };
}

/**
 * Splits duplicates into repeats of an earlier round's tasks (with the set, round, task and the
 * instruction repeated, found in `known` by name) and the others (of a seed or within the set).
 */
export function splitRepeats(duplicates: readonly Duplicate[], known: readonly KnownInstruction[]): { repeats: Repeat[]; duplicates: Duplicate[] } {
  const byName = new Map(known.map((k) => [k.name, k.instruction]));
  const repeats: Repeat[] = [];
  const others: Duplicate[] = [];
  for (const d of duplicates) {
    if (d.earlier === undefined) others.push(d);
    else repeats.push({ instruction: d.instruction, ...d.earlier, of: byName.get(d.of) ?? d.of, similarity: d.similarity });
  }
  return { repeats, duplicates: others };
}
