import assert from 'node:assert/strict';
import { WorkflowFailedError } from '@temporalio/client';
import { Registry } from 'prom-client';
import { orchestratorMetrics } from '../../activities/metrics';
import type { RoundRecord } from '../../workflows/training/contract';
import { verdictFileSchema } from '../../core/judge/verdict-file';
import { attemptOfManifest, checkpointManifestKey, reportSeriesPrefix, taskSetManifestKey, verdictKey } from '../../core/keys';
import { normaliseInstruction } from '../../core/task-dedupe';
import { parseTrajectoryManifest, taskSetManifestSchema } from '../../apps/manifests';
import { checkpointManifestSchema, datasetManifestSchema } from '../../core/training';
import type { EvaluationReport } from '../../core/report';
import {
  stopAfterRound,
  type GeneralizationResult,
  type SpecializationProgress,
  type SpecializationResult,
} from '../../workflows/training/progress';
import { eventually } from '../support/rollouts';
import { batchInputs, startGpuHarness, type GpuHarness } from '../support/gpu-harness';
import { generalizationWorkflowId, seriesName, specializationWorkflowId } from '../../workflows/names';

/** Every message along an error's cause chain. */
const causes = (err: unknown): string => (err instanceof Error ? `${err.message} <- ${causes(err.cause)}` : '');

/**
 * CODA's two stages as workflows on the real Temporal server: a specialization of rounds on a
 * real KAlgebra desktop (generated tasks, rollouts, the judge, a GRPO dataset, the OpenRLHF double
 * on a GPU worker, the checkpoint served as a LoRA adapter, an evaluation per round) stopped by
 * its signal, then a generalization from its specialist (SFT on the specialist's judged
 * trajectories with the LLaMA-Factory double, one report with the base, specialist and generalist).
 */
