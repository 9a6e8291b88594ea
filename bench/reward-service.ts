import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load';
import { ModelGateway } from '../activities/models/gateway';
import { s3Images } from '../activities/models/images';
import { createObjectStore } from '../activities/storage/object-store';
import { mapLimited } from '../activities/concurrency';
import { fittedSize } from '../core/images';
import { grpoRows, plannerMessagesAt } from '../core/training';
import { recordTrajectory, SCREEN } from '../doubles/scripted-models/recorded-trajectory';
import { startScriptedModels } from '../doubles/scripted-models/main';
import { RewardClient } from '../doubles/trainers/openrlhf-reward-client';
import { applyChatTemplate, END_OF_TURN, expandImagePads } from '../doubles/trainers/qwen2-vl';
import { startDaemon, stopDaemon, waitUntilHealthy } from '../infra/daemon';
import { REPO_CONFIG, startEphemeralStack } from '../infra/ephemeral';
import { workerHealthy, workerSpec } from '../infra/worker-process';
import { cpuSeconds, mean, percentile, printTable } from './stats';

/**
 * The reward service under OpenRLHF's load: one sample per request, `--concurrency` requests in
 * flight (64: vLLM engines post after every generation), against the real GPU worker process (its
 * reward service, S3 on MinIO) with the scripted executor answering at once. GRPO rows come from
 * trajectories of the replayable KAlgebra tasks recorded with the scripted models on a real
 * KAlgebra screenshot (bench/fixtures); each row gets `--samples` planner replies, each thought made
 * unique (a numbered prefix, as sampling at temperature 1 makes them) so that the cold pass scores
 * every one. The warm pass sends the same requests again: OpenRLHF's retries, or identical samples.
 *
 *   node build/bench/reward-service.js [--samples 8] [--concurrency 64]
 */

const TASKS = ['A-01', 'A-03', 'B-01', 'B-07', 'C-01', 'C-04', 'C-05', 'C-08', 'C-09', 'D-02'];

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { samples: { type: 'string', default: '8' }, concurrency: { type: 'string', default: '64' } } });
  const servers = await startEphemeralStack('coda-rewards');
  try {
    const base = loadConfig(REPO_CONFIG, servers.env);
    const models = await startScriptedModels(base, { port: 0, env: servers.env });
    const env = { ...servers.env, CODA_PLANNER_URL: models.url, CODA_EXECUTOR_URL: models.url };
    const config = loadConfig(REPO_CONFIG, env);
    const store = createObjectStore(config.storage, env);
    const fixture = readFileSync(path.resolve(__dirname, '..', '..', 'bench', 'fixtures', 'kalgebra-1920x1080.png'));
    const run = `rewardbench${Date.now()}`;
    const trajectories = [];
    for (const task of TASKS) trajectories.push(await recordTrajectory(store, config, env, run, task, async () => fixture));
    const gateway = new ModelGateway({ models: config.models, images: s3Images(store, config.storage.presignSeconds), env });
    const samples = Number(values.samples);
    const requests: Array<{ queries: string[]; prompts: string[]; labels: string[] }> = [];
    const view = { screen: SCREEN, box: config.models.planner.image! };
    for (const t of trajectories) {
      for (const { row, step } of grpoRows(t.manifest, t.manifestKey, t.manifest.steps.filter((s) => s.action !== null).map((s) => s.index), view)) {
        const prompt = applyChatTemplate(row.prompt);
        const prefix = expandImagePads(prompt, row.images.map(() => fittedSize(SCREEN, view.box)));
        const replies = (await gateway.complete('planner', plannerMessagesAt(t.manifest, step), { n: samples, temperature: 1 })).texts;
        replies.forEach((reply, i) => requests.push({ queries: [`${prefix}${reply.replace(/^Thought: /, `Thought: Sample ${i + 1}. `)}${END_OF_TURN}`], prompts: [prompt], labels: [row.label] }));
      }
    }

    const gpu = startDaemon(config.dataDir, workerSpec(config, 'gpu', [], env));
    await waitUntilHealthy(config.dataDir, 'gpu', () => workerHealthy(config, 'gpu', config.taskQueues.gpu), 90_000);
    const url = `http://127.0.0.1:${config.training.rewardService.port}/get_reward`;
    const rows: string[][] = [['pass', 'requests', 'rewards/s', 'p50 latency', 'p95 latency', 'cache hits', 'executor calls', 'reward mean', 'worker CPU per reward']];
    /** A metric of the reward service's Prometheus endpoint, summed over its labels. */
    const scrape = async (): Promise<(name: string) => number> => {
      const text = await (await fetch(`http://127.0.0.1:${config.metrics.ports.rewardService}/metrics`)).text();
      return (name) => text.split('\n').filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`)).reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
    };
    let before = { cacheHits: 0, executorCalls: 0 };
    for (const pass of ['cold cache', 'warm cache']) {
      const cpu = cpuSeconds(gpu.pid!);
      const latencies: number[] = [];
      const rewards: number[] = [];
      const started = Date.now();
      await mapLimited(requests, Number(values.concurrency), async (request) => {
        const sent = Date.now();
        const [answer] = await new RewardClient([url]).fetch(request);
        latencies.push(Date.now() - sent);
        rewards.push((answer?.rewards as number[])[0]!);
      });
      const seconds = (Date.now() - started) / 1000;
      const metric = await scrape();
      const metrics = { cacheHits: metric('coda_reward_cache_hits_total'), executorCalls: metric('coda_reward_executor_seconds_count') };
      rows.push([
        pass,
        String(requests.length),
        (requests.length / seconds).toFixed(0),
        `${percentile(latencies, 50)} ms`,
        `${percentile(latencies, 95)} ms`,
        String(metrics.cacheHits - before.cacheHits),
        String(metrics.executorCalls - before.executorCalls),
        mean(rewards).toFixed(2),
        `${(((cpuSeconds(gpu.pid!) - cpu) * 1000) / requests.length).toFixed(1)} ms`,
      ]);
      before = metrics;
    }
    printTable(`reward service: ${requests.length} single-sample requests (${trajectories.length} trajectories, ${requests.length / samples} steps x ${samples} samples), ${values.concurrency} in flight, scripted executor`, rows);
    await stopDaemon(config.dataDir, 'gpu');
    await models.close();
  } finally {
    await servers.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
