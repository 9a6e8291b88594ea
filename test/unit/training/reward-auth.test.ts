import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { rewardServiceMetrics } from '../../../activities/metrics';
import type { RewardScorer } from '../../../activities/training/reward';
import { rewardServiceToken, startRewardService, type RewardService } from '../../../activities/training/reward-service';
import { startTrainer } from '../../../activities/training/trainer-process';
import { RewardClient } from '../../../doubles/trainers/openrlhf-reward-client';
import { freePort } from '../../../infra/ephemeral';

/**
 * Who may ask the reward service (issue 29, the reward service's authentication): with a token, a
 * request without it is answered 401 before anything is read or scored; without one it listens
 * on a loopback address only; the token the trainer is given never reaches its log. No web page
 * may ask (issue 44, item 3): a Host other than the service's address, an Origin, or a content type
 * but JSON is refused unread, so cross-site posts neither get scored nor fill the requests in flight.
 * (test/training/real-openrlhf-token.test.ts: OpenRLHF 0.11.2's own client sends it.)
 */

const TOKEN = 'c0da-reward-token-0123456789abcdef';
const LIMITS = { maxQueryChars: 1000, maxBodyBytes: 10_000, maxConcurrentRequests: 8 };

describe('reward service: only the trainer may ask', function () {
  this.timeout(30_000);
  const services: RewardService[] = [];
  let scored = 0;
  const scorer: RewardScorer = async () => {
    scored += 1;
    return { reward: 0, score: 0, logs: {}, cacheable: false };
  };
  after(async () => {
    for (const s of services) await s.close();
  });

  it('answers 401 to a request without the token, or with another, unread; takes it as Basic\'s password (any user) or Bearer', async () => {
    const metrics = rewardServiceMetrics();
    const service = await startRewardService({ scorer, host: '127.0.0.1', port: await freePort(), cacheSize: 10, limits: LIMITS, token: TOKEN, metrics, log: () => undefined });
    services.push(service);
    const body = JSON.stringify({ query: ['q'], prompts: ['q'], labels: ['{}'] });
    const post = (authorization?: string) => fetch(service.url, { method: 'POST', headers: { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }) }, body });
    const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    for (const authorization of [undefined, `Bearer ${TOKEN.slice(1)}`, basic('openrlhf', `${TOKEN}x`), `Token ${TOKEN}`]) {
      const response = await post(authorization);
      assert.equal(response.status, 401, authorization);
      assert.equal(response.headers.get('www-authenticate'), 'Basic realm="coda reward service"');
      assert.match(((await response.json()) as { error: string }).error, /^unauthorized: /);
    }
    assert.equal(scored, 0, 'nothing scored without the token');
    for (const authorization of [basic('openrlhf', TOKEN), basic('', TOKEN), `Bearer ${TOKEN}`]) assert.equal((await post(authorization)).status, 200, authorization);
    assert.equal(scored, 3);
    assert.equal((await fetch(service.url.replace('/get_reward', '/health'))).status, 200, 'the readiness probe needs no token');
    assert.equal(service.token, TOKEN);
    assert.equal(new URL(service.url).password, '', 'the URL a trainer gets on its command line has no credentials');
    const outcomes = Object.fromEntries((await metrics.requests.get()).values.map((v) => [v.labels.outcome, v.value]));
    assert.deepEqual(outcomes, { unauthorized: 4, ok: 3 });
  });

  it("is answered when the trainer double's client posts with the token as Basic's password, as aiohttp sends a URL's credentials", async () => {
    const service = await startRewardService({ scorer, host: '127.0.0.1', port: await freePort(), cacheSize: 10, limits: LIMITS, token: TOKEN, log: () => undefined });
    services.push(service);
    const before = scored;
    const answers = await new RewardClient([service.url], { tries: 1, token: TOKEN }).fetch({ queries: ['q'], prompts: ['q'], labels: ['{}'] });
    assert.equal(answers.length, 1);
    assert.equal(scored, before + 1, 'scored once');
    await assert.rejects(new RewardClient([service.url], { tries: 1, pauseMs: 0 }).fetch({ queries: ['q'], prompts: ['q'], labels: ['{}'] }), /401/);
  });

  it('refuses to listen beyond this machine without a token', async () => {
    // 192.0.2.1 (TEST-NET-1) is no address of this machine: nothing could listen there anyway.
    await assert.rejects(
      startRewardService({ scorer, host: '192.0.2.1', port: await freePort(), cacheSize: 10, limits: LIMITS, log: () => undefined }),
      /training\.rewardService\.host is 192\.0\.2\.1, beyond this machine, and training\.rewardService\.tokenEnv names no token/,
    );
  });

  it('reads the token from training.rewardService.tokenEnv, refusing one that cannot go into a URL', () => {
    const settings = { tokenEnv: 'CODA_REWARD_TOKEN' };
    assert.equal(rewardServiceToken(settings, {}), undefined);
    assert.equal(rewardServiceToken(settings, { CODA_REWARD_TOKEN: '' }), undefined);
    assert.equal(rewardServiceToken(settings, { CODA_REWARD_TOKEN: TOKEN }), TOKEN);
    for (const bad of ['short-token', `${TOKEN},http://elsewhere`, `${TOKEN}\n`, `${TOKEN}@x`]) {
      assert.throws(() => rewardServiceToken(settings, { CODA_REWARD_TOKEN: bad }), /training\.rewardService\.tokenEnv: the token in CODA_REWARD_TOKEN must be at least 16 characters of A-Z a-z 0-9 \. _ ~ -/, JSON.stringify(bad));
    }
  });

  it('keeps the token out of the trainer\'s log: what it prints (a URL its launcher completed, its environment)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'coda-reward-token-'));
    try {
      const url = 'http://10.0.0.7:8900/get_reward';
      const lines: string[] = [];
      const log = path.join(dir, 'trainer.log');
      const script = 'echo "remote_url=[\'http://openrlhf:$CODA_REWARD_TOKEN@${2#http://}\']"';
      const trainer = startTrainer({ program: ['sh', '-c', script, 'sh'], args: ['--reward.remote_url', url], env: { PATH: process.env.PATH ?? '', CODA_REWARD_TOKEN: TOKEN }, cwd: dir, hidden: [TOKEN] }, log, (line) => lines.push(line));
      assert.equal((await trainer.exited).code, 0);
      const text = readFileSync(log, 'utf8');
      assert.equal(text.includes(TOKEN), false, text);
      assert.match(text, /--reward\.remote_url http:\/\/10\.0\.0\.7:8900\/get_reward\n/);
      assert.deepEqual(lines, ["remote_url=['http://openrlhf:***@10.0.0.7:8900/get_reward']"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A request as a browser may send it: the Host, Origin and Content-Type given (fetch would send the URL's own Host and no Origin). */
function sendAs(url: string, headers: Record<string, string>, method = 'POST', body = JSON.stringify({ query: ['q'], prompts: ['q'], labels: ['{}'] })): Promise<{ status: number; error: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: target.hostname, port: target.port, path: method === 'GET' ? '/health' : target.pathname, method, headers: method === 'GET' ? headers : { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, error: (JSON.parse(text) as { error?: string }).error ?? '' }));
    });
    req.on('error', reject).end(method === 'GET' ? undefined : body);
  });
}

