import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { ModelGateway } from '../../activities/models/gateway';
import { s3Images } from '../../activities/models/images';
import { rewardServiceMetrics, type RewardServiceMetrics } from '../../activities/metrics';
import { s3RewardScorer } from '../../activities/training/reward';
import { startRewardService, type RewardService } from '../../activities/training/reward-service';
import type { Config } from '../../config/schema';
import { formatPlannerOutput } from '../../core/planner-parser';
import { EXTRA_LOG_NAMES } from '../../core/remote-reward';
import { grpoRows, plannerMessagesAt, type GrpoRow } from '../../core/training';
import { checkMicroBatch, rolloutRewardStats } from '../../doubles/trainers/openrlhf';
import { applyChatTemplate } from '../../doubles/trainers/qwen2-vl';
import { startHarness, type Harness } from '../support/harness';
import { freePort } from '../stack';
import { allSteps, recordTrajectory, SCREEN, type RecordedTrajectory } from './dataset';

/**
 * OpenRLHF 0.11.2's own code takes the reward service's answers (deliverable 3 of issue 16):
 * infra/trainers/openrlhf_probe.py runs its rollout dispatch, SingleTurnAgentExecutor with its
 * remote-reward client, the experience tensors, group_norm advantages and the replay buffer's split,
 * with only vLLM, Ray, DeepSpeed and flash-attn stood in (the probe's header says why). The reward
 * services are started as workers/gpu.ts starts them, scoring with the scripted executor double.
 * OpenRLHF is installed by infra/install-trainers.sh into the trainers' venv
 * (CODA_TRAINERS_VENV, default .tools/trainers); CODA_SKIP_REAL_TRAINERS=1 leaves this file out of
 * the mocha spec (.mocharc.js).
 */

const REPO = path.resolve(__dirname, '..', '..', '..');
const PYTHON = path.resolve(REPO, process.env.CODA_TRAINERS_VENV ?? '.tools/trainers', 'bin', 'python');
const PROBE = path.join(REPO, 'infra', 'trainers', 'openrlhf_probe.py');

interface TensorSummary {
  readonly dtype: string;
  readonly values: number[];
}
interface ProbeRun {
  readonly error?: string;
  readonly samples: Array<{ rewards: TensorSummary; scores: TensorSummary; info: Record<string, TensorSummary> }>;
  readonly microBatches: Array<{ size: number; rewards: TensorSummary; advantages: number[]; info: Record<string, TensorSummary> }>;
  readonly replayBuffer: { items: number; trainBatches: number; infoNames: string[] };
  readonly rolloutStats: Record<string, number>;
}
interface RunSpec {
  readonly urls: string[];
  readonly n_samples_per_prompt: number;
  readonly micro_batch_size: number;
  readonly groups: Array<{ prompt: string; label: string; replies: string[] }>;
}

/** The probe's answer for each run: OpenRLHF's results or the exception it raised. */
function probe(runs: RunSpec[]): Promise<ProbeRun[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [PROBE], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, TOKENIZERS_PARALLELISM: 'false' } });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`${PYTHON} ${PROBE} exited ${code}: ${err.slice(-3000)}`));
      resolve((JSON.parse(out.trim().split('\n').at(-1) as string) as { runs: ProbeRun[] }).runs);
    });
    child.stdin.end(JSON.stringify({ runs }));
  });
}

const close = (a: number, b: number): boolean => Math.abs(a - b) < 1e-4;

