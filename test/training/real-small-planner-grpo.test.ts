import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { makeVariants } from '../../activities/images/variants';
import { s3Gateway } from '../../activities/models/gateway';
import { TaskLibrary } from '../../activities/tasks/library';
import type { TrainResult } from '../../activities/training/contract';
import { registerPlanner } from '../../activities/training/serving';
import { loadConfig, type LoadedConfig } from '../../config/load';
import { preparedBoxes } from '../../config/schema';
import { pngSize, type Size } from '../../core/images';
import { manifestKey } from '../../core/keys';
import type { ChatMessage } from '../../core/prompts/messages';
import { grpoRows, plannerMessagesAt, type GrpoRow } from '../../core/training';
import { DEFAULT_BOOTSTRAP, signFlipPValue } from '../../core/uncertainty';
import { applyChatTemplate } from '../../doubles/trainers/qwen2-vl';
import { REPO_CONFIG } from '../../infra/ephemeral';
import { LOCAL_KALGEBRA_TASKS, plannerCorpus, referenceRows, referenceTrajectory, SMALL_PLANNER_BOX, writeSftDataset } from '../../infra/small-planner/rows';
import { buildSmallPlanner, checkTrainers, LLAMAFACTORY, PYTHON, SMALL_PLANNER_SAMPLING, smallPlannerGrpo, smallPlannerSft, trainSft, TRL, TRL_GRPO } from '../../infra/small-planner/runs';
import { startGpuHarness, type GpuHarness } from '../support/gpu-harness';
import { runSeed } from '../support/harness';
import { freePort } from '../stack';
import { allSteps, writeDataset, type RecordedTrajectory } from './dataset';

/** The repository's root from build/test/training. */
const ROOT = path.resolve(__dirname, '..', '..', '..');
const LAUNCHER = path.join(ROOT, 'infra', 'serving', 'llamafactory_api.py');
/** A third of the 30 epochs that write every reply: the SFT planner still has room to learn (19-21 of 36 greedy replies right, none of step 2's). */
const EPOCHS = 10;
const SFT_NAME = 'small-planner-sft';
/** Below this the paired test calls a change beyond the noise (core/uncertainty.ts, two-sided). */
const ALPHA = 0.05;

/** One GRPO prompt: what the server is asked (the planner's messages) and what the reward service is sent (the templated prompt, the label). */
interface Prompt {
  readonly messages: readonly ChatMessage[];
  readonly templated: string;
  readonly label: string;
}

const mean = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / values.length;

/** A reward service's answer for one sampled reply, posted as OpenRLHF's engines post a sample: the decoded prompt and completion, the prompt, the label. */
async function rewardOf(url: string, prompt: Prompt, reply: string): Promise<number> {
  const body = { query: [`${prompt.templated}${reply}<|im_end|>`], prompts: [prompt.templated], labels: [prompt.label] };
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal(response.status, 200, await response.clone().text());
  return ((await response.json()) as { rewards: number[] }).rewards[0]!;
}

