import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An HTTP proxy in front of a reward service, given to a trainer as its reward URL. It forwards the
 * trainer's body as it is (OpenRLHF's protocol: core/remote-reward.ts) with the trainer's own
 * Authorization header (the token the trainer was given, or none) and counts the samples answered.
 * - `negate`: the wrong-reward control of a GRPO test. Every sample is answered with its reward
 *   negated, so a trainer given this URL is pushed away from every reply the service rewards.
 * - `hold`: the trainer's requests wait until `release()`, so a test can look at the trainer while
 *   it certainly runs (`held` resolves once the first request came).
 */
export interface RewardProxy {
  /** The URL to give the trainer. */
  readonly url: string;
  /** Samples answered so far. */
  readonly samples: () => number;
  /** The Authorization headers the trainer's requests came with (undefined: none). */
  readonly authorizations: ReadonlyArray<string | undefined>;
  /** Where to forward: the reward service's URL. */
  target: string | undefined;
  /** Resolves once the first request came. */
  readonly held: Promise<void>;
  release(): void;
  close(): Promise<void>;
}

export interface RewardProxyOptions {
  readonly negate?: boolean;
  readonly hold?: boolean;
}

export async function startRewardProxy(options: RewardProxyOptions = {}): Promise<RewardProxy> {
  let answered = 0;
  let arrived!: () => void;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (arrived = resolve));
  const released = options.hold === true ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
  if (options.hold !== true) release = () => undefined;
  const authorizations: Array<string | undefined> = [];
  const proxy: RewardProxy = { url: '', samples: () => answered, authorizations, target: undefined, held, release: () => release(), close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        authorizations.push(req.headers.authorization);
        arrived();
        await released;
        if (proxy.target === undefined) throw new Error('the reward proxy has no target yet');
        const authorization: Record<string, string> = req.headers.authorization === undefined ? {} : { authorization: req.headers.authorization };
        const response = await fetch(proxy.target, { method: 'POST', headers: { 'content-type': 'application/json', ...authorization }, body: Buffer.concat(chunks) });
        const text = await response.text();
        if (!response.ok) {
          res.writeHead(response.status, { 'content-type': response.headers.get('content-type') ?? 'text/plain' }).end(text);
          return;
        }
        const body = JSON.parse(text) as { rewards: number[] } & Record<string, unknown>;
        answered += body.rewards.length;
        const rewards = options.negate === true ? body.rewards.map((r) => -r) : body.rewards;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...body, rewards }));
      })().catch((err: Error) => res.writeHead(502, { 'content-type': 'text/plain' }).end(`reward proxy: ${err.message}`));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(proxy, {
    url: `http://127.0.0.1:${port}/get_reward`,
    close: () =>
      new Promise<void>((resolve) => {
        release();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}
