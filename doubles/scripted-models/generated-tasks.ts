/**
 * TEST DOUBLE support. The tasks the scripted task-generator double writes, and how the scripted
 * planner and judge doubles read them back. A real generator writes free text; this one writes
 * instructions from templates, each with the reference plan (in ScienceBoard's `ans` notation, the
 * one core/policies replays) that solves it, so that the doubles downstream know the plan the way
 * a person who wrote the task would: the planner double can attempt the task (and botch it at its
 * error rate), the judge double can tell whether a trajectory followed it. Some templates ask for
 * things the scripted planner has no plan for: it answers FAIL, and those rollouts fail for real.
 */

export interface TemplateTask {
  readonly instruction: string;
  /** ScienceBoard `ans` lines that solve it; undefined when no scripted plan exists. */
  readonly ans?: string;
}

/** What the doubles know of where a generated task starts: the text of the document it shows, if any. */
export interface TemplateContext {
  readonly document?: string;
}

interface Template {
  /** Writes an instruction from random picks; undefined when the start state does not allow it. */
  write(pick: <T>(options: readonly T[]) => T, context: TemplateContext): TemplateTask | undefined;
  /** Reads an instruction this template wrote back into its task; undefined for others. */
  read(instruction: string, context: TemplateContext): TemplateTask | undefined;
}

const VARIABLES = ['p', 'q', 'r', 'v', 'w', 'total', 'area', 'result'] as const;
const VALUES = ['3^5+2', '7*8-5', 'root(144, 2)', '(2+3)*(4+5)', '2^10-1', 'log(100)/log(10)', '12/5+1', 'abs(-17)+3', 'factorial(6)', 'gcd(84, 36)'] as const;
const CURVES = ['x^2-3', 'x^3-2*x', 'sin(x)*2', 'cos(x)+x/2', 'x^2/4+1', 'abs(x)-2', 'exp(x/3)', 'ln(x^2+1)'] as const;
const SURFACES = ['x^2-y^2', 'sin(x)*cos(y)', 'x*y/4', '(x^2+y^2)/5', 'root(x^2+y^2, 2)'] as const;
const PRODUCTS: ReadonlyArray<readonly [number, number, number]> = [
  [12, 7, 5],
  [23, 4, 9],
  [15, 15, 1],
  [8, 9, 10],
  [31, 3, 2],
  [6, 17, 4],
];
const UNPLANNED = [
  'Change the resolution of the 2D plot to Very Fine in KAlgebra.',
  'Open the Dictionary tab of KAlgebra and look up the function gcd.',
  'Export the calculator log of KAlgebra to a file named log.html in the home folder.',
  'Switch the 3D plot style of KAlgebra to Dots.',
] as const;

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const oneOf = (options: readonly string[]): string => `(${options.map(escape).join('|')})`;

