import assert from 'node:assert/strict';
import { setFlag, startGpuHarness, type GpuHarness } from './gpu-harness';
import type { EvaluationReport } from '../../core/report';
import { specializationWorkflowId, type SpecializationResult } from '../../workflows/training';
import type { EvaluationResult } from '../../workflows/evaluation';

/** KAlgebra's real tasks whose plan has the shape the generated calculator tasks share (click > type > done). */
const TASKS = ['A-01', 'A-03', 'C-01', 'C-04', 'C-07', 'C-11', 'C-12', 'C-14', 'C-15', 'C-17'];

describe('the learning loop (learning planner double, real Temporal, MinIO and desktops)', function () {
  this.timeout(1_800_000);
  let g: GpuHarness;

  before(async () => {
    g = await startGpuHarness({
      name: 'learn',
      runtimeLora: true,
      desktops: 2,
      displayFrom: 600,
      errorRate: 0.25,
      edit: (doc) => {
        const training = doc.training as Record<string, any>;
        setFlag(training.grpo.args, '--rollout.batch_size', '16');
        setFlag(training.grpo.args, '--ckpt.save_steps', '5');
      },
    });
    await g.h.startVmHost();
    await g.startGpuWorker();
  });
  after(async () => g?.stop());

  it('(a) three KAlgebra rounds raise Average@k on the real tasks above the base', async () => {
    const run = 'learn-a';
    const began = Date.now();
    const result = await g.h.execute<SpecializationResult>('specialization', specializationWorkflowId('KAlgebra', run), {
      software: 'KAlgebra', run, rounds: 3, tasksPerRound: 8, attempts: 2, includeSeeds: false, evaluationAttempts: 2, evaluationTaskIds: TASKS,
    });
    console.log('specialization took', (Date.now() - began) / 1000, JSON.stringify(result.history.map((r) => ({ round: r.round, avg: r.averageAtK, samples: r.samples, pos: r.positiveSteps }))));
    const evalBegan = Date.now();
    const report = await g.h.execute<EvaluationResult>('evaluation', 'evaluation-learn-a-final', {
      run: 'learn-a-final', series: 'learn-a-final', software: ['KAlgebra'], attempts: 4, taskIds: { KAlgebra: TASKS },
      planners: [{ name: 'base', model: g.h.config.training.basePlanner.model }, { name: 'specialist', model: result.specialist.model }],
    });
    console.log('evaluation took', (Date.now() - evalBegan) / 1000);
    const full = await g.h.stack.store.getJson<EvaluationReport>(report.key);
    for (const row of full.rows) console.log(row.planner, row.metrics.overall.averageAtK, JSON.stringify(row.metrics.tasks.map((t) => `${t.taskId}:${t.successes}`)));
    assert.ok(full.rows[1]!.metrics.overall.averageAtK > full.rows[0]!.metrics.overall.averageAtK);
  });
});
