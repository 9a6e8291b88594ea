import assert from 'node:assert/strict';
import * as path from 'node:path';
import type { RoundRecord } from '../../workflows/training/contract';
import { BASE_ROW, type EvaluationReport, type ReportRow } from '../../core/report';
import { compareWithBase, DEFAULT_BOOTSTRAP, pairTasks, type Comparison } from '../../core/uncertainty';
import type { GeneralizationResult, SpecializationResult } from '../../workflows/training/progress';
import { setFlag, startGpuHarness, type GpuHarness } from '../support/gpu-harness';
import { generalizationWorkflowId, specializationWorkflowId } from '../../workflows/names';
import { LEARNABLE_TASKS } from '../../apps/kalgebra/seeds';

/**
 * The learning loop made falsifiable (issue 18): the planner is the learning planner double
 * (doubles/learning-planner/), whose logits only the trainer doubles change, from exactly what the
 * pipeline feeds them, on the real Temporal server, MinIO and real KAlgebra and TeXstudio desktops.
 * (a) a GRPO round raises Average@k on the real tasks above the base by more than the report's own
 * interval; (b) SFT on the pooled specialists' successes gives a generalist better than the base on
 * both applications (beyond the noise overall and on KAlgebra; on TeXstudio's four local tasks, a
 * gain) and no worse than each specialist on its own; (c) the same runs with a judge
 * that inverts its verdicts, or with the GRPO labels shuffled, leave the specialist no better than
 * the base. A wrong positive step, an unserved checkpoint or a reward read from the wrong field
 * breaks (a) or (b).
 *
 * Every run trains one round: one GRPO round already leaves the specialist 25 to 50 points above
 * the base for seeds 1-5; since the inverted judge blames the first step of every success, one
 * round of it leaves the specialist far below the base, and one round of shuffled labels no better
 * than it (docs/tests.md). Several rounds' orchestration is checked by test/training/pipeline and
 * overlap tests and the unit tier.
 * Every draw of the doubles is keyed by what it decides and CODA_SEED (docs/doubles.md), and the
 * planners are evaluated on common random numbers, so the figures are the same at any concurrency;
 * the claims were checked with five seeds (docs/tests.md).
 *
 * The base planner writes the wrong step at 0.5 here (the dev stack's 0.25 would need many more
 * evaluation attempts for the same power): the real tasks are those whose kind (plan shape) the
 * generator double's templates share, so what is learnt on generated tasks can carry over.
 */
const KALGEBRA = LEARNABLE_TASKS;
/** The TeXstudio tasks a local host runs (docs/task-support.md) — four: too few for one application's difference to leave the noise alone (a sign-flip test over 4 tasks cannot go below p = 0.125). */
const TEXSTUDIO = ['B-01', 'C-02', 'C-06', 'D-01'];
/**
 * Evaluation attempts per task. With 2, a base planner that was lucky on a few tasks left a healthy
 * round 3 at p 0.048 for one seed (issue 26): 4 attempts make almost every task's paired difference
 * non-zero, so the sign-flip test has the power it needs whatever the seed.
 */
const K = 4;
/** One base run for every specialization and the generalization: the base is rolled out once per software. */
const BASE_RUN = 'learn-base';

const specializationInput = (software: string, run: string, rounds: number, taskIds: readonly string[]) => ({
  software, run, rounds, tasksPerRound: 6, attempts: 2, evaluationAttempts: K, evaluationTaskIds: [...taskIds], baseEvaluationRun: BASE_RUN,
});

/** The last round's comparison with the base (its report's paired test), after printing every round's figures. */
function lastVsBase(result: SpecializationResult): NonNullable<RoundRecord['vsBase']> {
  for (const r of result.history) console.log(`      ${result.run} round ${r.round}: Average@k ${r.averageAtK} vs base ${r.baseAverageAtK}, ${JSON.stringify(r.vsBase)}`);
  const last = result.history.at(-1);
  assert.ok(last?.vsBase !== undefined, `the last round compares with the base: ${JSON.stringify(last)}`);
  return last.vsBase;
}

