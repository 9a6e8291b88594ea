import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { rewardServiceMetrics, trainerMetrics, type RewardServiceMetrics } from '../../activities/metrics';
import { uploadedStep } from '../../activities/training/checkpoints';
import type { TrainRequest, TrainResult } from '../../activities/training/contract';
import type { LoadedConfig } from '../../config/load';
import { checkpointManifestKey, trainingJobPrefix } from '../../core/keys';
import { checkpointManifestSchema, datasetManifestSchema } from '../../core/training';
import { createGpuWorker, type GpuWorker } from '../../workers/gpu';
import { setFlag, type GpuHarness } from '../support/gpu-harness';
import { startTinyPlannerHarness, type TinyPlannerHarness } from '../support/tiny-qwen';
import { runSeed } from '../support/harness';
import { TRL, TRL_GRPO } from '../../infra/small-planner/runs';
import { startRewardProxy, type RewardProxy } from '../support/reward-proxy';
import { processesMentioning } from './processes';

const GENERATIONS = 2;
/** The reward service's token: the worker gives it to TRL in its environment. */
const TOKEN = 'c0da-reward-token-0123456789abcdef';

/** The request scoring's counts: requests by outcome, samples scored, samples answered 0 by reason. */
async function counts(m: RewardServiceMetrics): Promise<{ requests: Record<string, number>; samples: number; failures: Record<string, number> }> {
  const requests = Object.fromEntries((await m.requests.get()).values.map((v) => [String(v.labels.outcome), v.value]));
  const samples = (await m.rewards.get()).values.find((v) => v.metricName === 'coda_reward_sample_reward_count')?.value ?? 0;
  const failures = Object.fromEntries((await m.failures.get()).values.map((v) => [String(v.labels.reason), v.value]));
  return { requests, samples, failures };
}

/** The tensor names of a .safetensors file (its header: 8 bytes of length, then JSON). */
function tensorNames(file: Buffer): string[] {
  const length = Number(file.readBigUInt64LE(0));
  return Object.keys(JSON.parse(file.subarray(8, 8 + length).toString('utf8')) as Record<string, unknown>).filter((k) => k !== '__metadata__');
}

/**
 * The real TRL 0.29.1 GRPOTrainer (infra/install-trainers.sh, CPU) run by a GPU worker as a lab
 * with one GPU node, or none, runs it: training.grpo.backend trl and infra/trainers/trl_grpo.py's
 * command line, on the GRPO dataset the pipeline's code built from recorded trajectories, the tiny
 * Qwen2.5-VL made here from a seed (infra/trainers/tiny_qwen2_5_vl.py, nothing downloaded), every
 * sample scored by the worker's reward service. Then the job is run again as after a crash between
 * the trainer's end and the manifest's write, by a worker allowed one more step: it resumes from the
 * uploaded checkpoint. The reward service takes a token, which reaches TRL through its environment:
 * the first run's reward requests go through a proxy that holds them until the test has read the
 * running trainer's /proc/<pid>/cmdline (what every user of the machine reads), which holds no token.
 * CODA_SKIP_REAL_TRAINERS=1 leaves this file out of the run (.mocharc.js).
 */
