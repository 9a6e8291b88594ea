import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import type { TrainRequest, TrainResult } from '../../activities/training/contract';
import type { TrainingHeartbeat } from '../../activities/training/progress';
import { datasetManifestSchema, checkpointManifestSchema } from '../../core/training';
import { checkpointPrefix, trainingJobPrefix } from '../../core/keys';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { uploadedStep } from '../../activities/training/checkpoints';
import { eventually } from '../support/rollouts';
import { startGpuHarness, heartbeatWhen, setFlag, type GpuHarness } from '../support/gpu-harness';
import { startRewardProxy } from '../support/reward-proxy';
import { alive, causes, processesMentioning } from './processes';

describe('training on a GPU worker (trainer doubles, real Temporal and MinIO)', function () {
  this.timeout(300_000);
  let g: GpuHarness;
  let n = 0;
  const request = (kind: 'grpo' | 'sft', extra: Partial<TrainRequest> = {}): TrainRequest => ({
    job: `${g.h.hostId}-${kind}-${Date.now()}-${n++}`,
    kind,
    datasetKey: kind === 'grpo' ? g.grpoDataset : g.sftDataset,
    checkpoint: `planner-${kind}-${Date.now()}-${n}`,
    base: g.h.config.training.basePlanner,
    ...extra,
  });

  before(async () => {
    g = await startGpuHarness({ name: 'train', stepMs: 250 });
  });
  afterEach(async () => g?.stopGpuWorkers());
  after(async () => g?.stop());

  it('GRPO end to end: OpenRLHF sampling and remote rewards, heartbeats with progress, checkpoints and the manifest with lineage', async () => {
    await g.startGpuWorker();
    const req = request('grpo');
    const handle = await g.startTraining(req);
    const beats: TrainingHeartbeat[] = [];
    const watching = (async () => {
      for (;;) {
        const beat = await g.heartbeat(handle).catch(() => undefined);
        if (beat !== undefined) beats.push(beat);
        if ((await handle.describe()).status.name !== 'RUNNING') return;
        await sleep(200);
      }
    })();
    const result = (await handle.result()) as TrainResult;
    await watching;
    const dataset = datasetManifestSchema.parse(await g.h.stack.store.getJson(g.grpoDataset));
    assert.equal(result.steps, dataset.rows, 'one global step per prompt (--rollout.batch_size 1)');
    assert.equal(result.resumedFromStep, undefined);
    assert.ok(result.metrics['rollout/reward_mean']! > 0, `rewards came from the reward service: ${JSON.stringify(result.metrics)}`);
    assert.equal(result.metrics.kl, 0, 'the double reports an unchanged policy');
    assert.ok(beats.some((b) => b.phase === 'training' && b.step > 0 && b.totalSteps === dataset.rows && 'policy_loss' in b.metrics), `progress in heartbeats: ${JSON.stringify(beats.at(-1))}`);

    const manifest = checkpointManifestSchema.parse(await g.h.stack.store.getJson(result.checkpointKey));
    assert.deepEqual(
      { name: manifest.name, kind: manifest.kind, job: manifest.job, dataset: manifest.dataset, base: manifest.base, lora: manifest.lora, double: manifest.double, steps: manifest.steps },
      { name: req.checkpoint, kind: 'grpo', job: req.job, dataset: g.grpoDataset, base: req.base, lora: true, double: true, steps: dataset.rows },
    );
    assert.deepEqual(manifest.sources, dataset.sources, 'the lineage names the trajectories and verdicts');
    const files = await g.h.stack.store.list(`${checkpointPrefix(g.h.config.storage.prefix, req.checkpoint)}/files/`);
    assert.deepEqual(files.map((f) => f.slice(f.lastIndexOf('/') + 1)).sort(), ['adapter_config.json', 'adapter_model.safetensors', 'coda-trainer-double.json', 'planner-policy.json'], 'the placeholder adapter and the learning planner double’s logits');
    const job = trainingJobPrefix(g.h.config.storage.prefix, req.job);
    const marker = (await g.h.stack.store.getJson(`${job}/checkpoints/latest.json`)) as { step: number; files: string[] };
    assert.equal(marker.step, dataset.rows, 'the last checkpoint was uploaded');
    assert.ok(marker.files.includes('_actor/latest'));
    assert.match((await g.h.stack.store.get(`${job}/logs/attempt-1.log`)).toString(), /✨ Global step 1: \{'policy_loss'/);
  });

  it("GRPO with the reward service's token: on no command line of the running trainer (/proc/<pid>/cmdline, read by every user), in its environment, and every reward request carries it", async () => {
    const token = 'c0da-reward-token-0123456789abcdef';
    // The trainer's second reward URL is a proxy that holds its requests: the trainer certainly runs while the test reads /proc.
    const proxy = await startRewardProxy({ hold: true });
    try {
      const config = structuredClone(g.h.config);
      setFlag(config.training.grpo.args, '--reward.remote_url', `{rewardUrl},${proxy.url}`);
      const gpu = await g.startGpuWorker(config, { ...g.h.env, CODA_REWARD_TOKEN: token });
      proxy.target = gpu.rewardService.url;
      const req = request('grpo');
      const handle = await g.startTraining(req);
      await proxy.held;
      const trainers = processesMentioning(`jobs/${req.job}/`);
      assert.equal(trainers.length, 1, 'the trainer double, waiting for a reward');
      const pid = trainers[0]!;
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      assert.ok(cmdline.includes(`--reward.remote_url\0${gpu.rewardService.url},${proxy.url}\0`), cmdline.replaceAll('\0', ' '));
      assert.equal(cmdline.includes(token), false, 'no token on the command line');
      assert.ok(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`CODA_REWARD_TOKEN=${token}`), 'the token is in the environment');
      assert.equal(statSync(`/proc/${pid}/environ`).mode & 0o777, 0o400, "which only the trainer's user reads");
      proxy.release();
      const result = (await handle.result()) as TrainResult;
      assert.ok(result.metrics['rollout/reward_mean']! > 0, `rewards came from the reward service: ${JSON.stringify(result.metrics)}`);
      const basic = `Basic ${Buffer.from(`openrlhf:${token}`).toString('base64')}`;
      assert.ok(proxy.authorizations.length > 0 && proxy.authorizations.every((a) => a === basic), `every request through the proxy carried the token: ${proxy.authorizations.length}`);
      assert.doesNotMatch((await g.h.stack.store.get(`${trainingJobPrefix(g.h.config.storage.prefix, req.job)}/logs/attempt-1.log`)).toString(), new RegExp(token));
    } finally {
      await proxy.close();
    }
  });

  it('SFT end to end: LLaMA-Factory inputs, trainer_log.jsonl progress, checkpoints and the manifest', async () => {
    await g.startGpuWorker();
    const parent = `${g.h.config.storage.prefix}/checkpoints/some-specialist/manifest.json`;
    const req = request('sft', { parent });
    const result = (await (await g.startTraining(req)).result()) as TrainResult;
    const dataset = datasetManifestSchema.parse(await g.h.stack.store.getJson(g.sftDataset));
    assert.equal(result.steps, dataset.rows, 'batch 1, one epoch: one step per row');
    // The rows' negative log-likelihood under the learning planner double: the harness's base planner never errs and
    // the rows are its reference steps, so the loss is about 0.
    assert.ok(result.metrics.loss !== undefined && result.metrics.loss >= 0 && result.metrics.loss < 0.01, `loss ${result.metrics.loss}`);
    assert.equal(result.metrics.percentage, 100);
    const manifest = checkpointManifestSchema.parse(await g.h.stack.store.getJson(result.checkpointKey));
    assert.deepEqual({ kind: manifest.kind, parent: manifest.parent, lora: manifest.lora, double: manifest.double, steps: manifest.steps }, { kind: 'sft', parent, lora: true, double: true, steps: dataset.rows });
    const files = (await g.h.stack.store.list(`${manifest.filesPrefix}/`)).map((f) => f.slice(manifest.filesPrefix.length + 1)).sort();
    assert.ok(files.includes('adapter_model.safetensors') && files.includes('trainer_log.jsonl'), files.join(', '));
    assert.ok(files.every((f) => !f.startsWith('checkpoint-')), 'intermediate checkpoints are not part of the model');
  });

  it('a finished job asked again returns its checkpoint without training; another job cannot take the name', async () => {
    await g.startGpuWorker();
    const req = request('sft');
    const first = (await (await g.startTraining(req)).result()) as TrainResult;
    const other = await g.startTraining({ ...req, job: `${req.job}-again` });
    await assert.rejects(other.result(), (err: Error) => /already exists, trained by job/.test(causes(err)));
    const repeat = await g.h.stack.client.workflow.execute('trainOnGpu', {
      taskQueue: `train-training-tests`,
      workflowId: `repeat-${req.job}`,
      args: [{ request: req, gpuQueue: g.h.config.taskQueues.gpu, heartbeatTimeoutSeconds: 30, maximumAttempts: 1 }],
    });
    assert.deepEqual(repeat, { checkpointKey: first.checkpointKey, steps: first.steps, metrics: first.metrics });
  });

  it('a trainer that refuses its command line fails the job at once, with its own message; a trainer that fails is retried', async () => {
    const config = structuredClone(g.h.config);
    config.training.grpo.args = [...config.training.grpo.args, '--rollout.num_samples', '8'];
    await g.startGpuWorker(config);
    const refused = await g.startTraining(request('grpo'), { maximumAttempts: 3 });
    await assert.rejects(refused.result(), (err: Error) => /trainer exited with 2; last lines of its log:\n.*train_ppo_ray\.py: error: unrecognized arguments: --rollout\.num_samples 8/s.test(causes(err)));
    const history = await refused.fetchHistory();
    assert.equal(history.events?.filter((e) => e.activityTaskStartedEventAttributes).length, 1, 'not retried');
    await g.stopGpuWorkers();

    const failing = structuredClone(g.h.config);
    failing.training.sft.config = { ...failing.training.sft.config, learning_rat: 1e-5 };
    await g.startGpuWorker(failing);
    const failed = await g.startTraining(request('sft'), { maximumAttempts: 2 });
    await assert.rejects(failed.result(), (err: Error) => /trainer exited with 1; .*Some keys are not used by the HfArgumentParser: \['learning_rat'\]/s.test(causes(err)));
    const attempts = (await failed.fetchHistory()).events?.find((e) => e.activityTaskStartedEventAttributes)?.activityTaskStartedEventAttributes?.attempt;
    assert.equal(attempts, 2, 'a failed training is tried again');
  });

  it('continues from a parent checkpoint in S3: fetched to the node; a LoRA parent goes on its own base as the adapter, full weights are the model; OpenRLHF refuses an adapter', async () => {
    const { store } = g.h.stack;
    const bucket = g.h.config.storage.bucket;
    await g.startGpuWorker();
    const lora = (await (await g.startTraining(request('sft'))).result()) as TrainResult;
    const loraParent = checkpointManifestSchema.parse(await store.getJson(lora.checkpointKey));
    const onLora = request('sft', { base: { model: loraParent.name, path: `s3://${bucket}/${loraParent.filesPrefix}` }, parent: lora.checkpointKey });
    const child = checkpointManifestSchema.parse(await store.getJson(((await (await g.startTraining(onLora)).result()) as TrainResult).checkpointKey));
    assert.deepEqual({ parent: child.parent, base: child.base }, { parent: lora.checkpointKey, base: onLora.base });
    const log = (await store.get(`${trainingJobPrefix(g.h.config.storage.prefix, onLora.job)}/logs/attempt-1.log`)).toString();
    assert.match(log, /Loaded adapter\(s\): \S+\/models\/[0-9a-f]{16}\n/, 'the parent adapter, downloaded to the node, is loaded');
    const adapter = JSON.parse((await store.get(`${child.filesPrefix}/adapter_config.json`)).toString()) as { base_model_name_or_path: string };
    assert.equal(adapter.base_model_name_or_path, loraParent.base.path, "the child adapter is on the parent's own base");
    const refused = await g.startTraining(request('grpo', { base: onLora.base, parent: lora.checkpointKey }));
    await assert.rejects(refused.result(), (err: Error) => /is a LoRA adapter: OpenRLHF starts from full weights/.test(causes(err)));
    await g.stopGpuWorkers();

    const fullConfig = structuredClone(g.h.config);
    fullConfig.training.sft.config = { ...fullConfig.training.sft.config, finetuning_type: 'full' };
    await g.startGpuWorker(fullConfig);
    const full = (await (await g.startTraining(request('sft'))).result()) as TrainResult;
    const fullParent = checkpointManifestSchema.parse(await store.getJson(full.checkpointKey));
    assert.equal(fullParent.lora, false);
    const onFull = request('grpo', { base: { model: fullParent.name, path: `s3://${bucket}/${fullParent.filesPrefix}` }, parent: full.checkpointKey });
    const grpoChild = checkpointManifestSchema.parse(await store.getJson(((await (await g.startTraining(onFull)).result()) as TrainResult).checkpointKey));
    const model = (JSON.parse((await store.get(`${grpoChild.filesPrefix}/adapter_config.json`)).toString()) as { base_model_name_or_path: string }).base_model_name_or_path;
    assert.match(model, /\/models\/[0-9a-f]{16}$/, 'OpenRLHF trains on the full parent weights fetched to the node');
    assert.ok(existsSync(path.join(model, 'model.safetensors')));
  });

  it('SIGKILL of the GPU worker mid-training: the trainer dies with it, and the retry on a fresh worker resumes from the last uploaded checkpoint', async () => {
    const first = await g.spawnGpuWorker('gpu-a', { CODA_TEST_STEP_MS: '700' });
    const req = request('grpo');
    const handle = await g.startTraining(req, { heartbeatTimeoutSeconds: 5 });
    const beat = await heartbeatWhen(g, handle, 'a checkpoint uploaded mid-training', (b) => (b.uploadedStep ?? 0) >= 2 && b.step < (b.totalSteps ?? 0));
    process.kill(first, 'SIGKILL');
    await eventually('the trainer to die with its worker', async () => (alive(beat.trainerPid!) ? undefined : true), 15_000);
    const jobPrefix = trainingJobPrefix(g.h.config.storage.prefix, req.job);
    const uploaded = await uploadedStep(g.h.stack.store, jobPrefix);
    assert.ok(uploaded !== undefined && uploaded >= 2);

    // Another node: its own work directory, nothing of the first attempt on its disk.
    const freshDir = path.join(g.h.config.dataDir, 'other-gpu-node');
    await g.spawnGpuWorker('gpu-b', { CODA_TEST_GPU_WORK_DIR: freshDir, CODA_TEST_STEP_MS: '50' });
    const result = (await handle.result()) as TrainResult;
    const rows = datasetManifestSchema.parse(await g.h.stack.store.getJson(g.grpoDataset)).rows;
    assert.equal(result.resumedFromStep, uploaded, 'resumed from the newest uploaded checkpoint');
    assert.equal(result.steps, rows);
    const log = (await g.h.stack.store.get(`${jobPrefix}/logs/attempt-2.log`)).toString();
    assert.match(log, /Loading the checkpoint: .*other-gpu-node/);
    const steps = [...log.matchAll(/Global step (\d+):/g)].map((m) => Number(m[1]));
    assert.deepEqual(steps, Array.from({ length: rows - uploaded! }, (_, i) => uploaded! + 1 + i), 'the second attempt trained only the steps after the checkpoint');
    const manifest = checkpointManifestSchema.parse(await g.h.stack.store.getJson(result.checkpointKey));
    assert.equal(manifest.steps, rows);
  });

  it('cancelling training stops the trainer\'s process group: no trainer process is left', async () => {
    const worker = await g.spawnGpuWorker('gpu-c', { CODA_TEST_STEP_MS: '1000' });
    const req = request('sft');
    const handle = await g.startTraining(req);
    const beat = await heartbeatWhen(g, handle, 'the trainer to be training', (b) => b.phase === 'training' && b.trainerPid !== undefined && b.step >= 1);
    assert.ok(alive(beat.trainerPid!));
    assert.notDeepEqual(processesMentioning(`jobs/${req.job}/`), [], 'the trainer runs before the cancellation');
    await handle.cancel();
    await assert.rejects(handle.result(), (err: Error) => /cancel/i.test(causes(err)));
    assert.equal(alive(beat.trainerPid!), false, 'the trainer is gone');
    assert.deepEqual(processesMentioning(`jobs/${req.job}/`), [], 'nothing of the job is left running');
    assert.ok(alive(worker), 'the worker itself goes on');
  });
});
