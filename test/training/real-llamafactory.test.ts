import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { TrainResult } from '../../activities/training/contract';
import type { TrainingHeartbeat } from '../../activities/training/progress';
import { prepareDataset } from '../../activities/training/trainer-inputs';
import { uploadedStep } from '../../activities/training/checkpoints';
import { trainingJobPrefix } from '../../core/keys';
import { checkpointManifestSchema, datasetManifestSchema, plannerMessagesAt, type SftRow } from '../../core/training';
import type { GeneralizationResult } from '../../workflows/training/progress';
import { eventually } from '../support/rollouts';
import { allSteps } from './dataset';
import { heartbeatWhen, type GpuHarness } from '../support/gpu-harness';
import { startTinyPlannerHarness, type TinyPlannerHarness } from '../support/tiny-qwen';
import { SMALL_PLANNER_BOX } from '../../infra/small-planner/rows';
import { generalizationWorkflowId } from '../../workflows/names';

/** The repository's root from build/test/training. */
const ROOT = path.resolve(__dirname, '..', '..', '..');
/** infra/install-trainers.sh's venv. */
const TRAINERS = path.join(ROOT, '.tools', 'trainers', 'bin');
const PYTHON = path.join(TRAINERS, 'python3');
const LLAMAFACTORY = path.join(TRAINERS, 'llamafactory-cli');

const alive = (pid: number): boolean => existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z');

/**
 * The real LLaMA-Factory 0.9.5 (infra/install-trainers.sh, CPU) trains the SFT dataset the
 * pipeline's own code built from recorded trajectories, on a tiny Qwen2.5-VL made here
 * (infra/trainers/tiny_qwen2_5_vl.py), driven by GPU worker processes exactly as in production:
 * the command template of temporal.yaml with CODA_SFT_TRAINER naming the real CLI, the CPU
 * settings a lab without GPUs would put in training.sft.config (use_cpu, no bf16), progress from
 * trainer_log.jsonl, checkpoints uploaded to MinIO, the first worker killed mid-training and the
 * job resumed on a fresh one, and the LoRA adapter handed to the planner's server; then a
 * generalization workflow with it as the SFT trainer. CODA_SKIP_REAL_TRAINERS=1 leaves this file out of the run (.mocharc.js).
 */