describe("the real TRL GRPOTrainer on CPU: the pipeline's GRPO dataset scored by the reward service, a LoRA checkpoint, resumed (real Temporal and MinIO)", function () {
  this.timeout(600_000);
  let tiny: TinyPlannerHarness | undefined;
  let g: GpuHarness;
  let scratch: string;
  let model: string;
  let worker: { gpu: GpuWorker; running: Promise<void> } | undefined;
  const job = `realtrl-${Date.now()}`;
  let request: TrainRequest;

  /** An in-process GPU worker with a token, whose trainer stops after `steps` steps (its rewards through `proxy` if given), with its reward service's counts. */
  const startWorker = async (steps: number, proxy?: RewardProxy): Promise<RewardServiceMetrics> => {
    const config: LoadedConfig = structuredClone(g.h.config);
    setFlag(config.training.grpo.args, '--max-steps', String(steps));
    if (proxy !== undefined) setFlag(config.training.grpo.args, '--reward-url', proxy.url);
    const rewards = rewardServiceMetrics();
    const gpu = await createGpuWorker({ config, connection: g.h.stack.connection, env: { ...g.h.env, CODA_REWARD_TOKEN: TOKEN }, metrics: { trainer: trainerMetrics(), rewards } });
    if (proxy !== undefined) proxy.target = gpu.rewardService.url;
    worker = { gpu, running: gpu.run() };
    return rewards;
  };
  const stopWorker = async (): Promise<void> => {
    worker?.gpu.shutdown();
    await worker?.running;
    worker = undefined;
  };

  before(async () => {
    assert.ok(existsSync(path.join(TRL, 'trl')), `${TRL} is missing: run bash infra/install-trainers.sh`);
    tiny = await startTinyPlannerHarness({
      name: 'realtrl',
      displayFrom: Number(process.env.CODA_DISPLAY_BASE ?? 640),
      edit: (doc) => {
        const training = doc.training as Record<string, any>;
        // What a lab without GPUs sets: TRL on the CPU, a small adapter and group, a checkpoint per step; the run seed as temporal.yaml gives it.
        training.grpo = {
          backend: 'trl',
          program: TRL_GRPO,
          args: ['--model', '{model}', '--prompts', '{prompts}', '--max-images', '{maxImages}', '--reward-url', '{rewardUrl}', '--checkpoints', '{checkpoints}', '--output', '{output}',
            '--cpu', '--seed', '${CODA_SEED:-1}', '--num-generations', GENERATIONS, '--prompts-per-step', 1, '--max-completion-length', 12, '--lora-rank', 4, '--lora-alpha', 8, '--save-steps', 1],
          env: { PYTHONPATH: TRL, HF_HUB_OFFLINE: '1', CUDA_VISIBLE_DEVICES: '' },
        };
      },
    });
    ({ g, scratch, model } = tiny);
    request = { job, kind: 'grpo', datasetKey: g.grpoDataset, checkpoint: `specialist-${job}`, base: { model: 'tiny-qwen2.5-vl', path: model } };
  });
  afterEach(stopWorker);
  after(async () => {
    await tiny?.stop();
  });

  it('trains 2 steps: every sampled completion scored by the reward service as OpenRLHF asks, with the token from its environment and none on its command line; the LoRA adapter and its checkpoints where the pipeline takes them', async () => {
    const proxy = await startRewardProxy({ hold: true });
    let result: TrainResult;
    let rewards: RewardServiceMetrics;
    try {
      rewards = await startWorker(2, proxy);
      const handle = await g.startTraining(request);
      // TRL waits for its first reward: read its command line and environment while it certainly runs.
      await proxy.held;
      const trainers = processesMentioning(`jobs/${job}/`);
      assert.equal(trainers.length, 1, 'the TRL trainer, waiting for a reward');
      const cmdline = readFileSync(`/proc/${trainers[0]}/cmdline`, 'utf8');
      assert.ok(cmdline.includes(`--reward-url\0${proxy.url}\0`), cmdline.replaceAll('\0', ' '));
      assert.equal(cmdline.includes(TOKEN), false, 'no token on the command line');
      assert.ok(readFileSync(`/proc/${trainers[0]}/environ`, 'utf8').split('\0').includes(`CODA_REWARD_TOKEN=${TOKEN}`), 'the token is in its environment');
      proxy.release();
      result = (await handle.result()) as TrainResult;
      const basic = `Basic ${Buffer.from(`openrlhf:${TOKEN}`).toString('base64')}`;
      assert.ok(proxy.authorizations.length === 2 * GENERATIONS && proxy.authorizations.every((a) => a === basic), `every reward request carried the token: ${proxy.authorizations.length}`);
    } finally {
      await proxy.close();
    }
    const { store } = g.h.stack;
    assert.ok(datasetManifestSchema.parse(await store.getJson(g.grpoDataset)).rows >= 2, 'the dataset has the prompts of two steps');
    assert.equal(result.steps, 2);
    assert.equal(typeof result.metrics.reward, 'number', `TRL's reward mean in the progress: ${JSON.stringify(result.metrics)}`);
    // One POST per sample, each the protocol (no 400), each query beginning with its templated prompt and each label a rollout's (no bad_query, bad_label).
    const seen = await counts(rewards);
    assert.equal(seen.samples, 2 * GENERATIONS, `every completion of 2 steps of one prompt and ${GENERATIONS} samples: ${JSON.stringify(seen)}`);
    assert.equal(Object.values(seen.requests).reduce((a, b) => a + b, 0), seen.samples, 'one sample a request');
    assert.deepEqual(Object.keys(seen.requests).filter((o) => o !== 'ok' && o !== 'zero'), [], JSON.stringify(seen.requests));
    for (const reason of ['bad_query', 'bad_label', 'internal_error']) assert.equal(seen.failures[reason] ?? 0, 0, `${reason}: ${JSON.stringify(seen.failures)}`);

    const jobPrefix = trainingJobPrefix(g.h.config.storage.prefix, job);
    assert.equal(await uploadedStep(store, jobPrefix), 2, "the last checkpoint-N uploaded, where a retry's restore finds it");
    const manifest = checkpointManifestSchema.parse(await store.getJson(result.checkpointKey));
    assert.deepEqual({ kind: manifest.kind, steps: manifest.steps, lora: manifest.lora, double: manifest.double }, { kind: 'grpo', steps: 2, lora: true, double: false });
    const files = (await store.list(`${manifest.filesPrefix}/`)).map((f) => f.slice(manifest.filesPrefix.length + 1));
    for (const file of ['adapter_config.json', 'adapter_model.safetensors']) assert.ok(files.includes(file), `${file} in ${files.join(', ')}`);
    const adapter = JSON.parse((await store.get(`${manifest.filesPrefix}/adapter_config.json`)).toString()) as { base_model_name_or_path: string; r: number };
    assert.deepEqual({ base: adapter.base_model_name_or_path, r: adapter.r }, { base: model, r: 4 });
    const tensors = tensorNames(await store.get(`${manifest.filesPrefix}/adapter_model.safetensors`));
    assert.ok(tensors.length > 0 && tensors.every((t) => t.includes('language_model') && t.includes('lora_')), `only LoRA weights of the language model: ${tensors.slice(0, 5).join(', ')}`);
    const log = (await store.get(`${jobPrefix}/logs/attempt-1.log`)).toString();
    assert.match(log, /trl_grpo\.py --model /);
    assert.match(log, new RegExp(`^seed ${runSeed()}: the LoRA's initial weights, the data order and the sampling$`, 'm'), "the run seed (CODA_SEED) is TRL's");
    assert.match(log, /Global step 2: \{/);
  });

  it('run again after the checkpoint manifest was lost, with one more step allowed: resumes from the uploaded checkpoint and trains only step 3', async () => {
    const { store } = g.h.stack;
    await store.delete(checkpointManifestKey(g.h.config.storage.prefix, request.checkpoint));
    const rewards = await startWorker(3);
    const result = (await (await g.startTraining(request)).result()) as TrainResult;
    assert.deepEqual({ steps: result.steps, resumedFromStep: result.resumedFromStep }, { steps: 3, resumedFromStep: 2 });
    assert.equal((await counts(rewards)).samples, GENERATIONS, "only step 3's completions were scored");
    const log = (await store.get(`${trainingJobPrefix(g.h.config.storage.prefix, job)}/logs/attempt-1.log`)).toString();
    assert.match(log, /resuming from .*checkpoint-2/);
    assert.match(log, /Global step 3: \{/);
    assert.doesNotMatch(log, /Global step [12]: /, 'steps 1 and 2 were not trained again');
  });
});
