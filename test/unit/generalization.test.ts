import assert from 'node:assert/strict';
import type { Client } from '@temporalio/client';
import type { DatasetRequest, DatasetSummary } from '../../activities/datasets/activities';
import type { ReportRequest, ReportSummary } from '../../activities/reports/activities';
import type { TrainRequest } from '../../activities/training/contract';
import { emptyTaskSetStubs, unitConfigWithGpuQueue, unitWorkerForTests, type RealActivities } from './workflow-env';

/**
 * The generalization workflow on stub activities, through its real children (task generation,
 * rollout batches, judging, evaluation; the batches stage no task, so no rollout runs): what it
 * judges and pools, with and without includeSeeds. The real-stack run of the same path is
 * test/training/pipeline.test.ts.
 */

/** Every workflow of a test runs on the file's own GPU queue, so that the GPU activities are this worker's too. */
const CONFIG = unitConfigWithGpuQueue('unit-generalization');
const QUEUE = CONFIG.taskQueues.gpu;

/** What the stubs were asked, every run's: `<what> <id>`, each id starting with its run's name. */
const events: string[] = [];
/** By report run, the software each row was rolled out on, by planner. */
const reportSoftware = new Map<string, Record<string, string[]>>();

const stubs = (real: RealActivities) => ({
  resolveGeneralizationInput: real.resolveGeneralizationInput,
  async checkpointKey(name: string) {
    return `checkpoints/${name}`;
  },
  async checkpointTaskSets() {
    return [];
  },
  ...emptyTaskSetStubs,
  async listTrajectories(input: { run: string }) {
    events.push(`judge ${input.run}`);
    return [];
  },
  async buildDataset(request: DatasetRequest): Promise<DatasetSummary> {
    events.push(`dataset ${request.id} of ${request.sources.map((s) => s.run).join(',')}`);
    const bySoftware = Object.fromEntries(request.sources.map((s) => [s.software, { trajectories: 4, rows: 10 }]));
    return { key: `datasets/${request.id}`, rows: 10, trajectories: 4, bySoftware, bytes: { data: 0, images: 0 }, existed: false };
  },
  async train(request: TrainRequest) {
    events.push(`train ${request.checkpoint}`);
    return { checkpointKey: `checkpoints/${request.checkpoint}`, steps: 1, metrics: {} };
  },
  async servePlanner(request: { checkpointKey: string }) {
    return { model: `served/${request.checkpointKey}` };
  },
  async writeEvaluationReport(request: ReportRequest): Promise<ReportSummary> {
    reportSoftware.set(request.run, Object.fromEntries(request.rows.map((row) => [row.planner, Object.keys(row.runs).sort()])));
    const figures = { KAlgebra: 0, overall: 0 };
    return { key: `reports/${request.run}`, markdownKey: `reports/${request.run}.md`, rows: request.rows.map((row) => ({ planner: row.planner, averageAtK: figures, passAtK: figures, appNotRunning: figures })) };
  },
});

let client: () => Client;

/** Runs a generalization to its end; the stubs' events of its run, in order. */
async function generalize(run: string, input: Record<string, unknown>): Promise<string[]> {
  await client().workflow.execute('generalization', {
    taskQueue: QUEUE,
    workflowId: `generalization-${run}`,
    args: [{ run, specialists: [{ software: 'KAlgebra', checkpoint: `${run}-spec-r1` }], crossEvaluation: false, ...input }],
  });
  return events.filter((e) => e.split(' ')[1]!.startsWith(`${run}-`));
}

describe('generalization workflow on stub activities', () => {
  client = unitWorkerForTests(QUEUE, stubs, CONFIG);
  /** The runs, started together (each waits on the server most of its time); each test reads its own. */
  const started = new Map<string, Promise<string[]>>();
  const specialists = (run: string) => [{ software: 'KAlgebra', checkpoint: `${run}-k-r1` }, { software: 'TeXstudio', checkpoint: `${run}-t-r1` }];
  before(() => {
    const inputs: Record<string, Record<string, unknown>> = {
      'gen-plain': {},
      'gen-seeds': { includeSeeds: true },
      'gen-cross': { specialists: specialists('gen-cross'), crossEvaluation: true },
      'gen-own': { specialists: specialists('gen-own') },
    };
    for (const [run, input] of Object.entries(inputs)) {
      const done = generalize(run, input);
      done.catch(() => undefined); // its test reports it
      started.set(run, done);
    }
  });
  const finished = (run: string): Promise<string[]> => started.get(run)!;

  it('pools only the specialists\' rollouts of generated tasks by default: the real tasks are the evaluation set', async () => {
    assert.deepEqual(await finished('gen-plain'), ['judge gen-plain-KAlgebra', 'dataset gen-plain-generalist of gen-plain-KAlgebra', 'train gen-plain-generalist']);
  });

  it("with includeSeeds, also judges and pools each specialist's rollouts of its real tasks (its specialization's evaluation run)", async () => {
    assert.deepEqual(await finished('gen-seeds'), [
      'judge gen-seeds-KAlgebra',
      'judge gen-seeds-spec-r1-eval',
      'dataset gen-seeds-generalist of gen-seeds-KAlgebra,gen-seeds-spec-r1-eval',
      'train gen-seeds-generalist',
    ]);
  });

  it('evaluates every specialist on every software by default (crossEvaluation), and each on its own software only when crossEvaluation is false', async () => {
    const both = ['KAlgebra', 'TeXstudio'];
    await Promise.all([finished('gen-cross'), finished('gen-own')]);
    assert.deepEqual(reportSoftware.get('gen-cross-eval'), { base: both, 'specialist-KAlgebra': both, 'specialist-TeXstudio': both, generalist: both });
    assert.deepEqual(reportSoftware.get('gen-own-eval'), { base: both, 'specialist-KAlgebra': ['KAlgebra'], 'specialist-TeXstudio': ['TeXstudio'], generalist: both });
  });
});
