/**
 * OpenRLHF's remote reward protocol as OpenRLHF 0.11 really speaks it (docs/formats.md, "OpenRLHF"). The project
 * speaks 0.11.2, what `pip install "openrlhf==0.11.*"` installs; the 0.11.0, 0.11.1 and 0.11.2 wheels
 * were read (openrlhf/utils/agent.py, SingleTurnAgentExecutor; trainer/ppo_utils/samples_generator.py,
 * experience_maker.py, experience.py) and 0.11.2's own code runs against the reward service in
 * test/training/real-openrlhf.test.ts:
 * - every vLLM engine posts `{"query": [...], "prompts": [...], "labels": [...]}` after each single
 *   generation, so the lists hold one sample. With several URLs, 0.11.2 sends each sample to the
 *   next URL in turn (each engine keeps its own rotation) and sends no empty lists, so every reward
 *   server sees different samples and keeps its own cache; 0.11.1 posts every sample to the first
 *   URL only; 0.11.0 posted it to the first and empty lists to the others. Empty lists are still
 *   answered with empty lists. No images, no ids.
 * - `query` is the tokenizer's decoding of prompt + response token ids with the special tokens kept:
 *   the chat-templated prompt with every image placeholder expanded into one `<|image_pad|>` per
 *   vision token, then the sampled reply and its end token (`<|im_end|>`). `prompts` is the
 *   templated prompt before tokenization (one `<|image_pad|>` per image); `labels` the raw label.
 * - the answer is `{"rewards": [...], "scores": [...], "extra_logs": {name: [...]}}`. OpenRLHF makes a
 *   tensor of each value as Python's json module read it, so a whole number written `0` becomes an
 *   int64 tensor (0.11.0 and 0.11.1 then fail in group_norm: "std and var only support floating
 *   point"): every number is written as a float (`0.0`, rewardResponseJson). It merges extra_logs
 *   over a micro batch and its replay buffer splits them by batch size, so every answer carries the
 *   same names (EXTRA_LOG_NAMES, 0 where a name does not apply); a name missing from one answer
 *   fails the split ("Size of info[primitive] (1) does not match batch_size (2)"). Explanations go
 *   into `errors`, a field OpenRLHF ignores.
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
const END_TOKENS = ['<|im_end|>', '<|endoftext|>'];

/**
 * `text` without the run of end tokens (and the whitespace after it) it ends in, if it does. One
 * pass from the end: a pattern such as /(?:<\|im_end\|>)+\s*$/ is tried from every position
 * and takes quadratic time on many end tokens followed by anything else.
 */
export function withoutEndTokens(text: string): string {
  const end = text.trimEnd().length;
  let cut = end;
  for (;;) {
    const token = END_TOKENS.find((t) => text.endsWith(t, cut));
    if (token === undefined) break;
    cut -= token.length;
  }
  return cut === end ? text : text.slice(0, cut);
}

/**
 * The sampled reply: what `query` holds after `prompt`, image placeholders counted once, without
 * the end-of-turn token. A query that does not continue its prompt cannot be scored.
 */
export function sampledResponse(query: string, prompt: string): { readonly ok: true; readonly text: string } | { readonly ok: false; readonly reason: string } {
  const collapsedQuery = collapsePads(query);
  const collapsedPrompt = collapsePads(prompt);
  if (!collapsedQuery.startsWith(collapsedPrompt)) return { ok: false, reason: 'the query does not begin with its prompt (image placeholders aside)' };
  return { ok: true, text: withoutEndTokens(collapsedQuery.slice(collapsedPrompt.length)) };
}

/**
 * The numeric logs every answer carries, each in every answer (0 where it does not apply):
 * - `type_match`: 1 when the action the sample led to has the label action's type;
 * - `primitive`: 1 when the planner ended the episode itself (ANS, DONE, FAIL), scored without the executor;
 * - `unparsable`: the planner's or the executor's output could not be parsed;
 * - `bad_label`, `bad_query`: the label (or the trajectory it names) or the query could not be read;
 * - `executor_failed`, `timed_out`: the executor failed, or no reward was ready by the deadline;
 * - `internal_error`: the scorer itself failed.
 * Each failure flag is also a reason of the service's failures counter.
 */
export const EXTRA_LOG_NAMES = ['type_match', 'primitive', 'unparsable', 'bad_label', 'bad_query', 'executor_failed', 'timed_out', 'internal_error'] as const;
export type ExtraLogName = (typeof EXTRA_LOG_NAMES)[number];

/** One sample's outcome: reward in [0, 2], score in [0, 1], the logs that apply to it, and why it failed, if it did. */
export interface SampleReward {
  readonly reward: number;
  readonly score: number;
  readonly logs: Readonly<Partial<Record<ExtraLogName, number>>>;
  readonly error?: string;
}

export interface RewardResponse {
  readonly rewards: number[];
  readonly scores: number[];
  /** One number per sample for every name of EXTRA_LOG_NAMES (0 where a sample did not log it). */
  readonly extra_logs: Record<ExtraLogName, number[]>;
  /** Why each sample scored nothing, or null: for people and logs (OpenRLHF reads only the fields above). */
  readonly errors: Array<string | null>;
}

export function rewardResponse(results: readonly SampleReward[]): RewardResponse {
  return {
    rewards: results.map((r) => r.reward),
    scores: results.map((r) => r.score),
    extra_logs: Object.fromEntries(EXTRA_LOG_NAMES.map((name) => [name, results.map((r) => r.logs[name] ?? 0)])) as Record<ExtraLogName, number[]>,
    errors: results.map((r) => r.error ?? null),
  };
}

/** A number as JSON that Python's json module reads as a float: a whole number keeps a decimal point (0 is written 0.0). */
export function floatJson(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`${value}: JSON has no such number`);
  const text = JSON.stringify(value);
  return /[.eE]/.test(text) ? text : `${text}.0`;
}

const floatList = (values: readonly number[]): string => `[${values.map(floatJson).join(',')}]`;

/** The answer as JSON with every reward, score and log value a float, so that OpenRLHF's tensors of them are float32. */
export function rewardResponseJson(response: RewardResponse): string {
  const logs = Object.entries(response.extra_logs).map(([name, values]) => `${JSON.stringify(name)}:${floatList(values)}`);
  return `{"rewards":${floatList(response.rewards)},"scores":${floatList(response.scores)},"extra_logs":{${logs.join(',')}},"errors":${JSON.stringify(response.errors)}}`;
}

/**
 * What the reward service logs about the samples it answers 0 for a reason (a malformed planner
 * reply, a thought the executor cannot ground, a timeout): the first of each reason with its
 * explanation, then one line each time that reason's count reaches a power of ten, with the
 * latest explanation. A GRPO run scores thousands of samples 0 as a matter of course (the small
 * planner's GRPO test about 4,200 of 6,624), and a line for each buried the worker's log; the
 * counts by reason are the metric coda_reward_failures_total. Returns the line to log, if any.
 */
export function zeroRewardLog(): (reasons: readonly string[], error: string) => string | undefined {
  const counts = new Map<string, number>();
  return (reasons, error) => {
    const reason = reasons.length === 0 ? 'unknown' : [...reasons].sort().join(', ');
    const count = (counts.get(reason) ?? 0) + 1;
    counts.set(reason, count);
    if (count === 1) return `reward service: reward 0 (${error})`;
    const power = 10 ** Math.round(Math.log10(count));
    return count === power ? `reward service: ${count} samples answered 0 for ${reason} so far (the latest: ${error})` : undefined;
  };
}
