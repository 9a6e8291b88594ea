/**
 * TEST DOUBLE support: what the apps' seeds (apps/<slug>/seeds.ts) share. A seed is a template
 * the scripted task-generator double writes new tasks from, and reads its own tasks back with
 * (doubles/scripted-models/generated-tasks.ts).
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

export interface Template {
  /** Writes an instruction from random picks; undefined when the start state does not allow it. */
  write(pick: <T>(options: readonly T[]) => T, context: TemplateContext): TemplateTask | undefined;
  /** Reads an instruction this template wrote back into its task; undefined for others. */
  read(instruction: string, context: TemplateContext): TemplateTask | undefined;
}

/** `text` as a regular expression matching it literally. */
export const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A regular-expression group matching any one of `options` literally. */
export const oneOf = (options: readonly string[]): string => `(${options.map(escape).join('|')})`;

/**
 * Templates of the apps only a ScienceBoard VM runs, whose reference policy is the stop alone
 * (apps/stop-reference.ts): questions whose answer follows from the instruction (a date, a sum),
 * settings the agent changes and then says DONE, and tasks the scripted planner has no plan for.
 */
export const fixed = (instruction: string, ans: string): Template => ({
  write: () => ({ instruction, ans }),
  read: (text) => (text === instruction ? { instruction, ans } : undefined),
});
export const unplanned = (instructions: readonly string[]): Template => ({
  write: (pick) => ({ instruction: pick(instructions) }),
  read: (instruction) => (instructions.includes(instruction) ? { instruction } : undefined),
});
/** A question "what is a+b" asked in an app's own words, answered with the sum. */
export const sum = (phrase: (a: number, b: number) => string, pattern: RegExp): Template => ({
  write: (pick) => {
    const [a, b] = [pick([12, 25, 37, 48, 150, 365]), pick([3, 7, 11, 30, 99])];
    return { instruction: phrase(a, b), ans: `ANS ${a + b}` };
  },
  read: (instruction) => {
    const m = pattern.exec(instruction);
    return m === null ? undefined : { instruction, ans: `ANS ${Number(m[1]) + Number(m[2])}` };
  },
});
