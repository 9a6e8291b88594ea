import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { DatasetRequest, DatasetSummary } from '../../activities/datasets/activities';
import type { ServeResult, TrainResult } from '../../activities/training/contract';
import type { LoadedConfig } from '../../config/load';
import type { EvaluationReport } from '../../core/report';
import { datasetManifestKey } from '../../core/keys';
import { datasetManifestSchema, type SftRow } from '../../core/training';
import { compareWithBase, DEFAULT_BOOTSTRAP, pairTasks, type Comparison } from '../../core/uncertainty';
import { LEARNABLE_TASKS } from '../../apps/kalgebra/seeds';
import { plannerCorpus, shuffledReplies, SMALL_PLANNER_BOX } from '../../infra/small-planner/rows';
import { smallPlannerModel } from '../../infra/small-planner/artifacts';
import { checkTrainers, LLAMAFACTORY, PYTHON, smallPlannerSft } from '../../infra/small-planner/runs';
import type { EvaluationResult } from '../../workflows/evaluation/evaluation';
import { judgeRunWorkflowId } from '../../workflows/names';
import { startGpuHarness, type GpuHarness } from '../support/gpu-harness';
import { runSeed } from '../support/harness';
import { LAUNCHER, PLANNER_KEY_ENV, plannerKeyEnv, smallPlannerEdit, stopSmallPlannerServer } from '../support/tiny-qwen';
import { freePort } from '../stack';

const TASKS = [...LEARNABLE_TASKS];
/** Epochs of each SFT: bench/small-planner.ts's 30, after which the small planner wrote all 36 reference replies (10 left the typed expressions of step 2 unlearnt). */
const EPOCHS = 30;
/**
 * Evaluation attempts per task. The planner's temperature is 0 (temporal.yaml): the real server
 * answers greedily, so a task's attempts differ only by what the desktop shows, and one is enough:
 * with 12 tasks, a planner that solves 10 where the other solves none is beyond the noise (p 0.002).
 */
const K = 1;
const BASE = 'small-planner';
/** The gpu harness's queue of test workflows (test/training/workflows.ts). */
const TEST_QUEUE = 'smalldesk-training-tests';

/**
 * The control of issue 32 item 5(a): the pipeline's SFT dataset with the thoughts shuffled across
 * its steps (infra/small-planner/rows.ts shuffledReplies: no step keeps a reply of its own text),
 * stored beside it as a dataset of its own. A planner trained on it learns the replies' format and
 * words, never which thought a situation calls for.
 */
async function shuffledThoughtsDataset(g: GpuHarness, datasetKey: string, id: string, seed: number): Promise<string> {
  const { store } = g.h.stack;
  const manifest = datasetManifestSchema.parse(await store.getJson(datasetKey));
  const rows = JSON.parse((await store.get(manifest.dataKey)).toString('utf8')) as SftRow[];
  const shuffled = shuffledReplies(rows.map((row) => ({ taskId: '', step: 0, row })), seed).map((r) => r.row);
  const data = `[\n${shuffled.map((row) => JSON.stringify(row)).join(',\n')}\n]\n`;
  const dataKey = manifest.dataKey.replace(`/${manifest.id}/`, `/${id}/`);
  await store.put(dataKey, data, 'application/json');
  const key = datasetManifestKey(g.h.config.storage.prefix, id);
  await store.putJson(key, { ...manifest, id, dataKey, bytes: { ...manifest.bytes, data: Buffer.byteLength(data) } });
  return key;
}