describe('training workflows: specialization rounds and generalization (trainer doubles, real desktop)', function () {
  this.timeout(900_000);
  let g: GpuHarness;
  const stamp = Date.now();
  // A fixed name: the task-generator double answers the same prompt the same way, and this run's
  // prompts give round 1 tasks the scripted planner can solve (some generated tasks it cannot).
  const run = 'Pipeline-Spec';
  let specialization: SpecializationResult;
  const registry = new Registry();

  before(async () => {
    g = await startGpuHarness({ name: 'pipeline', runtimeLora: true, desktops: 2, displayFrom: Number(process.env.CODA_DISPLAY_BASE ?? 560), metrics: orchestratorMetrics(registry) });
    await g.h.startVmHost();
    await g.startGpuWorker();
  });
  after(async () => g?.stop());

  it('runs rounds until asked to stop after one; each round trains the base on every round so far, serves and evaluates the new specialist', async () => {
    const workflowId = specializationWorkflowId('KAlgebra', run);
    const handle = await g.h.stack.client.workflow.start('specialization', {
      taskQueue: g.h.config.taskQueues.orchestrator,
      workflowId,
      // includeSeeds is left to temporal.yaml (off): the real tasks are rolled out and judged, not trained on.
      args: [{ software: 'KAlgebra', run, rounds: 5, tasksPerRound: 3, attempts: 1, evaluationAttempts: 1, evaluationTaskIds: ['C-03', 'A-01'] }],
    });
    // Round 2 runs in the continued-as-new run of the same workflow id; the signal ends it after that round.
    const second = await eventually('round 2 started', async () => {
      const progress = await handle.query<SpecializationProgress>('progress').catch(() => undefined);
      return progress !== undefined && progress.round === 2 ? progress : undefined;
    }, 600_000);
    assert.equal(second.history.length, 1);
    assert.equal(second.total, 5 * 7);
    assert.deepEqual(second.history[0]?.judge?.run, `${run}-base-eval`, 'the progress carries the round 1 record with its judge figures, measured on the base row\'s rollouts');
    await handle.signal(stopAfterRound);
    const judging = await eventually('round 2 judged', async () => {
      const progress = await handle.query<SpecializationProgress>('progress').catch(() => undefined);
      return progress?.round === 2 && progress.judge !== undefined ? progress.judge : undefined;
    }, 600_000);
    assert.equal(judging.run, `${run}-r1-eval`, "the progress shows this round's judge once measured, on its planner's (round 1's checkpoint's) evaluation rollouts");
    specialization = (await handle.result()) as SpecializationResult;

    assert.equal(specialization.rounds, 2, 'stopped after the round the signal arrived in');
    assert.deepEqual(specialization.history.map((r) => r.round), [1, 2]);
    const [r1, r2] = specialization.history as [SpecializationResult['history'][0], SpecializationResult['history'][0]];
    assert.deepEqual(r1.sources, [`${run}-r1-gen`]);
    assert.deepEqual(r2.sources, [`${run}-r2-gen`]);
    assert.ok(r1.positiveSteps > 0 && r1.skipped === undefined, `round 1 trained: ${JSON.stringify(r1)}`);
    assert.ok(r2.samples >= r1.samples, 'the round 2 dataset holds round 1 prompts too');
    for (const r of [r1, r2]) await checkJudgeFigures(r);
    assert.deepEqual(judging, r2.judge);

    const store = g.h.stack.store;
    const prefix = g.h.config.storage.prefix;
    // Round 2's generator was shown round 1's tasks and verdicts, and its set shares no instruction with round 1's.
    const [set1, set2] = await Promise.all([1, 2].map(async (r) => taskSetManifestSchema.parse(await store.getJson(taskSetManifestKey(prefix, 'KAlgebra', `${run}-r${r}`)))));
    assert.deepEqual(set1!.earlier, []);
    assert.deepEqual(set2!.earlier.map(({ set, round, rollouts, tasks }) => ({ set, round, rollouts, tasks })), [{ set: `${run}-r1`, round: 1, rollouts: `${run}-r1-gen`, tasks: r1.tasks }]);
    assert.equal(set2!.earlier[0]!.judged, r1.tasks, 'every round-1 task was judged');
    const round1 = new Set(set1!.tasks.map((t) => normaliseInstruction(t.instruction)));
    assert.deepEqual(set2!.tasks.filter((t) => round1.has(normaliseInstruction(t.instruction))).map((t) => t.instruction), [], 'round 2 repeats no instruction of round 1');
    assert.ok(set2!.repeats.every((rep) => rep.set === `${run}-r1` && set1!.tasks.some((t) => t.id === rep.task && t.instruction === rep.of)));
    assert.ok(r2.positiveSteps > 0 && r2.skipped === undefined, `round 2 trained: ${JSON.stringify(r2)}`);
    const last = r2;
    assert.equal(specialization.specialist.name, last.checkpoint);
    const manifest = checkpointManifestSchema.parse(await store.getJson(checkpointManifestKey(prefix, last.checkpoint)));
    assert.equal(manifest.kind, 'grpo');
    assert.equal(manifest.double, true);
    assert.deepEqual(manifest.base, g.h.config.training.basePlanner, 'every round starts from the base planner');
    {
      assert.equal(manifest.parent, checkpointManifestKey(prefix, r1.checkpoint), 'lineage names the previous round');
      const dataset = datasetManifestSchema.parse(await store.getJson(manifest.dataset));
      const runs = new Set(dataset.sources.map((s) => s.manifestKey.split('/runs/')[1]!.split('/')[0]));
      assert.ok(runs.has(`${run}-r1-gen`) && runs.has(`${run}-r2-gen`), `the dataset pools both rounds: ${[...runs].join(', ')}`);
      assert.equal(dataset.rows, r2.samples);
    }

    // Served under its checkpoint's name, and each round's report is in one lower-case series.
    const models = (await (await fetch(`${g.h.models.url}/models`)).json()) as { data: Array<{ id: string }> };
    assert.ok(models.data.some((m) => m.id === specialization.specialist.model), `${specialization.specialist.model} is served`);
    const series = seriesName('specialization', run);
    assert.equal(series, series.toLowerCase());
    const reports = (await store.list(`${reportSeriesPrefix(prefix, series)}/`)).filter((k) => k.endsWith('.json'));
    assert.equal(reports.length, 2);
    assert.equal(reports[1], r2.reportKey);
    const report = await store.getJson<EvaluationReport>(r2.reportKey);
    assert.deepEqual(report.rows.map((r) => r.planner), ['base', 'specialist-KAlgebra']);
    assert.deepEqual(report.rows[1]?.metrics.tasks.map((t) => t.taskId).sort(), ['A-01', 'C-03']);
    assert.equal(report.previous?.key, r1.reportKey, 'round 2 is compared with round 1');

    // Every round is compared with the same base rollouts, made once by round 1.
    const baseRun = `${run}-base-eval`;
    const first = await store.getJson<EvaluationReport>(r1.reportKey);
    assert.deepEqual([first, report].map((x) => x.rows.find((r) => r.planner === 'base')?.runs.KAlgebra), [baseRun, baseRun]);
    const baseRollouts = [];
    for await (const e of g.h.stack.client.workflow.list({ query: `CodaRun = "${baseRun}" AND WorkflowType = "rollout"` })) baseRollouts.push(e);
    assert.equal(baseRollouts.length, 2, 'two tasks x one attempt, rolled out once for both rounds');
    // The judge is measured on the evaluation's batches, started with the evaluation's own inputs (so
    // the rollouts are reused, not made again): the base row's by round 1 (then by both evaluations),
    // round 1's specialist's by round 1's evaluation, then by round 2 to judge it.
    for (const [batchRun, starts] of [[baseRun, 3], [`${run}-r1-eval`, 2]] as const) {
      const inputs = await batchInputs(g.h.stack.client, batchRun);
      assert.equal(inputs.length, starts, `${batchRun}: ${JSON.stringify(inputs)}`);
      for (const input of inputs) assert.deepEqual(input, inputs[0], `${batchRun}: every start asks for the same batch`);
    }
    for (const r of [1, 2]) assert.deepEqual(await store.list(`${prefix}/runs/${run}-r${r}-seed/`), [], 'no separate real-task batch');
    assert.equal(r1.baseAverageAtK, r2.baseAverageAtK);
    for (const r of [r1, r2]) {
      assert.ok(r.averageInterval !== undefined && r.averageInterval.lower <= r.averageAtK && r.averageAtK <= r.averageInterval.upper, JSON.stringify(r.averageInterval));
      assert.ok(r.vsBase !== undefined && Math.abs(r.vsBase.difference - (r.averageAtK - r.baseAverageAtK!)) < 0.01, JSON.stringify(r));
      // Two tasks cannot show a difference beyond noise.
      assert.equal(r.vsBase.withinNoise, true);
    }
  });

  /**
   * A round's judge figures are what its real-task rollouts and their verdicts say: the harness's
   * judge doubles are exact (no error rates), so the final verdict and every vote agree with the
   * evaluators, and precision and recall are 1 where defined, null where nothing divides.
   */
  async function checkJudgeFigures(r: RoundRecord): Promise<void> {
    const store = g.h.stack.store;
    const prefix = g.h.config.storage.prefix;
    const judge = r.judge;
    assert.ok(judge !== undefined, `round ${r.round} measured the judge`);
    // The planner's evaluation rollouts: the base row's for round 1, round 1's specialist's for round 2.
    assert.equal(judge.run, r.round === 1 ? `${run}-base-eval` : `${run}-r${r.round - 1}-eval`);
    assert.equal(judge.floor, 0.6, "temporal.yaml's specialization.judgePrecisionFloor");
    assert.ok(!r.sources.includes(judge.run), 'the real tasks are not trained on');
    const keys = (await store.list(`${prefix}/runs/${judge.run}/KAlgebra/`)).filter((k) => k.endsWith('/manifest.json'));
    const truth = await Promise.all(
      keys.map(async (key) => {
        const manifest = parseTrajectoryManifest(await store.getJson(key), key);
        const verdict = verdictFileSchema.parse(await store.getJson(verdictKey(prefix, attemptOfManifest(prefix, key))));
        return { task: manifest.taskId, passed: manifest.evaluation?.passed === true, success: verdict.success };
      }),
    );
    assert.deepEqual(truth.map((t) => t.task).sort(), ['A-01', 'C-03'], 'evaluationAttempts 1 of each evaluationTaskIds task');
    const passed = truth.filter((t) => t.passed).length;
    const approved = truth.filter((t) => t.success).length;
    assert.deepEqual(judge.final, {
      trajectories: 2,
      approved,
      passed,
      truePositives: truth.filter((t) => t.passed && t.success).length,
      falsePositives: 0,
      falseNegatives: 0,
      trueNegatives: 2 - passed,
      precision: approved === 0 ? null : 1,
      recall: passed === 0 ? null : 1,
    });
    assert.deepEqual([...new Set(judge.votes.map((v) => v.judge))].sort(), ['judge-a', 'judge-b']);
    for (const v of judge.votes) assert.equal(v.falsePositives + v.falseNegatives, 0, `${v.judge} at ${v.resolution} resolution agrees with the evaluators`);
    const text = await registry.metrics();
    const sample = new RegExp(`^coda_judge_precision\\{software="KAlgebra",run="${run}",round="${r.round}",judge="final",resolution="all"\\} (\\S+)$`, 'm').exec(text)?.[1];
    assert.equal(sample, judge.final.precision === null ? undefined : String(judge.final.precision), 'the Prometheus gauge');
  }

  it('generalization trains one planner by SFT on the specialists’ judged trajectories and evaluates base, specialists and generalist', async () => {
    assert.ok(specialization?.specialist.checkpointKey !== undefined, 'needs the specialist of the first test');
    const genRun = 'pipeline-gen';
    const result = await g.h.execute<GeneralizationResult>('generalization', generalizationWorkflowId(genRun), {
      run: genRun,
      specialists: [{ software: 'KAlgebra', checkpoint: specialization.specialist.name }],
      tasksPerSoftware: 3,
      attempts: 1,
      evaluationAttempts: 1,
      evaluationTaskIds: { KAlgebra: ['C-03'] },
    });
    const store = g.h.stack.store;
    const prefix = g.h.config.storage.prefix;
    // Fresh tasks: the generator was shown the specialist's rounds, and none of their tasks comes again.
    const sets = await Promise.all(['r1', 'r2', ''].map(async (r) => taskSetManifestSchema.parse(await store.getJson(taskSetManifestKey(prefix, 'KAlgebra', r === '' ? `${genRun}-KAlgebra` : `${run}-${r}`)))));
    const fresh = sets[2]!;
    assert.deepEqual(fresh.earlier.map((e) => [e.set, e.round, e.rollouts]), [[`${run}-r1`, 1, `${run}-r1-gen`], [`${run}-r2`, 2, `${run}-r2-gen`]]);
    const trained = new Set(sets.slice(0, 2).flatMap((set) => set.tasks.map((t) => normaliseInstruction(t.instruction))));
    assert.deepEqual(fresh.tasks.filter((t) => trained.has(normaliseInstruction(t.instruction))).map((t) => t.instruction), [], 'no task of the specialization rounds');
    const manifest = checkpointManifestSchema.parse(await store.getJson(result.generalist.checkpointKey));
    assert.equal(manifest.kind, 'sft');
    assert.equal(manifest.parent, undefined, 'the generalist is trained from the base, not from a specialist');
    assert.equal(manifest.dataset, result.dataset.key);
    const dataset = datasetManifestSchema.parse(await store.getJson(result.dataset.key));
    assert.ok(dataset.rows > 0 && dataset.rows === result.dataset.rows);
    assert.ok(dataset.sources.every((s) => s.manifestKey.includes(`/runs/${genRun}-KAlgebra/`)), 'trajectories of the specialist, rolled out in this run');
    assert.deepEqual(manifest.sources, dataset.sources);
    assert.deepEqual(result.report.rows.map((r) => r.planner), ['base', 'specialist-KAlgebra', 'generalist']);
    const report = await store.getJson<EvaluationReport>(result.report.key);
    assert.deepEqual(report.rows.map((r) => r.model), [g.h.config.training.basePlanner.model, specialization.specialist.model, result.generalist.model]);
    // The specialist's row is its specialization's evaluation run, reused: C-03's attempt there is the one the report counts.
    assert.equal(report.rows[1]?.runs.KAlgebra, `${specialization.specialist.name}-eval`);
  });

  it('refuses a generalization whose specialist checkpoint does not exist, naming the field, before anything runs', async () => {
    const err = await g.h
      .execute('generalization', generalizationWorkflowId(`bad-${stamp}`), { run: `bad-${stamp}`, specialists: [{ software: 'KAlgebra', checkpoint: `missing-${stamp}` }] })
      .then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof WorkflowFailedError, `failed: ${String(err)}`);
    assert.match(causes(err), new RegExp(`missing-${stamp}`));
    const history = await g.h.stack.client.workflow.getHandle(generalizationWorkflowId(`bad-${stamp}`)).fetchHistory();
    assert.ok(!(history.events ?? []).some((e) => e.startChildWorkflowExecutionInitiatedEventAttributes), 'no child workflow started');
  });
});
