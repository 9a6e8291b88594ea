/**
 * TEST DOUBLE support: OpenRLHF's remote reward client, as the trainer double calls the reward
 * service. Checked against OpenRLHF/OpenRLHF openrlhf/utils/agent.py
 * (SingleTurnAgentExecutor._fetch_rewards_via_http, version 0.11.0, commit 3c3be62): after each
 * generation the samples are split across the URLs in contiguous shards of ceil(n / servers)
 * (so with one sample the first server gets it and the others get empty lists), each shard is
 * POSTed as JSON with a 180 s total timeout, tried 5 times with a 1 s pause, any non-2xx counting
 * as a failure; only the first server's answer is used.
 */

export interface RewardAnswer {
  readonly rewards?: unknown;
  readonly scores?: unknown;
  readonly extra_logs?: Record<string, unknown>;
}

export interface RewardClientOptions {
  readonly timeoutMs?: number;
  readonly tries?: number;
  readonly pauseMs?: number;
}

async function post(url: string, payload: unknown, options: Required<RewardClientOptions>): Promise<RewardAnswer> {
  let last = '';
  for (let attempt = 0; attempt < options.tries; attempt++) {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(payload),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      if (response.ok) return (await response.json()) as RewardAnswer;
      last = `${response.status} ${await response.text()}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
  }
  throw new Error(`Request error for ${options.tries} times, returning None. Please check the API server. (${url}: ${last})`);
}

/** The answers of every server for these samples, in URL order (OpenRLHF reads the first). */
export async function fetchRewards(
  urls: readonly string[],
  samples: { readonly queries: readonly string[]; readonly prompts: readonly string[]; readonly labels: readonly string[] },
  options: RewardClientOptions = {},
): Promise<RewardAnswer[]> {
  const settings = { timeoutMs: options.timeoutMs ?? 180_000, tries: options.tries ?? 5, pauseMs: options.pauseMs ?? 1_000 };
  const shard = Math.ceil(samples.queries.length / urls.length);
  return Promise.all(
    urls.map((url, i) =>
      post(url, { query: samples.queries.slice(i * shard, (i + 1) * shard), prompts: samples.prompts.slice(i * shard, (i + 1) * shard), labels: samples.labels.slice(i * shard, (i + 1) * shard) }, settings),
    ),
  );
}