const KALGEBRA: readonly Template[] = [
  {
    write: (pick) => {
      const name = pick(VARIABLES);
      const value = pick(VALUES);
      return { instruction: `In the KAlgebra calculator, store the value of ${value} in a variable named ${name}.`, ans: `${name} := ${value}` };
    },
    read: (instruction) => {
      const m = new RegExp(`^In the KAlgebra calculator, store the value of ${oneOf(VALUES)} in a variable named ${oneOf(VARIABLES)}\\.$`).exec(instruction);
      return m === null ? undefined : { instruction, ans: `${m[2]} := ${m[1]}` };
    },
  },
  {
    write: (pick) => {
      const curve = pick(CURVES);
      return { instruction: `Plot the function y = ${curve} in KAlgebra's 2D Graph.`, ans: `x->${curve}` };
    },
    read: (instruction) => {
      const m = new RegExp(`^Plot the function y = ${oneOf(CURVES)} in KAlgebra's 2D Graph\\.$`).exec(instruction);
      return m === null ? undefined : { instruction, ans: `x->${m[1]}` };
    },
  },
  {
    write: (pick) => {
      const surface = pick(SURFACES);
      return { instruction: `Plot the surface z = ${surface} in KAlgebra's 3D Graph.`, ans: `(x, y)->${surface}` };
    },
    read: (instruction) => {
      const m = new RegExp(`^Plot the surface z = ${oneOf(SURFACES)} in KAlgebra's 3D Graph\\.$`).exec(instruction);
      return m === null ? undefined : { instruction, ans: `(x, y)->${m[1]}` };
    },
  },
  {
    write: (pick) => {
      const [a, b, c] = pick(PRODUCTS);
      return { instruction: `Use KAlgebra to compute ${a}*${b}+${c} and submit the result as your answer.`, ans: `${a}*${b}+${c}\nANS ${a * b + c}` };
    },
    read: (instruction) => {
      const m = /^Use KAlgebra to compute (\d+)\*(\d+)\+(\d+) and submit the result as your answer\.$/.exec(instruction);
      if (m === null) return undefined;
      const [a, b, c] = [Number(m[1]), Number(m[2]), Number(m[3])];
      return { instruction, ans: `${a}*${b}+${c}\nANS ${a * b + c}` };
    },
  },
  {
    write: (pick) => ({ instruction: pick(UNPLANNED) }),
    read: (instruction) => ((UNPLANNED as readonly string[]).includes(instruction) ? { instruction } : undefined),
  },
];

/** Plain words of a LaTeX document (not command names), at least four letters, in order of appearance. */
const wordsOf = (document: string): string[] => [...new Set([...document.matchAll(/(?<![\\A-Za-z])[A-Za-z]{4,}(?![A-Za-z])/g)].map((m) => m[0]))];
const occurrences = (document: string, text: string): number => document.split(text).length - 1;
const NEW_WORDS = ['lemma', 'axiom', 'method', 'result', 'figure'] as const;
const TEX_UNPLANNED = [
  'Insert a table of contents at the start of the document open in TeXstudio and save it.',
  'Compile the document open in TeXstudio and show its PDF preview.',
] as const;

