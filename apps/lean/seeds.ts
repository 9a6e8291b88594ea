import { sum, unplanned, type Template } from '../seeds';

/**
 * TEST DOUBLE support: Lean 4's seeds for the scripted task-generator double; their plans are the stop alone (apps/stop-reference.ts).
 */

export const SEEDS: readonly Template[] = [
  sum((a, b) => `In Lean 4, evaluate ${a} + ${b} with #eval in the open file and submit the result as your answer.`, /^In Lean 4, evaluate (\d+) \+ (\d+) with #eval in the open file and submit the result as your answer\.$/),
  unplanned(['Prove the Riemann hypothesis in Lean 4.', 'Port the open file of Lean 4 to Lean 3.']),
];
