import { type Template } from '../seeds';

/**
 * TEST DOUBLE support: TeXstudio's seeds for the scripted task-generator double: edits and questions about the document the task opens, with the `ans` plan reference.ts replays, and tasks it has no plan for.
 */

/** Plain words of a LaTeX document (not command names), at least four letters, in order of appearance. */
const wordsOf = (document: string): string[] => [...new Set([...document.matchAll(/(?<![\\A-Za-z])[A-Za-z]{4,}(?![A-Za-z])/g)].map((m) => m[0]))];
const occurrences = (document: string, text: string): number => document.split(text).length - 1;
const NEW_WORDS = ['lemma', 'axiom', 'method', 'result', 'figure'] as const;
const TEX_UNPLANNED = [
  'Insert a table of contents at the start of the document open in TeXstudio and save it.',
  'Compile the document open in TeXstudio and show its PDF preview.',
] as const;

export const SEEDS: readonly Template[] = [
  {
    write: (pick, { document }) => {
      if (document === undefined || wordsOf(document).length === 0) return undefined;
      const word = pick(wordsOf(document));
      const replacement = pick(NEW_WORDS.filter((w) => !document.includes(w)));
      if (replacement === undefined) return undefined;
      return { instruction: `In the document open in TeXstudio, replace every occurrence of the text '${word}' with '${replacement}', then save the file.`, ans: `${word} -> ${replacement}` };
    },
    read: (instruction) => {
      const m = /^In the document open in TeXstudio, replace every occurrence of the text '([A-Za-z]+)' with '([A-Za-z]+)', then save the file\.$/.exec(instruction);
      return m === null ? undefined : { instruction, ans: `${m[1]} -> ${m[2]}` };
    },
  },
  {
    write: (pick, { document }) => {
      if (document === undefined || wordsOf(document).length === 0) return undefined;
      const word = pick(wordsOf(document));
      return { instruction: `How many times does the text '${word}' occur in the document open in TeXstudio? Submit the number as your answer.`, ans: `ANS ${occurrences(document, word)}` };
    },
    read: (instruction, { document }) => {
      const m = /^How many times does the text '([A-Za-z]+)' occur in the document open in TeXstudio\? Submit the number as your answer\.$/.exec(instruction);
      return m === null || document === undefined ? undefined : { instruction, ans: `ANS ${occurrences(document, m[1] as string)}` };
    },
  },
  {
    write: (pick) => ({ instruction: pick(TEX_UNPLANNED) }),
    read: (instruction) => ((TEX_UNPLANNED as readonly string[]).includes(instruction) ? { instruction } : undefined),
  },
];
