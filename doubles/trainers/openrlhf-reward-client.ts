import { setTimeout as sleep } from 'node:timers/promises';
/**
 * TEST DOUBLE support: OpenRLHF's remote reward client, as the trainer double calls the reward
 * service. The project speaks OpenRLHF 0.11.2; the 0.11.0, 0.11.1 and 0.11.2 wheels were read
 * (openrlhf/utils/agent.py, SingleTurnAgentExecutor._fetch_rewards_via_http) and 0.11.2's own client
 * runs against the reward service in test/training/real-openrlhf.test.ts. Each vLLM engine's
 * executor posts after every generation, so one sample per call:
 * - 0.11.2 (this client): the samples are split in contiguous shards of ceil(n / servers), each
 *   shard to the next URL of a rotation the executor keeps across calls (itertools.cycle), and no
 *   request is sent for an empty shard: one sample per call goes to the next server in turn, so with
 *   several URLs each server sees different samples (and keeps its own cache);
 * - 0.11.1: shards by URL position with no empty shards sent: every sample goes to the first URL;
 * - 0.11.0: shards by URL position, empty ones sent too: the first URL gets the sample, the others
 *   empty lists.
 * Each request is JSON with a 180 s total timeout, tried 5 times with a 1 s pause, any non-2xx
 * counting as a failure; the answers come back in shard order. The reward service's token goes as
 * HTTP Basic's password, as the aiohttp session OpenRLHF posts with sends the credentials its
 * launcher puts into the URLs (infra/trainers/openrlhf_grpo.py; test/training/real-openrlhf-token.test.ts).
 */

export interface RewardAnswer {
  readonly rewards?: unknown;
  readonly scores?: unknown;
  readonly extra_logs?: Record<string, unknown>;
}

export interface RewardClientOptions {
  /** The reward service's token, sent as Basic's password (the trainer's launcher reads it from CODA_REWARD_TOKEN). */
  readonly token?: string;
  readonly timeoutMs?: number;
  readonly tries?: number;
  readonly pauseMs?: number;
}

type Settings = Required<Omit<RewardClientOptions, 'token'>> & Pick<RewardClientOptions, 'token'>;

export interface RewardSamples {
  readonly queries: readonly string[];
  readonly prompts: readonly string[];
  readonly labels: readonly string[];
}

/** The Authorization header aiohttp sends for a URL whose password is the token (the user name is only a label). */
const basicAuth = (token: string | undefined): Record<string, string> =>
  token === undefined ? {} : { authorization: `Basic ${Buffer.from(`openrlhf:${token}`).toString('base64')}` };

async function post(url: string, payload: unknown, options: Settings): Promise<RewardAnswer> {
  const headers = basicAuth(options.token);
  let last = '';
  for (let attempt = 0; attempt < options.tries; attempt++) {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(payload),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      if (response.ok) return (await response.json()) as RewardAnswer;
      last = `${response.status} ${await response.text()}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(options.pauseMs);
  }
  throw new Error(`Request error for ${options.tries} times, returning None. Please check the API server. (${url}: ${last})`);
}

/** One vLLM engine's reward client: its rotation over the URLs lasts across calls. */
export class RewardClient {
  private next = 0;
  private readonly settings: Settings;

  constructor(
    private readonly urls: readonly string[],
    options: RewardClientOptions = {},
  ) {
    if (urls.length === 0) throw new Error('no reward URL');
    this.settings = { token: options.token, timeoutMs: options.timeoutMs ?? 180_000, tries: options.tries ?? 5, pauseMs: options.pauseMs ?? 1_000 };
  }

  /** The answers for these samples, one per non-empty shard, in shard order (OpenRLHF reads the first). */
  fetch(samples: RewardSamples): Promise<RewardAnswer[]> {
    const shard = Math.ceil(samples.queries.length / this.urls.length);
    const calls: Array<Promise<RewardAnswer>> = [];
    for (let i = 0; i < this.urls.length && i * shard < samples.queries.length; i++) {
      const url = this.urls[this.next] as string;
      this.next = (this.next + 1) % this.urls.length;
      const part = <T>(list: readonly T[]): T[] => list.slice(i * shard, (i + 1) * shard);
      calls.push(post(url, { query: part(samples.queries), prompts: part(samples.prompts), labels: part(samples.labels) }, this.settings));
    }
    return Promise.all(calls);
  }
}
