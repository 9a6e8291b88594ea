/**
 * OpenRLHF's remote reward protocol as OpenRLHF 0.11 really speaks it (REFERENCE.md §5; read in
 * OpenRLHF/OpenRLHF, openrlhf/utils/agent.py, SingleTurnAgentExecutor, and
 * openrlhf/trainer/ppo_utils/samples_generator.py, version 0.11.0, commit 3c3be62):
 * - every vLLM engine worker POSTs `{"query": [...], "prompts": [...], "labels": [...]}` after each
 *   single generation, so the lists hold one sample; with several URLs the sample goes to the first
 *   and the others get empty lists (and must answer empty lists). No images, no ids.
 * - `query` is the tokenizer's decoding of prompt + response token ids with the special tokens kept:
 *   the chat-templated prompt with every image placeholder expanded into one `<|image_pad|>` per
 *   vision token, then the sampled reply and its end token (`<|im_end|>`). `prompts` is the
 *   templated prompt before tokenization (one `<|image_pad|>` per image); `labels` the raw label.
 * - the answer is `{"rewards": [...], "scores": [...], "extra_logs": {name: value}}`; OpenRLHF turns
 *   every extra_logs value into a tensor, so the values must be numbers (a text there would break
 *   the training step). Explanations go into `errors`, a field OpenRLHF ignores.
 */

export interface RewardSample {
  readonly query: string;
  readonly prompt: string;
  readonly label: string;
}

export type RewardRequestParse = { readonly ok: true; readonly samples: RewardSample[] } | { readonly ok: false; readonly reason: string };

/** The three parallel lists of a request, checked field by field. */
export function parseRewardRequest(body: unknown): RewardRequestParse {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, reason: 'body: expected a JSON object with query, prompts and labels' };
  const fields = body as Record<string, unknown>;
  const lists: Record<'query' | 'prompts' | 'labels', string[]> = { query: [], prompts: [], labels: [] };
  for (const name of ['query', 'prompts', 'labels'] as const) {
    const value = fields[name];
    if (!Array.isArray(value)) return { ok: false, reason: `${name}: expected a list of strings` };
    const bad = value.findIndex((item) => typeof item !== 'string');
    if (bad !== -1) return { ok: false, reason: `${name}[${bad}]: expected a string` };
    lists[name] = value as string[];
  }
  if (lists.prompts.length !== lists.query.length || lists.labels.length !== lists.query.length) {
    return { ok: false, reason: `query, prompts and labels must have one entry per sample (got ${lists.query.length}, ${lists.prompts.length}, ${lists.labels.length})` };
  }
  return { ok: true, samples: lists.query.map((query, i) => ({ query, prompt: lists.prompts[i] as string, label: lists.labels[i] as string })) };
}

/** Qwen2-VL's vision placeholders: one in the templated prompt, one per vision token in the query. */
const PAD_RUNS = /(<\|image_pad\|>)+|(<\|video_pad\|>)+/g;
const collapsePads = (text: string): string => text.replace(PAD_RUNS, (_run, image?: string) => (image !== undefined ? '<|image_pad|>' : '<|video_pad|>'));

/** End-of-turn tokens the decoded response ends in. */
const TRAILING_END_TOKENS = /(?:<\|im_end\|>|<\|endoftext\|>)+\s*$/;

/**
 * The sampled reply: what `query` holds after `prompt`, image placeholders counted once, without
 * the end-of-turn token. A query that does not continue its prompt cannot be scored.
 */
export function sampledResponse(query: string, prompt: string): { readonly ok: true; readonly text: string } | { readonly ok: false; readonly reason: string } {
  const collapsedQuery = collapsePads(query);
  const collapsedPrompt = collapsePads(prompt);
  if (!collapsedQuery.startsWith(collapsedPrompt)) return { ok: false, reason: 'the query does not begin with its prompt (image placeholders aside)' };
  return { ok: true, text: collapsedQuery.slice(collapsedPrompt.length).replace(TRAILING_END_TOKENS, '') };
}

/** One sample's outcome: reward in [0, 2], score in [0, 1], numeric logs, and why it failed, if it did. */
export interface SampleReward {
  readonly reward: number;
  readonly score: number;
  readonly logs: Readonly<Record<string, number>>;
  readonly error?: string;
}

export interface RewardResponse {
  readonly rewards: number[];
  readonly scores: number[];
  /** One number per sample for every name any sample logged (0 where a sample did not). */
  readonly extra_logs: Record<string, number[]>;
  /** Why each sample scored nothing, or null: for people and logs (OpenRLHF reads only the fields above). */
  readonly errors: Array<string | null>;
}

export function rewardResponse(results: readonly SampleReward[]): RewardResponse {
  const names = [...new Set(results.flatMap((r) => Object.keys(r.logs)))].sort();
  return {
    rewards: results.map((r) => r.reward),
    scores: results.map((r) => r.score),
    extra_logs: Object.fromEntries(names.map((name) => [name, results.map((r) => r.logs[name] ?? 0)])),
    errors: results.map((r) => r.error ?? null),
  };
}