describe("OpenRLHF 0.11.2's own reward, advantage and replay-buffer code against the reward service", function () {
  this.timeout(600_000);
  let h: Harness;
  let trajectory: RecordedTrajectory;
  let rows: GrpoRow[];
  const services: RewardService[] = [];
  let results: ProbeRun[];
  let healthy: Array<{ url: string; metrics: RewardServiceMetrics }>;
  let down: string;

  /** A reward service as the GPU worker starts it (workers/gpu.ts), on a free port. */
  const startService = async (models: Config['models'] = h.config.models): Promise<{ url: string; metrics: RewardServiceMetrics }> => {
    const settings = { ...h.config.training.rewardService, port: await freePort() };
    const metrics = rewardServiceMetrics();
    const service = await startRewardService({ scorer: s3RewardScorer({ ...h.config, models }, h.stack.store, settings, h.env), host: '127.0.0.1', port: settings.port, cacheSize: settings.cacheSize, limits: settings, metrics, log: () => undefined });
    services.push(service);
    return { url: service.url, metrics };
  };
  const group = (step: number, replies: string[]) => ({ prompt: applyChatTemplate(rows[step - 1]!.prompt), label: rows[step - 1]!.label, replies });
  const count = async (metrics: RewardServiceMetrics, outcome?: string): Promise<number> =>
    (await metrics.requests.get()).values.filter((v) => outcome === undefined || v.labels.outcome === outcome).reduce((a, v) => a + v.value, 0);

  before(async () => {
    if (!existsSync(PYTHON)) throw new Error(`${PYTHON}: no trainers' venv; run bash infra/install-trainers.sh (or set CODA_TRAINERS_VENV)`);
    h = await startHarness({ name: 'orlreal', desktops: 1, displayFrom: 560 });
    trajectory = await recordTrajectory(h.stack.store, h.config, h.env, `orlreal${Date.now()}`, 'C-08');
    rows = grpoRows(trajectory.manifest, trajectory.manifestKey, allSteps(trajectory), { screen: SCREEN, box: h.config.models.planner.image! }).map((r) => r.row);
    const gateway = new ModelGateway({ models: h.config.models, images: s3Images(h.stack.store, 60), env: h.env });
    const planned = async (step: number): Promise<string> => (await gateway.complete('planner', plannerMessagesAt(trajectory.manifest, step))).texts[0]!;
    const vague = formatPlannerOutput('Look around the window.', { kind: 'instruction', text: 'look around' });
    const answer = formatPlannerOutput('The result is visible.', { kind: 'answer', text: '42' });
    healthy = [await startService(), await startService(), await startService()];
    const executorDown = { ...h.config.models, executor: { ...h.config.models.executor, baseUrl: `http://127.0.0.1:${await freePort()}/v1`, maxRetries: 0 } };
    down = (await startService(executorDown)).url;
    results = await probe([
      // Mixed flags in one micro batch of 2: a grounded click (2, type_match) beside an instruction the executor cannot act on
      // (0, unparsable); the planner's DONE (2, primitive) beside an ANS where a DONE belongs (0, primitive).
      { urls: [healthy[0]!.url], n_samples_per_prompt: 2, micro_batch_size: 2, groups: [group(1, [await planned(1), vague]), group(5, [await planned(5), answer])] },
      // An executor outage: every sample of the batch gets 0.
      { urls: [down], n_samples_per_prompt: 2, micro_batch_size: 2, groups: [group(2, [await planned(2), await planned(2)]), group(3, [await planned(3), vague])] },
      // Three GPU workers' reward services: OpenRLHF rotates the samples over them.
      { urls: healthy.map((s) => s.url), n_samples_per_prompt: 3, micro_batch_size: 3, groups: [group(2, [await planned(2), vague, answer]), group(4, [await planned(4), await planned(4), vague])] },
    ]);
  });
  after(async () => {
    for (const s of services) await s.close();
    await h?.stop();
  });

  it('takes answers with different flags in one micro batch: every extra_logs name reaches the replay buffer', () => {
    const run = results[0]!;
    assert.equal(run.error, undefined, `OpenRLHF raised ${run.error}`);
    assert.deepEqual(run.samples.map((s) => s.rewards.values), [[2], [0], [2], [0]]);
    assert.deepEqual(run.samples.map((s) => [s.info.primitive!.values[0], s.info.unparsable!.values[0], s.info.type_match!.values[0]]), [[0, 0, 1], [0, 1, 0], [1, 0, 1], [1, 0, 0]]);
    assert.deepEqual(run.replayBuffer, { items: 4, trainBatches: 4, infoNames: [...run.replayBuffer.infoNames] });
    for (const name of EXTRA_LOG_NAMES) assert.ok(run.replayBuffer.infoNames.includes(name), `${name} in the replay buffer's info`);
    // group_norm: (r - mean) / (std + 1e-9) per prompt, std unbiased: ±1/√2 for a 2-and-0 pair.
    const advantages = run.microBatches.flatMap((b) => b.advantages);
    assert.ok([0.7071, -0.7071, 0.7071, -0.7071].every((a, i) => close(advantages[i]!, a)), `advantages ${advantages}`);
  });

  it('builds float tensors of whole rewards, scores and flags; an all-zero batch (executor outage) gets advantages 0', () => {
    for (const run of results.slice(0, 2)) {
      assert.equal(run.error, undefined, `OpenRLHF raised ${run.error}`);
      for (const sample of run.samples) {
        assert.deepEqual([sample.rewards.dtype, sample.scores.dtype, sample.info.reward!.dtype, sample.info.score!.dtype, sample.info.executor_failed!.dtype], ['float32', 'float32', 'float32', 'float32', 'float32']);
      }
    }
    const outage = results[1]!;
    assert.deepEqual(outage.samples.map((s) => [s.rewards.values[0], s.info.executor_failed!.values[0]]), [[0, 1], [0, 1], [0, 1], [0, 1]]);
    assert.deepEqual(outage.microBatches.map((b) => b.rewards.dtype), ['float32', 'float32']);
    assert.deepEqual(outage.microBatches.flatMap((b) => b.advantages), [0, 0, 0, 0]);
    assert.equal(outage.rolloutStats['rollout/reward_mean'], 0);
    assert.equal(outage.replayBuffer.items, 4);
  });

  it('with several reward URLs: each service scores different samples, none gets empty lists, and all answers train', async () => {
    const run = results[2]!;
    assert.equal(run.error, undefined, `OpenRLHF raised ${run.error}`);
    assert.deepEqual(run.samples.map((s) => s.rewards.values[0]), [2, 0, 0, 2, 2, 0]);
    assert.equal(run.replayBuffer.items, 6);
    // The first run sent its 4 samples to the first service alone; this one 6, one per call, in turn.
    assert.deepEqual(await Promise.all(healthy.map((s) => count(s.metrics))), [6, 2, 2]);
    assert.deepEqual(await Promise.all(healthy.map((s) => count(s.metrics, 'empty'))), [0, 0, 0]);
    const mean = run.rolloutStats['rollout/reward_mean']!;
    assert.ok(close(mean, 1), `rollout/reward_mean ${mean}`);
  });

  it("the OpenRLHF double's micro batches take what OpenRLHF's replay buffer takes, and refuse what it refuses, with its message", () => {
    for (const run of results) {
      const names = run.samples.map((s) => ({ logNames: Object.keys(s.info).filter((k) => (EXTRA_LOG_NAMES as readonly string[]).includes(k)) }));
      for (let i = 0; i < names.length; i += run.microBatches[0]!.size) assert.doesNotThrow(() => checkMicroBatch(names.slice(i, i + run.microBatches[0]!.size)));
    }
    // What OpenRLHF 0.11.2 raised on the answers of a service that logged only the names that applied (issue 16, finding 2).
    assert.throws(() => checkMicroBatch([{ logNames: ['type_match'] }, { logNames: ['unparsable'] }]), /^Error: ValueError: Size of info\[type_match\] \(1\) does not match batch_size \(2\)$/);
  });

  it("the OpenRLHF double's rollout statistics are OpenRLHF's on the same rewards", () => {
    for (const run of results) {
      const double = rolloutRewardStats(run.samples.map((s) => s.rewards.values[0]!));
      for (const key of ['rollout/reward_mean', 'rollout/reward_std'] as const) assert.ok(close(double[key], run.rolloutStats[key]!), `${key}: double ${double[key]}, OpenRLHF ${run.rolloutStats[key]}`);
    }
  });
});
