import { oneOf, unplanned, type Template } from '../seeds';

/**
 * TEST DOUBLE support: ChimeraX's seeds for the scripted task-generator double; their plans are the stop alone (apps/stop-reference.ts).
 */

const STRUCTURES = ['2olx', '3ppd', '1dns', '4tut', '102l'] as const;
const STYLES = ['bychain', 'byhetero', 'bypolymer'] as const;

export const SEEDS: readonly Template[] = [
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
