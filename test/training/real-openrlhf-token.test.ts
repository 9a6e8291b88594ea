import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { rewardServiceMetrics } from '../../activities/metrics';
import type { RewardScorer } from '../../activities/training/reward';
import { startRewardService, type RewardService } from '../../activities/training/reward-service';
import { freePort } from '../stack';

const REPO = path.resolve(__dirname, '..', '..', '..');
const PYTHON = path.resolve(REPO, process.env.CODA_TRAINERS_VENV ?? '.tools/trainers', 'bin', 'python');

/**
 * OpenRLHF 0.11.2's own remote-reward client (openrlhf/utils/agent.py, SingleTurnAgentExecutor,
 * from .tools/trainers) against a reward service that takes its token only: given the URL the GPU
 * worker hands --reward.remote_url (the token as its password), its aiohttp session sends the
 * token as HTTP Basic and gets the rewards; given the URL without it, every one of its 5 tries
 * is answered 401 and it gives up.
 */
const CLIENT = String.raw`
import asyncio, json, sys
from openrlhf.utils.agent import SingleTurnAgentExecutor
executor = SingleTurnAgentExecutor(sys.argv[1].split(","))  # train_ppo_ray.py splits --reward.remote_url at commas
print(json.dumps(asyncio.run(executor._fetch_rewards_via_http(["q"], ["q"], ["{}"]))))
`;

describe('OpenRLHF 0.11.2\'s reward client sends the token of its URL (real OpenRLHF code)', function () {
  this.timeout(300_000);
  let service: RewardService;
  const metrics = rewardServiceMetrics();
  const token = 'c0da-reward-token-0123456789abcdef';
  const scorer: RewardScorer = async () => ({ reward: 2, score: 1, logs: { type_match: 1 }, cacheable: true });
  const client = (url: string) => promisify(execFile)(PYTHON, ['-c', CLIENT, url], { env: { ...process.env, TOKENIZERS_PARALLELISM: 'false' }, timeout: 240_000 });
  const count = async (outcome: string) => (await metrics.requests.get()).values.filter((v) => v.labels.outcome === outcome).reduce((a, v) => a + v.value, 0);

  before(async () => {
    if (!existsSync(PYTHON)) throw new Error(`${PYTHON}: no trainers' venv; run bash infra/install-trainers.sh (or set CODA_TRAINERS_VENV)`);
    service = await startRewardService({ scorer, host: '127.0.0.1', port: await freePort(), cacheSize: 10, limits: { maxQueryChars: 1000, maxBodyBytes: 10_000, maxConcurrentRequests: 8 }, token, metrics, log: () => undefined });
  });
  after(() => service?.close());

  it('is answered with the token as the URL\'s password, and refused 5 times without it', async () => {
    const { stdout } = await client(service.trainerUrl);
    const answers = JSON.parse(stdout.trim().split('\n').at(-1)!) as Array<{ rewards: number[] }>;
    assert.deepEqual(answers.map((a) => a.rewards), [[2]]);
    assert.equal(await count('ok'), 1);
    await assert.rejects(client(service.url), /Request error for 5 times/);
    assert.equal(await count('unauthorized'), 5, 'each try refused');
    assert.equal(await count('ok'), 1);
  });
});