/** The wrong-reward control's proxy: forwards each request to `target` and answers its rewards negated; counts the samples it negated. */
async function negatingProxy(target: string): Promise<{ url: string; negated: () => number; close: () => Promise<void> }> {
  let negated = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c)).on('end', () => {
      fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) })
        .then(async (answer) => {
          const body = (await answer.json()) as { rewards?: number[] };
          if (answer.ok && Array.isArray(body.rewards)) {
            body.rewards = body.rewards.map((r) => -r);
            negated += body.rewards.length;
          }
          res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        })
        .catch((err: Error) => res.writeHead(502).end(err.message));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/get_reward`, negated: () => negated, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * GRPO by the real TRL moves the real small planner (issue 32 item 5b). The small planner
 * (infra/small-planner) after 10 epochs of SFT by the real LLaMA-Factory on the 12 local KAlgebra
 * tasks' reference rows is the start; the GRPO rows of those tasks' steps are made by the pipeline's
 * grpoRows from the reference trajectories stored in MinIO (every screenshot the real KAlgebra
 * screen), and one epoch of GRPO by TRL 0.29.1 (smallPlannerGrpo) runs through a GPU worker's train
 * activity, every sample scored by the worker's reward service. Before and after, the real LLaMA-Factory
 * server (restarted with the run seed, the trained adapter registered by registerPlanner's restart
 * path) is asked through the gateway for a group of 8 thoughts per prompt, each scored by the reward
 * service; the groups' mean rewards are paired over the prompts by the project's sign-flip test. The
 * wrong-reward control trains the same way with the trainer's rewards negated by a proxy.
 * CODA_SKIP_REAL_TRAINERS=1 leaves this file out of the run (.mocharc.js).
 */
describe('GRPO by the real TRL moves the real small planner: rewards from the reward service, groups sampled by the real server (real Temporal and MinIO)', function () {
  this.timeout(1_800_000);
  const seed = runSeed();
  let g: GpuHarness;
  let scratch: string;
  let sftWeights: string;
  let screen: Size;
  let grpoDataset: string;
  let prompts: Prompt[];
  let config: LoadedConfig;
  let stateDir: string;
  let port: number;
  const launch = (...args: string[]): string => execFileSync('nice', ['-n', '15', PYTHON, LAUNCHER, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

  /** Stores each task's reference trajectory in MinIO as a rollout stores it (the screenshot and its variants at every step); the GRPO dataset of every step. */
  const storeReferenceData = async (tasks: ReturnType<TaskLibrary['load']>, screenshot: Buffer): Promise<RecordedTrajectory[]> => {
    const { store } = g.h.stack;
    const prefix = g.h.config.storage.prefix;
    const trajectories: RecordedTrajectory[] = [];
    for (const task of tasks) {
      const manifest = referenceTrajectory(task, screen, prefix);
      for (const key of new Set([manifest.initialScreenshotKey, ...manifest.steps.map((s) => s.screenshotKey)])) {
        await store.put(key, screenshot, 'image/png');
        for (const variant of await makeVariants(key, screenshot, preparedBoxes(g.h.config))) await store.put(variant.key, variant.png, 'image/png');
      }
      const key = manifestKey(prefix, { run: manifest.run, software: manifest.software, task: manifest.taskId, attempt: manifest.attempt });
      await store.putJson(key, manifest);
      trajectories.push({ manifest, manifestKey: key });
    }
    return trajectories;
  };

  /** Each prompt's group mean reward of the served model `name`: n thoughts sampled by the real server through the gateway, each scored by the reward service at `rewardUrl`. */
  const groupMeans = async (name: string, rewardUrl: string): Promise<number[]> => {
    const gateway = s3Gateway(config, g.h.stack.store, { env: g.h.env });
    const { n, temperature, maxTokens } = SMALL_PLANNER_SAMPLING;
    const means: number[] = [];
    for (const prompt of prompts) {
      const sampled = await gateway.complete('planner', prompt.messages, { n, temperature, maxTokens, model: name, sourceSize: screen });
      assert.equal(sampled.texts.length, n);
      means.push(mean(await Promise.all(sampled.texts.map((text) => rewardOf(rewardUrl, prompt, text)))));
    }
    return means;
  };

  /** Trains a GRPO job from the SFT weights on a GPU worker with `grpo` as its trainer; the worker stays up (its reward service scores the groups), the result. */
  const trainGrpo = async (job: string, grpo: LoadedConfig['training']['grpo']): Promise<{ result: TrainResult; rewardUrl: string }> => {
    const variant = structuredClone(g.h.config);
    variant.training.grpo = grpo;
    const gpu = await g.startGpuWorker(variant);
    const result = (await (await g.startTraining({ job, kind: 'grpo', datasetKey: grpoDataset, checkpoint: job, base: { model: SFT_NAME, path: sftWeights } })).result()) as TrainResult;
    return { result, rewardUrl: gpu.rewardService.url };
  };

  before(async () => {
    checkTrainers();
    assert.ok(existsSync(path.join(TRL, 'trl')), `${TRL} is missing: run bash infra/install-trainers.sh`);
    scratch = mkdtempSync(path.join(tmpdir(), 'coda-small-planner-grpo-'));
    const screenshot = readFileSync(path.join(ROOT, 'bench', 'fixtures', 'kalgebra-1920x1080.png'));
    screen = pngSize(screenshot)!;
    const tasks = new TaskLibrary().load('KAlgebra', LOCAL_KALGEBRA_TASKS);
    const model = path.join(scratch, 'model');
    buildSmallPlanner(model, plannerCorpus(screen), SMALL_PLANNER_BOX, seed);
    const sftData = await writeSftDataset(path.join(scratch, 'sft-data'), `small-planner-${seed}`, referenceRows(tasks, screen, SMALL_PLANNER_BOX), screenshot, SMALL_PLANNER_BOX);
    const sft = smallPlannerSft(loadConfig(REPO_CONFIG).training.sft, `nice -n 15 ${LLAMAFACTORY}`, EPOCHS, seed);
    sftWeights = (await trainSft(sft, sftData, model, path.join(scratch, 'sft'), SMALL_PLANNER_BOX)).output;

    g = await startGpuHarness({
      name: 'realgrpo',
      displayFrom: Number(process.env.CODA_DISPLAY_BASE ?? 680),
      edit: (doc) => {
        const training = doc.training as Record<string, any>;
        training.basePlanner.path = sftWeights;
        (doc.models as Record<string, any>).planner.image = SMALL_PLANNER_BOX;
        training.grpo = smallPlannerGrpo(`nice -n 15 ${TRL_GRPO}`, seed);
      },
    });
    const trajectories = await storeReferenceData(tasks, screenshot);
    grpoDataset = await writeDataset(g.h.stack.store, g.h.config.storage.prefix, `small-planner-grpo-${seed}`, 'grpo', trajectories, SMALL_PLANNER_BOX);
    const view = { screen, box: SMALL_PLANNER_BOX };
    prompts = trajectories.flatMap((t) =>
      grpoRows(t.manifest, t.manifestKey, allSteps(t), view).map(({ row, step }: { row: GrpoRow; step: number }) => ({
        messages: plannerMessagesAt(t.manifest, step),
        templated: applyChatTemplate(row.prompt),
        label: row.label,
      })),
    );

    port = await freePort();
    stateDir = path.join(scratch, 'planner-server');
    config = structuredClone(g.h.config);
    config.models.planner = { ...config.models.planner, baseUrl: `http://127.0.0.1:${port}/v1`, model: SFT_NAME };
    // The restart path serves a GRPO adapter on the SFT weights it was trained on, sampling seeded with the run seed at each start.
    config.training.serving = {
      kind: 'restart',
      dir: path.join(scratch, 'served'),
      command: ['nice', '-n', '15', PYTHON, LAUNCHER, 'start', '--model', sftWeights, '--adapter', '{path}', '--name', '{name}', '--port', String(port), '--state-dir', stateDir, '--seed', String(seed)],
      healthUrl: `http://127.0.0.1:${port}/v1/models`,
      timeoutSeconds: 300,
    };
  });
  after(async () => {
    if (stateDir !== undefined && existsSync(path.join(stateDir, 'server.pid'))) launch('stop', '--state-dir', stateDir);
    await g?.stop();
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  });

  it("one epoch raises each prompt's group mean reward beyond the noise; with the trainer's rewards negated (the wrong-reward control) it falls", async () => {
    const { store } = g.h.stack;
    const trained = await trainGrpo(`small-planner-grpo-${seed}-${Date.now()}`, g.h.config.training.grpo);
    launch('start', '--model', sftWeights, '--name', SFT_NAME, '--port', String(port), '--state-dir', stateDir, '--seed', String(seed));
    const before = await groupMeans(SFT_NAME, trained.rewardUrl);
    const after = await groupMeans((await registerPlanner(config, store, trained.result.checkpointKey, g.h.env)).model, trained.rewardUrl);
    await g.stopGpuWorkers();

    const proxy = await negatingProxy(trained.rewardUrl);
    try {
      const negated = await trainGrpo(`small-planner-grpo-negated-${seed}-${Date.now()}`, smallPlannerGrpo(`nice -n 15 ${TRL_GRPO}`, seed, proxy.url));
      const wrong = await groupMeans((await registerPlanner(config, store, negated.result.checkpointKey, g.h.env)).model, negated.rewardUrl);
      await g.stopGpuWorkers();
      const steps = Math.ceil(prompts.length / 2);
      assert.deepEqual([trained.result.steps, negated.result.steps], [steps, steps], `one epoch of ${prompts.length} prompts, 2 a step`);
      assert.equal(proxy.negated(), steps * 2 * SMALL_PLANNER_SAMPLING.n, "every sample of the control's trainer was scored through the negating proxy");

      const paired = (row: number[]): number => signFlipPValue([row.map((r, i) => r - before[i]!)], DEFAULT_BOOTSTRAP);
      const [pAfter, pWrong] = [paired(after), paired(wrong)];
      console.log(`      seed ${seed}, ${prompts.length} prompts, mean group reward: before ${mean(before).toFixed(3)}, after GRPO ${mean(after).toFixed(3)} (p ${pAfter.toFixed(4)}), after GRPO with negated rewards ${mean(wrong).toFixed(3)} (p ${pWrong.toFixed(4)})`);
      assert.ok(mean(after) > mean(before) && pAfter < ALPHA, `after GRPO ${mean(after)} against ${mean(before)} before, p ${pAfter}`);
      assert.ok(mean(wrong) < mean(before) && pWrong < ALPHA, `after GRPO with negated rewards ${mean(wrong)} against ${mean(before)} before, p ${pWrong}`);
    } finally {
      await proxy.close();
    }
  });
});
