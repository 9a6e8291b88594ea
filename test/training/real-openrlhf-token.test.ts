import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { rewardServiceMetrics } from '../../activities/metrics';
import type { RewardScorer } from '../../activities/training/reward';
import { startRewardService, TRAINER_TOKEN_ENV, type RewardService } from '../../activities/training/reward-service';
import { freePort } from '../stack';

const REPO = path.resolve(__dirname, '..', '..', '..');
const PYTHON = path.resolve(REPO, process.env.CODA_TRAINERS_VENV ?? '.tools/trainers', 'bin', 'python');
const TRAINERS = path.join(REPO, 'infra', 'trainers');

/**
 * OpenRLHF 0.11.2's own remote-reward client (openrlhf/utils/agent.py, SingleTurnAgentExecutor,
 * from .tools/trainers) started as training.grpo's program starts it: infra/trainers/openrlhf_grpo.py
 * with the GPU worker's command line (--reward.remote_url without credentials) and the token in its
 * environment. The launcher's main() runs as it is; only train_ppo_ray itself, which needs Ray and a
 * GPU, is stood in for by what it does with --reward.remote_url (splits it at commas and gives the
 * list to each vLLM engine's SingleTurnAgentExecutor). With the token its aiohttp session sends it
 * as HTTP Basic and gets the rewards, while the process's command line (/proc/self/cmdline, what
 * every user reads) has no token; without it every one of its 5 tries is answered 401; a URL with
 * credentials on the command line is refused before anything is posted.
 */
const CLIENT = String.raw`
import asyncio, json, os, runpy, sys
import openrlhf_grpo
from openrlhf.utils.agent import SingleTurnAgentExecutor

def train_ppo_ray(name, run_name, alter_sys):
    assert (name, run_name, alter_sys) == ("openrlhf.cli.train_ppo_ray", "__main__", True)
    urls = sys.argv[sys.argv.index("--reward.remote_url") + 1].split(",")
    answers = asyncio.run(SingleTurnAgentExecutor(urls)._fetch_rewards_via_http(["q"], ["q"], ["{}"]))
    with open("/proc/self/cmdline", "rb") as f:
        cmdline = f.read().decode()
    print(json.dumps({"answers": answers, "cmdline": cmdline, "tokenInEnv": "CODA_REWARD_TOKEN" in os.environ}))

runpy.run_module = train_ppo_ray
openrlhf_grpo.main()
`;

describe('OpenRLHF 0.11.2\'s reward client sends the token its launcher took from the environment (real OpenRLHF code)', function () {
  this.timeout(300_000);
  let service: RewardService;
  const metrics = rewardServiceMetrics();
  const token = 'c0da-reward-token-0123456789abcdef';
  const scorer: RewardScorer = async () => ({ reward: 2, score: 1, logs: { type_match: 1 }, cacheable: true });
  const launch = (url: string, env: Record<string, string>) => {
    const base: NodeJS.ProcessEnv = { ...process.env, TOKENIZERS_PARALLELISM: 'false', PYTHONPATH: TRAINERS };
    delete base[TRAINER_TOKEN_ENV];
    return promisify(execFile)(PYTHON, ['-c', CLIENT, '--reward.remote_url', url], { env: { ...base, ...env }, timeout: 240_000 });
  };
  const count = async (outcome: string) => (await metrics.requests.get()).values.filter((v) => v.labels.outcome === outcome).reduce((a, v) => a + v.value, 0);

  before(async () => {
    if (!existsSync(PYTHON)) throw new Error(`${PYTHON}: no trainers' venv; run bash infra/install-trainers.sh (or set CODA_TRAINERS_VENV)`);
    service = await startRewardService({ scorer, host: '127.0.0.1', port: await freePort(), cacheSize: 10, limits: { maxQueryChars: 1000, maxBodyBytes: 10_000, maxConcurrentRequests: 8 }, token, metrics, log: () => undefined });
  });
  after(() => service?.close());

  it('is answered with the token from CODA_REWARD_TOKEN, which is on no command line; refused 5 times without it', async () => {
    assert.equal(new URL(service.url).password, '');
    const { stdout } = await launch(service.url, { [TRAINER_TOKEN_ENV]: token });
    const seen = JSON.parse(stdout.trim().split('\n').at(-1)!) as { answers: Array<{ rewards: number[] }>; cmdline: string; tokenInEnv: boolean };
    assert.deepEqual(seen.answers.map((a) => a.rewards), [[2]]);
    assert.equal(await count('ok'), 1);
    assert.ok(seen.cmdline.includes(`--reward.remote_url\0${service.url}`), 'the command line the kernel shows is the worker\'s');
    assert.equal(seen.cmdline.includes(token), false, 'no token in /proc/<pid>/cmdline');
    assert.equal(seen.tokenInEnv, false, 'the launcher took the token out of its environment: the Ray processes it starts do not inherit it');
    await assert.rejects(launch(service.url, {}), /Request error for 5 times/);
    assert.equal(await count('unauthorized'), 5, 'each try refused');
    assert.equal(await count('ok'), 1);
  });

  it('refuses a --reward.remote_url with credentials, with argparse\'s exit 2, naming neither them nor posting', async () => {
    const other = 'not-the-token-but-in-argv-0123456789';
    const url = service.url.replace('http://', `http://openrlhf:${other}@`);
    const failed = await launch(url, { [TRAINER_TOKEN_ENV]: token }).then(() => undefined, (err: { code: number; stderr: string }) => err);
    assert.ok(failed !== undefined, 'the launcher refused');
    assert.equal(failed.code, 2);
    assert.match(failed.stderr, /--reward\.remote_url http:\/\/127\.0\.0\.1:\d+\/get_reward: the URL carries credentials, which every user of this machine reads on the command line \(ps\); give the URL without them and the token in CODA_REWARD_TOKEN/);
    assert.equal(failed.stderr.includes(other), false);
    assert.equal(await count('ok') + await count('unauthorized'), 6, 'nothing posted');
  });
});