describe('reward service: no web page may ask (issue 44, item 3)', function () {
  this.timeout(30_000);
  const services: RewardService[] = [];
  after(async () => {
    for (const s of services) await s.close();
  });

  it('refuses, unread and unscored, a Host other than its address, any Origin, and any content type but application/json; scores its trainer\'s request', async () => {
    let scored = 0;
    const metrics = rewardServiceMetrics();
    // The dev default: no token, on loopback.
    const service = await startRewardService({ scorer: async () => ((scored += 1), { reward: 1, score: 1, logs: {}, cacheable: false }), host: '127.0.0.1', port: await freePort(), cacheSize: 10, limits: LIMITS, metrics, log: () => undefined });
    services.push(service);
    const own = new URL(service.url).host;
    const port = new URL(service.url).port;
    const json = 'application/json';
    const refused: Array<[Record<string, string>, number, RegExp]> = [
      // What a page of another site posts without a preflight.
      [{ host: own, origin: 'https://evil.example', 'content-type': 'text/plain' }, 403, /^Origin "https:\/\/evil\.example": a web page's request/],
      [{ host: own, 'content-type': 'text/plain;charset=UTF-8' }, 415, /^content-type "text\/plain": expected application\/json/],
      [{ host: own, 'content-type': 'application/x-www-form-urlencoded' }, 415, /^content-type "application\/x-www-form-urlencoded"/],
      [{ host: own, 'content-type': 'multipart/form-data; boundary=x' }, 415, /^content-type "multipart\/form-data"/],
      [{ host: own }, 415, /^content-type "": expected application\/json/],
      // A page whose own name points at 127.0.0.1 (DNS rebinding) is same-origin to the browser: its Host is its name.
      [{ host: `evil.example:${port}`, 'content-type': json }, 403, new RegExp(`^Host "evil\\.example:${port}": this reward service answers only at 127\\.0\\.0\\.1:${port}`)],
      [{ host: `127.0.0.1.evil.example:${port}`, 'content-type': json }, 403, /^Host /],
      [{ host: `localhost:${port}`, 'content-type': json }, 403, /^Host /],
      [{ host: '127.0.0.1', 'content-type': json }, 403, /^Host "127\.0\.0\.1"/],
      [{ host: own, origin: 'null', 'content-type': json }, 403, /^Origin "null"/],
      [{ host: own, origin: `http://${own}`, 'content-type': json }, 403, /^Origin /],
    ];
    for (const [headers, status, error] of refused) {
      const got = await sendAs(service.url, headers);
      assert.equal(got.status, status, JSON.stringify(headers));
      assert.match(got.error, error, JSON.stringify(headers));
    }
    const health = await sendAs(service.url, { host: `evil.example:${port}` }, 'GET');
    assert.equal(health.status, 403, 'not even /health answers a foreign Host');
    assert.equal(scored, 0, 'nothing scored for a page');
    assert.equal((await sendAs(service.url, { host: own, 'content-type': json })).status, 200);
    assert.equal((await sendAs(service.url, { host: own, 'content-type': 'Application/JSON; charset=utf-8' })).status, 200, 'the media type, whatever its case and parameters');
    assert.equal((await sendAs(service.url, { host: own }, 'GET')).status, 200, 'the readiness probe at the service\'s address');
    assert.equal(scored, 2);
    const outcomes = Object.fromEntries((await metrics.requests.get()).values.map((v) => [v.labels.outcome, v.value]));
    assert.deepEqual(outcomes, { forbidden: 8, refused: 4, ok: 2 });
  });

  it("keeps its trainer's request answered while a page posts as many requests as the service takes in flight", async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let pageScored = 0;
    let pageScoredAll!: () => void;
    const allPageScored = new Promise<void>((resolve) => (pageScoredAll = resolve));
    const service = await startRewardService({
      // A page's sample is held (as the executor holds a slow one); the trainer's is scored at once.
      scorer: async (sample) => {
        if (sample.label !== '{}') return { reward: 1, score: 1, logs: {}, cacheable: false };
        if ((pageScored += 1) === LIMITS.maxConcurrentRequests) pageScoredAll();
        await gate;
        return { reward: 0, score: 0, logs: {}, cacheable: false };
      },
      host: '127.0.0.1', port: await freePort(), cacheSize: 10, limits: LIMITS, log: () => undefined,
    });
    services.push(service);
    try {
      const port = new URL(service.url).port;
      // Each its own sample: the service's cache would let one scoring answer equal ones.
      const pages = Array.from({ length: LIMITS.maxConcurrentRequests }, (_, i) =>
        sendAs(service.url, i % 2 === 0 ? { host: `evil.example:${port}`, origin: 'http://evil.example', 'content-type': 'text/plain' } : { host: new URL(service.url).host, 'content-type': 'text/plain' }, 'POST', JSON.stringify({ query: [`page ${i}`], prompts: ['q'], labels: ['{}'] })));
      // Today's answers come back at once; a service that took the posts holds them all in flight.
      await Promise.race([Promise.all(pages), allPageScored]);
      const trainer = await new RewardClient([service.url], { tries: 1 }).fetch({ queries: ['q'], prompts: ['q'], labels: ['{"trainer":1}'] }).then((a) => a.length, (err: Error) => err.message);
      assert.equal(trainer, 1, 'the trainer\'s request is answered, not 503');
      assert.deepEqual((await Promise.all(pages)).map((p) => p.status), Array.from({ length: LIMITS.maxConcurrentRequests }, (_, i) => (i % 2 === 0 ? 403 : 415)));
      assert.equal(pageScored, 0);
    } finally {
      open();
    }
  });
});
