import { hashText, keyedRandom } from '../../core/prng';
import type { ChatRequest } from '../openai-server';

/**
 * TEST DOUBLE support: the doubles' randomness. Every draw comes from a generator keyed by what it
 * decides and the run seed (temporal.yaml's dev.scriptedModels.seed, CODA_SEED in the tests'
 * environment), never from a stream shared across calls: the same seed and inputs give the same
 * draws whatever order concurrent requests arrive in (core/prng.ts keyedRandom).
 */

export { hashText, keyedRandom };

/**
 * What a request's draws are keyed by, as vLLM's sampling is: its `seed` when it sends one (the
 * rollout sends a seed per step, core/sampling-seed.ts) — the same seed draws the same numbers
 * whatever the model, as a seeded generator does — else its whole text (a request without a seed
 * gets the same reply to the same text).
 */
export function requestKey(request: ChatRequest, texts: readonly string[]): string {
  return request.seed !== undefined ? `seed ${request.seed}` : `text ${hashText(texts.join('\n'))}`;
}
