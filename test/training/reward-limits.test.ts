import assert from 'node:assert/strict';
import { rewardServiceMetrics, type RewardServiceMetrics } from '../../activities/metrics';
import type { RewardScorer } from '../../activities/training/reward';
import { startRewardService, type RewardService, type RewardServiceLimits } from '../../activities/training/reward-service';
import { freePort } from '../stack';

/**
 * What one request may cost the reward service (issue 29, items 2 and 15), against a scorer that
 * answers 0 at once or when the test lets it: the mechanisms, never a time. A body or a query over
 * its limit is answered 413 and a request over the limit in flight 503, before anything is scored.
 */

const LIMITS: RewardServiceLimits = { maxQueryChars: 100 };

/** A scorer that counts its calls and holds each answer until `release` (at once when `gated` is false). */
function testScorer(gated: boolean) {
  let release!: () => void;
  const open = new Promise<void>((resolve) => (release = resolve));
  const calls: Array<() => void> = [];
  let called = 0;
  const scorer: RewardScorer = async () => {
    called += 1;
    calls.splice(0).forEach((notify) => notify());
    if (gated) await open;
    return { reward: 0, score: 0, logs: {}, cacheable: false };
  };
  /** Resolves once the scorer has been called `count` times in all. */
  const calledTimes = (count: number): Promise<void> => new Promise((resolve) => {
    const check = (): void => (called >= count ? resolve() : void calls.push(check));
    check();
  });
  return { scorer, release, calledTimes, called: () => called };
}

async function outcomes(metrics: RewardServiceMetrics): Promise<Record<string, number>> {
  return Object.fromEntries((await metrics.requests.get()).values.map((v) => [String(v.labels.outcome), v.value]));
}

const sample = (query: string) => JSON.stringify({ query: [query], prompts: [''], labels: ['{}'] });

async function post(url: string, body: string | ReadableStream<Uint8Array>): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, ...(body instanceof ReadableStream ? { duplex: 'half' } : {}) } as RequestInit);
  return { status: response.status, body: await response.json(), headers: response.headers };
}

describe('reward service: what one request may cost', function () {
  this.timeout(60_000);
  const services: RewardService[] = [];
  const start = async (scorer: RewardScorer, limits: RewardServiceLimits = LIMITS) => {
    const metrics = rewardServiceMetrics();
    const service = await startRewardService({ scorer, host: '127.0.0.1', port: await freePort(), cacheSize: 10, limits, metrics, log: () => undefined });
    services.push(service);
    return { ...service, metrics };
  };
  after(async () => {
    for (const s of services) await s.close();
  });

  it('answers 413 to a query longer than maxQueryChars without scoring it, and scores one at the limit', async () => {
    const scorer = testScorer(false);
    const service = await start(scorer.scorer);
    const long = await post(service.url, sample('a'.repeat(101)));
    assert.equal(long.status, 413);
    assert.equal(long.body.error, 'query[0]: 101 characters, more than the 100 a sample may have (training.rewardService.maxQueryChars)');
    assert.equal(scorer.called(), 0);
    assert.equal((await post(service.url, sample('a'.repeat(100)))).status, 200);
    assert.equal(scorer.called(), 1);
    assert.deepEqual(await outcomes(service.metrics), { too_large: 1, ok: 1 });
  });
});
