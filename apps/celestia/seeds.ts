import { oneOf, sum, unplanned, type Template } from '../seeds';

/**
 * TEST DOUBLE support: Celestia's seeds for the scripted task-generator double; their plans are the stop alone (apps/stop-reference.ts).
 */

const BODIES = ['Mars', 'Jupiter', 'Saturn', 'the Moon', 'Titan', 'Europa'] as const;
export const SEEDS: readonly Template[] = [
  {
    write: (pick) => ({ instruction: `In Celestia, travel to ${pick(BODIES)} and pause the time.`, ans: 'DONE' }),
    read: (instruction) => (new RegExp(`^In Celestia, travel to ${oneOf(BODIES)} and pause the time\\.$`).test(instruction) ? { instruction, ans: 'DONE' } : undefined),
  },
  sum((a, b) => `In Celestia, the time rate is ${a}x; what is it once raised by ${b}x? Submit the new rate as your answer.`, /^In Celestia, the time rate is (\d+)x; what is it once raised by (\d+)x\? Submit the new rate as your answer\.$/),
  unplanned(['Record a video of the Earth rotating in Celestia.', 'Show the constellation art of Orion in Celestia.']),
];
