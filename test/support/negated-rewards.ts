import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basicAuth } from '../../doubles/trainers/openrlhf-reward-client';

/**
 * The wrong-reward control of a GRPO test: an HTTP proxy in front of a reward service that answers
 * every sample with its reward negated. A trainer given its URL as the reward URL is pushed away
 * from every reply the service rewards. It forwards the trainer's body as it is (OpenRLHF's
 * protocol: core/remote-reward.ts), adds the target's credentials (a URL's user:password, as the
 * trainers send them) and counts the samples it negated, so a test can check every sample of the
 * run went through it.
 */
export interface NegatedRewards {
  /** The URL to give the trainer. */
  readonly url: string;
  /** Samples answered with a negated reward so far. */
  readonly samples: () => number;
  /** Where to forward: the reward service's URL (its trainerUrl, credentials included). */
  target: string | undefined;
  close(): Promise<void>;
}

export async function startNegatedRewards(): Promise<NegatedRewards> {
  let negated = 0;
  const proxy: NegatedRewards = { url: '', samples: () => negated, target: undefined, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (proxy.target === undefined) throw new Error('the negating proxy has no target yet');
        const { url, headers } = basicAuth(proxy.target);
        const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: Buffer.concat(chunks) });
        const text = await response.text();
        if (!response.ok) {
          res.writeHead(response.status, { 'content-type': response.headers.get('content-type') ?? 'text/plain' }).end(text);
          return;
        }
        const body = JSON.parse(text) as { rewards: number[] } & Record<string, unknown>;
        negated += body.rewards.length;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...body, rewards: body.rewards.map((r) => -r) }));
      })().catch((err: Error) => res.writeHead(502, { 'content-type': 'text/plain' }).end(`negating proxy: ${err.message}`));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(proxy, {
    url: `http://127.0.0.1:${port}/get_reward`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