describe('the real LLaMA-Factory on CPU: the pipeline\'s SFT dataset trained, resumed and served (real Temporal and MinIO)', function () {
  this.timeout(1_200_000);
  let tiny: TinyPlannerHarness | undefined;
  let g: GpuHarness;
  let scratch: string;
  let model: string;
  let result: TrainResult;
  const job = `reallf-${Date.now()}`;
  const name = `planner-${job}`;
  /** Workers run the real CLI through the command template's variable, as a GPU node would be set up. */
  const realTrainer = { CODA_SFT_TRAINER: LLAMAFACTORY };

  before(async () => {
    assert.ok(existsSync(LLAMAFACTORY), `${LLAMAFACTORY} is missing: run bash infra/install-trainers.sh`);
    tiny = await startTinyPlannerHarness({
      name: 'reallf',
      runtimeLora: true,
      displayFrom: 300,
      edit: (doc) => {
        const sft = (doc.training as Record<string, any>).sft;
        // What a lab training on CPU sets: no GPU, no bf16; a small adapter, one checkpoint per step.
        sft.config = { ...sft.config, use_cpu: true, bf16: false, lora_rank: 8, lora_alpha: 16, num_train_epochs: 2, save_steps: 1, save_total_limit: 2 };
        sft.env = { HF_HUB_OFFLINE: '1', TOKENIZERS_PARALLELISM: 'false' };
      },
    });
    ({ g, scratch, model } = tiny);
  });
  afterEach(async () => g?.stopGpuWorkers());
  after(async () => {
    await tiny?.stop();
  });

  it("renders each SFT row, through LLaMA-Factory's own qwen2_vl template and Qwen2-VL plugin, to the text the planner is served", async () => {
    const dataset = await prepareDataset(g.h.stack.store, g.sftDataset, path.join(scratch, 'datasets'), new AbortController().signal);
    const rows = JSON.parse(readFileSync(dataset.dataFile, 'utf8')) as SftRow[];
    const steps = g.trajectories.flatMap((t) => allSteps(t).map((step) => ({ t, step })));
    assert.equal(rows.length, steps.length);
    const items = rows.map((row, i) => {
      const { t, step } = steps[i]!;
      // The planner's messages as the gateway sends them (image keys become image_url items).
      const served = plannerMessagesAt(t.manifest, step).map((m) => ({ role: m.role, content: typeof m.content === 'string' ? m.content : m.content.map((p) => (p.type === 'text' ? p : { type: 'image_url', image_url: { url: 'x' } })) }));
      return { row, served, reply: t.manifest.steps[step - 1]!.planner.raw };
    });
    const input = JSON.stringify({ model, mediaDir: dataset.dir, imageMaxPixels: SMALL_PLANNER_BOX.width * SMALL_PLANNER_BOX.height, rows: items });
    const output = execFileSync(PYTHON, [path.join(ROOT, 'test', 'training', 'render_sft_rows.py')], { input, env: { ...process.env, HF_HUB_OFFLINE: '1' }, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
    const rendered = JSON.parse(output.trim().split('\n').at(-1)!) as Array<{ llamafactory: string; served: string }>;
    assert.equal(rendered.length, rows.length);
    let withHistory = 0;
    for (const [i, out] of rendered.entries()) {
      assert.equal(out.llamafactory, out.served, `row ${i}`);
      assert.ok(out.served.includes('<|image_pad|>'), 'the images are in both');
      if (rows[i]!.images.length > 1) withHistory += 1;
    }
    assert.ok(withHistory > 0, 'rows with an earlier turn and two screenshots were compared');
  });

  it('trains on a GPU worker process, resumes on a fresh one after the first is killed mid-training, and hands the adapter to serving', async () => {
    const first = await g.spawnGpuWorker('gpu-real-a', realTrainer);
    const handle = await g.startTraining({ job, kind: 'sft', datasetKey: g.sftDataset, checkpoint: name, base: { model: 'tiny-qwen2.5-vl', path: model } }, { heartbeatTimeoutSeconds: 20 });
    const beat: TrainingHeartbeat = await heartbeatWhen(g, handle, 'a checkpoint of the real trainer uploaded mid-training', (b) => (b.uploadedStep ?? 0) >= 1 && b.step < (b.totalSteps ?? 0), 900_000);
    assert.equal(typeof beat.metrics.loss, 'number', `the real trainer's loss in the heartbeat: ${JSON.stringify(beat.metrics)}`);
    process.kill(first, 'SIGKILL');
    await eventually('the trainer to die with its worker', async () => (alive(beat.trainerPid!) ? undefined : true), 30_000);
    const jobPrefix = trainingJobPrefix(g.h.config.storage.prefix, job);
    const uploaded = await uploadedStep(g.h.stack.store, jobPrefix);
    assert.ok(uploaded !== undefined && uploaded >= 1);

    await g.spawnGpuWorker('gpu-real-b', { ...realTrainer, CODA_TEST_GPU_WORK_DIR: path.join(scratch, 'other-gpu-node') });
    result = (await handle.result()) as TrainResult;
    const rows = datasetManifestSchema.parse(await g.h.stack.store.getJson(g.sftDataset)).rows;
    assert.equal(result.resumedFromStep, uploaded, 'resumed from the newest uploaded checkpoint');
    assert.equal(result.steps, rows * 2, 'batch 1, no accumulation, 2 epochs');
    assert.equal(typeof result.metrics.loss, 'number', `the loss of the last step, not the summary's figures: ${JSON.stringify(result.metrics)}`);
    const log = (await g.h.stack.store.get(`${jobPrefix}/logs/attempt-2.log`)).toString();
    assert.match(log, new RegExp(`Resuming training from checkpoint with epoch \\d+ and global step ${uploaded}\\b`), "transformers' own resume message");
    const manifest = checkpointManifestSchema.parse(await g.h.stack.store.getJson(result.checkpointKey));
    assert.deepEqual({ steps: manifest.steps, lora: manifest.lora, double: manifest.double }, { steps: rows * 2, lora: true, double: false });
    const files = (await g.h.stack.store.list(`${manifest.filesPrefix}/`)).map((f) => f.slice(manifest.filesPrefix.length + 1));
    for (const file of ['adapter_config.json', 'adapter_model.safetensors', 'trainer_log.jsonl']) assert.ok(files.includes(file), `${file} in ${files.join(', ')}`);
    const lines = (await g.h.stack.store.get(`${manifest.filesPrefix}/trainer_log.jsonl`)).toString().trim().split('\n').map((l) => JSON.parse(l) as { current_steps: number; loss?: number });
    assert.deepEqual(lines.map((l) => l.current_steps), [...Array.from({ length: rows * 2 - uploaded! }, (_, i) => uploaded! + 1 + i), rows * 2], 'the second attempt trained only the steps after the checkpoint, then the summary line');
    assert.equal(lines.at(-1)!.loss, undefined);
    const adapter = JSON.parse((await g.h.stack.store.get(`${manifest.filesPrefix}/adapter_config.json`)).toString()) as { base_model_name_or_path: string; r: number };
    assert.deepEqual({ base: adapter.base_model_name_or_path, r: adapter.r }, { base: model, r: 8 });

    // Serving from another worker (the training ones stopped: a GPU node's reward port is its own).
    await g.stopGpuWorkers();
    await g.startGpuWorker();
    const served = await g.h.stack.client.workflow.execute('servePlannerOnGpu', { taskQueue: 'reallf-training-tests', workflowId: `serve-${name}`, args: [{ checkpointKey: result.checkpointKey, gpuQueue: g.h.config.taskQueues.gpu }] });
    assert.deepEqual(served, { model: name });
    const dir = path.join(g.h.config.training.serving.dir, name);
    assert.ok(existsSync(path.join(dir, 'adapter_model.safetensors')), 'the real adapter was put where the server reads it');
    const listed = (await (await fetch(`${g.h.models.url}/models`)).json()) as { data: Array<{ id: string; root?: string }> };
    assert.equal(listed.data.find((m) => m.id === name)?.root, dir, 'the planner server loaded it at run time');
  });

  it('a generalization on the test stack completes with the real SFT trainer: rollouts of a specialist, judged, trained by LLaMA-Factory, served and evaluated', async () => {
    const store = g.h.stack.store;
    // A specialist to generalize from: the GRPO double's adapter on the same base (OpenRLHF needs a GPU), served.
    await g.startGpuWorker();
    const specialist = `specialist-${job}`;
    const grpo = (await (await g.startTraining({ job: `${job}-grpo`, kind: 'grpo', datasetKey: g.grpoDataset, checkpoint: specialist, base: g.h.config.training.basePlanner })).result()) as TrainResult;
    assert.ok(grpo.steps > 0);
    await g.stopGpuWorkers();
    // The GPU worker with the real LLaMA-Factory as training.sft.program, as on a GPU node.
    const real = structuredClone(g.h.config);
    real.training.sft.program = LLAMAFACTORY;
    await g.startGpuWorker(real);
    await g.h.startVmHost();
    const genRun = `reallf-gen-${Date.now()}`;
    const result = await g.h.execute<GeneralizationResult>('generalization', generalizationWorkflowId(genRun), {
      run: genRun,
      specialists: [{ software: 'KAlgebra', checkpoint: specialist }],
      tasksPerSoftware: 6,
      attempts: 1,
      evaluationAttempts: 1,
      evaluationTaskIds: { KAlgebra: ['C-03'] },
    });
    const manifest = checkpointManifestSchema.parse(await store.getJson(result.generalist.checkpointKey));
    assert.deepEqual({ kind: manifest.kind, double: manifest.double, lora: manifest.lora, base: manifest.base.path }, { kind: 'sft', double: false, lora: true, base: model }, 'trained by the real LLaMA-Factory from the base');
    assert.ok(manifest.steps > 0 && typeof manifest.metrics.loss === 'number', JSON.stringify(manifest.metrics));
    const log = (await store.get(`${trainingJobPrefix(g.h.config.storage.prefix, manifest.job)}/logs/attempt-1.log`)).toString();
    assert.match(log, /llamafactory-cli train /);
    assert.doesNotMatch(log, /TEST DOUBLE/);
    assert.deepEqual(result.report.rows.map((r) => r.planner), ['base', 'specialist-KAlgebra', 'generalist']);
  });
});