const TEXSTUDIO: readonly Template[] = [
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

/**
 * Templates of the apps only a ScienceBoard VM runs, whose reference policy is the stop alone
 * (apps/stop-reference.ts): questions whose answer follows from the instruction (a date, a sum),
 * settings the agent changes and then says DONE, and tasks the scripted planner has no plan for.
 */
const fixed = (instruction: string, ans: string): Template => ({
  write: () => ({ instruction, ans }),
  read: (text) => (text === instruction ? { instruction, ans } : undefined),
});
const unplanned = (instructions: readonly string[]): Template => ({
  write: (pick) => ({ instruction: pick(instructions) }),
  read: (instruction) => (instructions.includes(instruction) ? { instruction } : undefined),
});
/** A question "what is a+b" asked in an app's own words, answered with the sum. */
const sum = (phrase: (a: number, b: number) => string, pattern: RegExp): Template => ({
  write: (pick) => {
    const [a, b] = [pick([12, 25, 37, 48, 150, 365]), pick([3, 7, 11, 30, 99])];
    return { instruction: phrase(a, b), ans: `ANS ${a + b}` };
  },
  read: (instruction) => {
    const m = pattern.exec(instruction);
    return m === null ? undefined : { instruction, ans: `ANS ${Number(m[1]) + Number(m[2])}` };
  },
});
const BODIES = ['Mars', 'Jupiter', 'Saturn', 'the Moon', 'Titan', 'Europa'] as const;
const STRUCTURES = ['2olx', '3ppd', '1dns', '4tut', '102l'] as const;
const STYLES = ['bychain', 'byhetero', 'bypolymer'] as const;

const CELESTIA: readonly Template[] = [
  {
    write: (pick) => ({ instruction: `In Celestia, travel to ${pick(BODIES)} and pause the time.`, ans: 'DONE' }),
    read: (instruction) => (new RegExp(`^In Celestia, travel to ${oneOf(BODIES)} and pause the time\\.$`).test(instruction) ? { instruction, ans: 'DONE' } : undefined),
  },
  sum((a, b) => `In Celestia, the time rate is ${a}x; what is it once raised by ${b}x? Submit the new rate as your answer.`, /^In Celestia, the time rate is (\d+)x; what is it once raised by (\d+)x\? Submit the new rate as your answer\.$/),
  unplanned(['Record a video of the Earth rotating in Celestia.', 'Show the constellation art of Orion in Celestia.']),
];
const CHIMERAX: readonly Template[] = [
  {
    write: (pick) => ({ instruction: `Open ${pick(STRUCTURES)} in ChimeraX and color it ${pick(STYLES)}.`, ans: 'DONE' }),
    read: (instruction) => (new RegExp(`^Open ${oneOf(STRUCTURES)} in ChimeraX and color it ${oneOf(STYLES)}\\.$`).test(instruction) ? { instruction, ans: 'DONE' } : undefined),
  },
  {
    write: (pick) => {
      const id = pick(STRUCTURES);
      return { instruction: `Open ${id} in ChimeraX and submit its PDB identifier in upper case as your answer.`, ans: `ANS ${id.toUpperCase()}` };
    },
    read: (instruction) => {
      const m = new RegExp(`^Open ${oneOf(STRUCTURES)} in ChimeraX and submit its PDB identifier in upper case as your answer\\.$`).exec(instruction);
      return m === null ? undefined : { instruction, ans: `ANS ${(m[1] ?? '').toUpperCase()}` };
    },
  },
  unplanned(['Render a movie of 4tut turning in ChimeraX.', 'Run a molecular dynamics simulation of 2olx in ChimeraX.']),
];
const GRASS: readonly Template[] = [
  fixed('In GRASS GIS, switch to the natural_earth_dataset location and show the countries map.', 'DONE'),
  sum((a, b) => `In GRASS GIS, a region spans ${a} cells plus ${b} cells of margin; how many cells is that? Submit the number as your answer.`, /^In GRASS GIS, a region spans (\d+) cells plus (\d+) cells of margin; how many cells is that\? Submit the number as your answer\.$/),
  unplanned(['Georeference a scanned map in GRASS GIS.', 'Publish the current map of GRASS GIS as a web map service.']),
];
const LEAN: readonly Template[] = [
  sum((a, b) => `In Lean 4, evaluate ${a} + ${b} with #eval in the open file and submit the result as your answer.`, /^In Lean 4, evaluate (\d+) \+ (\d+) with #eval in the open file and submit the result as your answer\.$/),
  unplanned(['Prove the Riemann hypothesis in Lean 4.', 'Port the open file of Lean 4 to Lean 3.']),
];

const TEMPLATES: Readonly<Record<string, readonly Template[]>> = { KAlgebra: KALGEBRA, TeXstudio: TEXSTUDIO, Celestia: CELESTIA, ChimeraX: CHIMERAX, GrassGIS: GRASS, Lean: LEAN };

/** Whether the generator double can write tasks for `software`. */
export const writesTasksFor = (software: string): boolean => TEMPLATES[software] !== undefined;

/** One new task of `software` (the generator double's output), from `random` in [0, 1). */
export function writeTask(software: string, random: () => number, context: TemplateContext = {}): TemplateTask {
  const templates = TEMPLATES[software];
  if (templates === undefined) throw new Error(`the task-generator double has no templates for ${software}`);
  const pick = <T>(options: readonly T[]): T => options[Math.floor(random() * options.length)] as T;
  for (;;) {
    const task = pick(templates).write(pick, context);
    if (task !== undefined) return task;
  }
}

/** The task behind an instruction the generator double wrote, with its plan; undefined for any other text. */
export function readTask(software: string, instruction: string, context: TemplateContext = {}): TemplateTask | undefined {
  for (const template of TEMPLATES[software] ?? []) {
    const task = template.read(instruction, context);
    if (task !== undefined) return task;
  }
  return undefined;
}
