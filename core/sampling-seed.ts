import { hashText } from './prng';
import type { AttemptRef } from './keys';

/**
 * The sampling seed of one rollout step's model requests (vLLM honours a request's `seed`, and the
 * scripted models key their draws by it). It is keyed by the task, the attempt and the step — not
 * by the run, the planner or the activity attempt — so:
 * - a retried decision asks for the same sample, and a rerun samples what the first run did;
 * - every planner meets the same draws at the same step of the same attempt, so two planners'
 *   evaluations are compared on common random numbers: a difference between them comes from the
 *   planners, not from which draws each happened to get;
 * - the attempts of one task, and the steps of one attempt, draw independently.
 * A positive 31-bit integer, as every OpenAI-compatible server accepts.
 */
export const samplingSeed = (ref: Pick<AttemptRef, 'software' | 'task' | 'attempt'>, step: number): number =>
  hashText(`${ref.software}\u241f${ref.task}\u241f${ref.attempt}\u241f${step}`) & 0x7fffffff;
