import assert from 'node:assert/strict';
import { rewardServiceMetrics, type RewardServiceMetrics } from '../../../activities/metrics';
import type { RewardScorer } from '../../../activities/training/reward';
import { startRewardService, type RewardService, type RewardServiceLimits } from '../../../activities/training/reward-service';
import { freePort } from '../../../infra/ephemeral';

/**
 * What one request may cost the reward service (issue 29, items 2 and 15), against a scorer that
 * answers 0 at once or when the test lets it: the mechanisms, never a time. A body or a query over
 * its limit is answered 413 and a request over the limit in flight 503, before anything is scored.
 */

const LIMITS: RewardServiceLimits = { maxQueryChars: 100, maxBodyBytes: 1000, maxConcurrentRequests: 1 };

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

describe('reward service: what one request may cost (413, 503)', function () {
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
    const service = await start(scorer.scorer, { ...LIMITS, maxConcurrentRequests: 8 });
    const long = await post(service.url, sample('a'.repeat(101)));
    assert.equal(long.status, 413);
    assert.equal(long.body.error, 'query[0]: 101 characters, more than the 100 a sample may have (training.rewardService.maxQueryChars)');
    assert.equal(scorer.called(), 0);
    assert.equal((await post(service.url, sample('a'.repeat(100)))).status, 200);
    assert.equal(scorer.called(), 1);
    assert.deepEqual(await outcomes(service.metrics), { too_large: 1, ok: 1 });
  });

  it('answers 413 to a body larger than maxBodyBytes, declared or streamed, without scoring it', async () => {
    const scorer = testScorer(false);
    const service = await start(scorer.scorer, { ...LIMITS, maxQueryChars: 10_000, maxConcurrentRequests: 8 });
    const declared = await post(service.url, sample('a'.repeat(1000)));
    assert.equal(declared.status, 413);
    assert.equal(declared.body.error, 'body: larger than 1000 bytes (training.rewardService.maxBodyBytes)');
    assert.equal(declared.headers.get('connection'), 'close', 'the rest of the body is not waited for');
    const text = new TextEncoder().encode(sample('a'.repeat(1100)));
    const streamed = await post(service.url, new ReadableStream({ start(controller) {
      controller.enqueue(text.slice(0, 600));
      controller.enqueue(text.slice(600));
      controller.close();
    } }));
    assert.equal(streamed.status, 413, 'a chunked body has no length to declare');
    assert.equal(scorer.called(), 0);
    assert.deepEqual(await outcomes(service.metrics), { too_large: 2 });
  });

  it('answers 503 to a request beyond maxConcurrentRequests in flight, unread, and takes requests again once one is answered', async () => {
    const scorer = testScorer(true);
    const service = await start(scorer.scorer);
    const first = post(service.url, sample('first'));
    await scorer.calledTimes(1);
    // Either the second request is answered (503) or it reaches the scorer too (no limit): never a wait.
    const second = await Promise.race([post(service.url, sample('second')), scorer.calledTimes(2).then(() => 'scored' as const)]);
    scorer.release();
    if (second === 'scored') assert.fail('the second request was scored while the first was in flight');
    assert.equal(second.status, 503);
    assert.equal(second.headers.get('retry-after'), '1');
    assert.match(second.body.error, /^1 requests in flight, the most this service takes \(training\.rewardService\.maxConcurrentRequests\)$/);
    assert.equal((await first).status, 200);
    assert.equal((await post(service.url, sample('third'))).status, 200);
    assert.equal(scorer.called(), 2, 'the first and the third');
    assert.deepEqual(await outcomes(service.metrics), { busy: 1, ok: 2 });
  });
});