const better = (c: { difference: number; withinNoise: boolean }): boolean => c.difference > 0 && !c.withinNoise;
const worse = (c: { difference: number; withinNoise: boolean }): boolean => c.difference < 0 && !c.withinNoise;
const rowOf = (report: EvaluationReport, planner: string): ReportRow => {
  const row = report.rows.find((r) => r.planner === planner);
  assert.ok(row !== undefined, `the report has a ${planner} row`);
  return row;
};
/** `row` against `other` on one software's tasks, as the report compares rows with the base. */
const compare = (row: ReportRow, other: ReportRow, software: string): Comparison =>
  compareWithBase([pairTasks(row.metrics.tasks.filter((t) => t.software === software), other.metrics.tasks.filter((t) => t.software === software))], DEFAULT_BOOTSTRAP);

describe('the learning loop: a planner double that learns from what the pipeline feeds its trainers (real Temporal, MinIO, desktops)', function () {
  this.timeout(1_800_000);
  let g: GpuHarness;
  let kalgebra: SpecializationResult;

  before(async () => {
    g = await startGpuHarness({
      name: 'learn',
      runtimeLora: true,
      // Three desktops: the loop is rollouts above all, and two leave a core idle on a quiet 2-core machine.
      desktops: 3,
      displayFrom: Number(process.env.CODA_DISPLAY_BASE ?? 600),
      errorRate: 0.5,
      models: (doc) => {
        // A third judge that says the opposite of the evaluators (and of the plan, for generated tasks), at both resolutions:
        // a failure is a success with every step positive, a success fails at step 1 with nothing kept. (Blaming a random
        // step instead kept the right prefixes of successes, and for seed 2 the "inverted" specialist ended 31 points above
        // the base.)
        const judges = doc.models.judges as Array<Record<string, unknown>>;
        judges.push({ ...judges[0], name: 'judge-inverted', model: 'judge-inverted' });
        const inverted = { falsePositive: 1, falseNegative: 1 };
        doc.dev.scriptedModels.judges = { 'judge-inverted': { high: inverted, low: inverted, unreadable: 0, falseNegativeBlames: 'first-step' } };
      },
      edit: (doc) => {
        // Several prompts per GRPO step, as in production (the harness's default is one).
        setFlag(doc.training.grpo.args, '--rollout.batch_size', '8');
        setFlag(doc.training.grpo.args, '--ckpt.save_steps', '5');
        // SFT over its rows three times, as temporal.yaml's num_train_epochs does (the harness's default is one).
        doc.training.sft.config = { ...doc.training.sft.config, num_train_epochs: 3 };
      },
    });
    await g.h.startVmHost();
    await g.startGpuWorker();
  });
  after(async () => g?.stop());

  it('(a) a KAlgebra round of GRPO raises Average@k on the real tasks above the base by more than the report’s interval', async () => {
    kalgebra = await g.h.execute<SpecializationResult>('specialization', specializationWorkflowId('KAlgebra', 'learn-k'), specializationInput('KAlgebra', 'learn-k', 1, KALGEBRA));
    assert.equal(kalgebra.history.length, 1);
    const vsBase = lastVsBase(kalgebra);
    assert.ok(better(vsBase) && vsBase.lower > 0, `round 1 against the base: ${JSON.stringify(vsBase)} (rounds: ${JSON.stringify(kalgebra.history.map((r) => [r.averageAtK, r.baseAverageAtK]))})`);
  });

  it('(b) a generalist trained by SFT on the pooled specialists’ trajectories beats the base on both applications and is no worse than each specialist on its own', async () => {
    assert.ok(kalgebra?.specialist.checkpointKey !== undefined, 'needs the KAlgebra specialist of (a)');
    const texstudio = await g.h.execute<SpecializationResult>('specialization', specializationWorkflowId('TeXstudio', 'learn-t'), specializationInput('TeXstudio', 'learn-t', 1, TEXSTUDIO));
    assert.ok(texstudio.specialist.checkpointKey !== undefined, `the TeXstudio specialist was trained: ${JSON.stringify(texstudio.history)}`);
    const result = await g.h.execute<GeneralizationResult>('generalization', generalizationWorkflowId('learn-g'), {
      run: 'learn-g',
      specialists: [
        { software: 'KAlgebra', checkpoint: kalgebra.specialist.name },
        { software: 'TeXstudio', checkpoint: texstudio.specialist.name },
      ],
      tasksPerSoftware: 6,
      attempts: 2,
      evaluationAttempts: K,
      evaluationTaskIds: { KAlgebra: KALGEBRA, TeXstudio: TEXSTUDIO },
      baseEvaluationRun: BASE_RUN,
      // Each specialist is compared on its own software only: its rollouts of the other's (64 of them) would prove nothing here
      // (crossEvaluation's rows: test/unit/generalization.test.ts).
      crossEvaluation: false,
    });
    const report = await g.h.stack.store.getJson<EvaluationReport>(result.report.key);
    const generalist = rowOf(report, 'generalist');
    assert.ok(generalist.vsBase !== undefined && better(generalist.vsBase.overall), `generalist against the base overall: ${JSON.stringify(generalist.vsBase?.overall)}`);
    assert.ok(better(generalist.vsBase.bySoftware.KAlgebra!), `generalist against the base on KAlgebra: ${JSON.stringify(generalist.vsBase.bySoftware.KAlgebra)}`);
    // TeXstudio's four local tasks cannot put one application's difference beyond the noise: it must be a gain.
    assert.ok(generalist.vsBase.bySoftware.TeXstudio!.difference > 0, `generalist against the base on TeXstudio: ${JSON.stringify(generalist.vsBase.bySoftware.TeXstudio)}`);
    for (const software of ['KAlgebra', 'TeXstudio']) {
      const vsSpecialist = compare(generalist, rowOf(report, `specialist-${software}`), software);
      assert.ok(!worse(vsSpecialist), `generalist against the ${software} specialist on ${software}: ${JSON.stringify(vsSpecialist)}`);
    }
    assert.equal(rowOf(report, BASE_ROW).runs.KAlgebra, BASE_RUN, 'the base row is the specializations’ base rollouts');
  });

  it('(c) the same run with a judge that inverts its verdicts leaves the specialist below the base', async () => {
    const plan = { ...g.h.config.judging.plan, judges: ['judge-inverted'] };
    const result = await g.h.execute<SpecializationResult>('specialization', specializationWorkflowId('KAlgebra', 'learn-inv'), {
      ...specializationInput('KAlgebra', 'learn-inv', 1, KALGEBRA),
      judging: plan,
      // The floor would stop the first round (that is what it is for, test/judging); here the damage is measured.
      judgePrecisionFloor: 0,
    });
    const vsBase = lastVsBase(result);
    assert.ok(vsBase.difference < 0 && !better(vsBase), `trained on inverted verdicts, against the base: ${JSON.stringify(vsBase)}`);
    assert.ok(result.history.every((r) => r.judge?.final.precision !== 1), 'the judge was measured wrong on the real tasks');
  });

  it('(c) the same run with the GRPO labels shuffled among the rows leaves the specialist no better than the base', async () => {
    await g.stopGpuWorkers();
    const shuffling = structuredClone(g.h.config);
    (shuffling.training.grpo as { program: string }).program = `${process.execPath} ${path.join(__dirname, 'shuffled-labels-trainer.js')}`;
    await g.startGpuWorker(shuffling);
    try {
      const result = await g.h.execute<SpecializationResult>('specialization', specializationWorkflowId('KAlgebra', 'learn-shuf'), specializationInput('KAlgebra', 'learn-shuf', 1, KALGEBRA));
      assert.ok(result.history.every((r) => r.skipped === undefined), 'every round trained');
      const vsBase = lastVsBase(result);
      assert.ok(!better(vsBase), `trained on shuffled labels, against the base: ${JSON.stringify(vsBase)}`);
    } finally {
      await g.stopGpuWorkers();
      await g.startGpuWorker();
    }
  });
});