/**
 * Issue 32 item 5(a): the real small planner (infra/trainers/tiny_qwen2_5_vl.py --size small,
 * weights seeded from CODA_SEED), trained by the real LLaMA-Factory through the GPU worker on the
 * pipeline's SFT dataset of judged successful trajectories of the 12 local KAlgebra tasks (rolled
 * out on real KAlgebra desktops by the planner double, which follows the reference plans, judged by
 * the judge double), served by the real LLaMA-Factory API server through training.serving's
 * restart path (full weights: --model {path}), then evaluated on those tasks by the production
 * evaluation workflow, rollouts and gateway on the real desktops, the executor double grounding
 * only the plans' own thoughts. Its Average@k is beyond the noise (the report's paired test) above
 * the untrained small planner's and above that of the same SFT on the thoughts shuffled across
 * steps, which is not above the untrained one. The server's sampling, the SFT and the weights
 * are seeded from the run seed. CODA_SKIP_REAL_TRAINERS=1 leaves this file out (.mocharc.js).
 */
describe('the real small planner, SFT by the real LLaMA-Factory on judged trajectories and served by the real server, acts on the real KAlgebra desktops', function () {
  this.timeout(1_800_000);
  let g: GpuHarness;
  let scratch: string;
  let model: string;
  let stateDir: string;
  let port: number;
  /** The orchestrator's config while the real server serves the planner. */
  let realPlanner: LoadedConfig;
  const seed = runSeed();

  before(async () => {
    checkTrainers();
    scratch = mkdtempSync(path.join(tmpdir(), 'coda-small-desktops-'));
    // The untrained planner of the run seed, from the artifact cache (read only: the SFTs write the GPU worker's folders).
    model = (await smallPlannerModel(plannerCorpus({ width: 1920, height: 1080 }), SMALL_PLANNER_BOX, seed)).dir;
    port = await freePort();
    stateDir = path.join(scratch, 'planner-server');
    g = await startGpuHarness({
      name: 'smalldesk',
      desktops: 2,
      displayFrom: Number(process.env.CODA_DISPLAY_BASE ?? 1000),
      edit: smallPlannerEdit({ model, name: BASE, scratch, port, stateDir, seed }),
      env: plannerKeyEnv(),
    });
    realPlanner = structuredClone(g.h.config);
    realPlanner.training.sft = smallPlannerSft(realPlanner.training.sft, `nice -n 5 ${LLAMAFACTORY}`, EPOCHS, seed);
    realPlanner.models.planner = { ...realPlanner.models.planner, baseUrl: `http://127.0.0.1:${port}/v1`, model: BASE, imageTransport: 'data' };
    await g.h.startVmHost();
    // The GPU worker trains, and registers each checkpoint with the planner's server: the real one, whose /models it checks.
    await g.startGpuWorker(realPlanner);
  });
  after(async () => {
    stopSmallPlannerServer(stateDir);
    await g?.stop();
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  });

  /** The evaluation workflow on the local tasks with one row; that row of its report. */
  const evaluate = async (run: string, planner: string, name: string, attempts: number): Promise<EvaluationReport['rows'][number]> => {
    const result = await g.h.execute<EvaluationResult>('evaluation', `evaluation-${run}`, { run, series: 'small-desktops', software: ['KAlgebra'], attempts, taskIds: { KAlgebra: TASKS }, planners: [{ name, model: planner }] });
    const row = (await g.h.stack.store.getJson<EvaluationReport>(result.key)).rows[0]!;
    console.log(`      ${name}: Average@${attempts} ${row.metrics.overall.averageAtK.toFixed(3)}, tasks ${JSON.stringify(row.metrics.tasks.map((t) => [t.taskId, t.successes]))}`);
    return row;
  };
  /** Trains the small planner on a dataset through the GPU worker; the checkpoint's key. */
  const train = async (job: string, datasetKey: string): Promise<string> => {
    const handle = await g.startTraining({ job, kind: 'sft', datasetKey, checkpoint: job, base: { model: BASE, path: model } });
    return ((await handle.result()) as TrainResult).checkpointKey;
  };
  /** Registers a checkpoint with the real server through the GPU worker's servePlanner activity (the restart path). */
  const serve = (checkpointKey: string): Promise<ServeResult> =>
    g.h.stack.client.workflow.execute('servePlannerOnGpu', { taskQueue: TEST_QUEUE, workflowId: `serve-${checkpointKey.replaceAll('/', '-')}`, args: [{ checkpointKey, gpuQueue: g.h.config.taskQueues.gpu }] }) as Promise<ServeResult>;
  const vs = (a: EvaluationReport['rows'][number], b: EvaluationReport['rows'][number]): Comparison => compareWithBase([pairTasks(a.metrics.tasks, b.metrics.tasks)], DEFAULT_BOOTSTRAP);
  const beyond = (c: Comparison): boolean => c.difference > 0 && !c.withinNoise;

  it(`after SFT (${EPOCHS} epochs) on the judged successes, the served planner's Average@${K} is beyond the noise above the untrained planner's and the shuffled-thoughts control's, which is not above untrained`, async () => {
    // The pipeline's training data: the planner double's rollouts of the tasks, judged, made into the SFT dataset.
    const reference = `small-ref-${seed}`;
    await evaluate(reference, g.h.config.models.planner.model, 'reference', 1);
    await g.h.execute('judgeRun', judgeRunWorkflowId(reference, 'KAlgebra'), { run: reference, software: 'KAlgebra' });
    const request: DatasetRequest = { id: `small-sft-${seed}`, kind: 'sft', sources: [{ run: reference, software: 'KAlgebra' }] };
    const dataset = (await g.h.stack.client.workflow.execute('buildDatasetOnOrchestrator', { taskQueue: TEST_QUEUE, workflowId: `dataset-${request.id}`, args: [{ request, queue: g.h.config.taskQueues.orchestrator }] })) as DatasetSummary;
    console.log(`      SFT dataset: ${dataset.rows} rows of ${dataset.trajectories} judged successes`);
    assert.ok(dataset.trajectories >= TASKS.length / 2, `the judge passed ${dataset.trajectories} of ${TASKS.length} reference rollouts`);
    const shuffledKey = await shuffledThoughtsDataset(g, dataset.key, `small-sft-shuffled-${seed}`, seed);
    const sft = await train(`small-sft-${seed}`, dataset.key);
    const control = await train(`small-sft-shuffled-${seed}`, shuffledKey);

    // Each planner served by the real server before it is asked, then evaluated through the production path.
    await g.h.stopOrchestrator();
    await g.h.startOrchestrator(realPlanner);
    execFileSync(PYTHON, [LAUNCHER, 'start', '--model', model, '--name', BASE, '--port', String(port), '--state-dir', stateDir, '--seed', String(seed), '--api-key-env', PLANNER_KEY_ENV], { stdio: ['ignore', 'ignore', 'inherit'], env: g.h.env });
    const untrained = await evaluate(`small-untrained-${seed}`, BASE, 'untrained', K);
    const trained = await evaluate(`small-sft-eval-${seed}`, (await serve(sft)).model, 'sft', K);
    const shuffled = await evaluate(`small-shuffled-eval-${seed}`, (await serve(control)).model, 'sft-shuffled-thoughts', K);

    const [overUntrained, overShuffled, shuffledOverUntrained] = [vs(trained, untrained), vs(trained, shuffled), vs(shuffled, untrained)];
    console.log(`      sft vs untrained ${JSON.stringify(overUntrained)}; sft vs shuffled ${JSON.stringify(overShuffled)}; shuffled vs untrained ${JSON.stringify(shuffledOverUntrained)}`);
    assert.ok(beyond(overUntrained), `SFT against untrained: ${JSON.stringify(overUntrained)}`);
    assert.ok(beyond(overShuffled), `SFT against the shuffled-thoughts control: ${JSON.stringify(overShuffled)}`);
    assert.ok(!beyond(shuffledOverUntrained), `the shuffled-thoughts control against untrained: ${JSON.stringify(shuffledOverUntrained)}`);
    assert.ok(readFileSync(path.join(stateDir, 'server.log'), 'utf8').includes(`--model_name_or_path ${path.join(scratch, 'served', `small-sft-shuffled-${seed}`)}`), 'the last planner was served from its checkpoint');
  });
});
