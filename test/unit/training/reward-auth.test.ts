import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
 * on a loopback address only; the token the trainer is given never reaches its log.
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
    assert.equal(service.trainerUrl, service.url.replace('http://', `http://openrlhf:${TOKEN}@`));
    const outcomes = Object.fromEntries((await metrics.requests.get()).values.map((v) => [v.labels.outcome, v.value]));
    assert.deepEqual(outcomes, { unauthorized: 4, ok: 3 });
  });

  it("is answered when the trainer double's client posts to the URL the trainer is given, token in it, as aiohttp does", async () => {
    const service = await startRewardService({ scorer, host: '127.0.0.1', port: await freePort(), cacheSize: 10, limits: LIMITS, token: TOKEN, log: () => undefined });
    services.push(service);
    const before = scored;
    const answers = await new RewardClient([service.trainerUrl], { tries: 1 }).fetch({ queries: ['q'], prompts: ['q'], labels: ['{}'] });
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

  it('keeps the token out of the trainer\'s log: its command line and what it prints (OpenRLHF prints its arguments)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'coda-reward-token-'));
    try {
      const url = `http://openrlhf:${TOKEN}@10.0.0.7:8900/get_reward`;
      const lines: string[] = [];
      const log = path.join(dir, 'trainer.log');
      const trainer = startTrainer({ program: ['sh', '-c', 'echo "remote_url=[\'$2\']"', 'sh'], args: ['--reward.remote_url', url], env: { PATH: process.env.PATH ?? '' }, cwd: dir, hidden: [TOKEN] }, log, (line) => lines.push(line));
      assert.equal((await trainer.exited).code, 0);
      const text = readFileSync(log, 'utf8');
      assert.equal(text.includes(TOKEN), false, text);
      assert.match(text, /--reward\.remote_url http:\/\/openrlhf:\*\*\*@10\.0\.0\.7:8900\/get_reward\n/);
      assert.deepEqual(lines, ["remote_url=['http://openrlhf:***@10.0.0.7:8900/get_reward']"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
