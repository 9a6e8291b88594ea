import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { JudgeMeasurement } from '../../core/judge/measurement';
import type { TaskSetRequest, TaskSetSummary } from '../../activities/tasks/generation';
import type { DatasetRequest, DatasetSummary } from '../../activities/datasets/activities';
import type { ReportRequest, ReportSummary } from '../../activities/reports/activities';
import type { TrainRequest } from '../../activities/training/contract';
import { emptyTaskSetStubs, unitConfig, unitConfigWithGpuQueue, unitWorkerForTests, type RealActivities } from './workflow-env';

/**
 * The specialization workflow's rounds on stub activities, through its real children (task
 * generation, rollout batches, judging, evaluation; the batches stage no task, so no rollout runs):
 * the order of a round's stages, what continue-as-new carries to the next round, stopAfterRound,
 * and overlapped rounds at maxStaleness 1. The real-stack runs of the same paths, on a real
 * desktop, GPU worker and killed processes, are test/training/pipeline.test.ts and overlap.test.ts.
 */

/** Every workflow of a test runs on the file's own GPU queue, so that the GPU activities are this worker's too. */
const CONFIG = unitConfigWithGpuQueue('unit-specialization');
const QUEUE = CONFIG.taskQueues.gpu;
const SOFTWARE = 'KAlgebra';

/** What the stubs were asked, in order, and a way to wait for a given event (what makes rounds overlap here). */
class Events {
  readonly list: string[] = [];
  private readonly waiters = new Map<string, () => void>();
  add(event: string): void {
    this.list.push(event);
    this.waiters.get(event)?.();
  }
  /** Resolves once `event` happened; fails (non-retryable, so the workflow fails) if it has not within 60 s. */
  async waitFor(event: string): Promise<void> {
    if (this.list.includes(event)) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(ApplicationFailure.nonRetryable(`"${event}" did not happen while waiting for it; events: ${this.list.join(' | ')}`)), 60_000);
      this.waiters.set(event, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

interface Scenario {
  readonly events: Events;
  /** Runs inside the train activity before it returns: where a test holds a round's training or sends a signal. */
  readonly duringTraining?: (request: TrainRequest, events: Events) => Promise<void>;
}

/** Each test's run, by its name: the four run side by side, each activity's events going to the run its id names. */
const scenarios = new Map<string, Scenario>();

/** The scenario of the run whose name `id` (a run, set, checkpoint or workflow id) holds as a whole word, the longest such name. */
function scenarioOf(id: string): Scenario {
  const names = [...scenarios.keys()].filter((name) => new RegExp(`(^|[^A-Za-z0-9])${name}(-|$)`).test(id)).sort((a, b) => b.length - a.length);
  const found = names[0] === undefined ? undefined : scenarios.get(names[0]);
  if (found === undefined) throw ApplicationFailure.nonRetryable(`no test's run is named in ${id} (runs: ${[...scenarios.keys()].join(', ')})`);
  return found;
}

const judgeMeasurement = (run: string): JudgeMeasurement => {
  const agreement = { trajectories: 4, approved: 2, passed: 2, truePositives: 2, falsePositives: 0, falseNegatives: 0, trueNegatives: 2, precision: 1, recall: 1 };
  return { run, floor: unitConfig.specialization.judgePrecisionFloor, final: agreement, votes: [] };
};

const stubs = (real: RealActivities) => ({
  async resolveSpecializationInput(raw: unknown, workflowId: string) {
    const input = await real.resolveSpecializationInput(raw, workflowId);
    scenarioOf(workflowId).events.add(`run of round ${input.carried.round}`);
    return input;
  },
  async resolveBatchInput(raw: unknown, workflowId: string) {
    const input = await real.resolveBatchInput(raw, workflowId);
    scenarioOf(input.run).events.add(`batch ${input.run} by ${input.planner?.name ?? '?'}`);
    return input;
  },
  ...emptyTaskSetStubs,
  async generateTaskSet(request: TaskSetRequest): Promise<TaskSetSummary> {
    scenarioOf(request.version).events.add(`generate ${request.version} after [${(request.earlier ?? []).map((e) => `${e.set}/${e.rollouts ?? '-'}`).join(' ')}]`);
    return emptyTaskSetStubs.generateTaskSet(request);
  },
  async listTrajectories(input: { run: string }) {
    scenarioOf(input.run).events.add(`judge ${input.run}`);
    return [];
  },
  async measureJudge(input: { run: string; round: number }) {
    scenarioOf(input.run).events.add(`measure ${input.round} on ${input.run}`);
    return judgeMeasurement(input.run);
  },
  async buildDataset(request: DatasetRequest): Promise<DatasetSummary> {
    scenarioOf(request.id).events.add(`dataset ${request.id} of ${request.sources.map((s) => s.run).join(',')}`);
    // Ten rows per source run: every round brings ten new approved steps.
    const rows = 10 * request.sources.length;
    return { key: `datasets/${request.id}`, rows, trajectories: rows, bySoftware: { [SOFTWARE]: { trajectories: rows, rows } }, bytes: { data: 0, images: 0 }, existed: false };
  },
  async train(request: TrainRequest) {
    const scenario = scenarioOf(request.checkpoint);
    scenario.events.add(`train ${request.checkpoint} from ${request.parent ?? 'base'} recording [${(request.taskSets ?? []).map((e) => `${e.set}/${e.rollouts ?? '-'}`).join(' ')}]`);
    await scenario.duringTraining?.(request, scenario.events);
    scenario.events.add(`trained ${request.checkpoint}`);
    return { checkpointKey: `checkpoints/${request.checkpoint}`, steps: 1, metrics: {} };
  },
  async servePlanner(request: { checkpointKey: string }) {
    scenarioOf(request.checkpointKey).events.add(`serve ${request.checkpointKey}`);
    return { model: `served/${request.checkpointKey}` };
  },
  async writeEvaluationReport(request: ReportRequest): Promise<ReportSummary> {
    scenarioOf(request.run).events.add(`report ${request.run}`);
    const figures = (n: number) => ({ [SOFTWARE]: n, overall: n });
    return {
      key: `reports/${request.run}`,
      markdownKey: `reports/${request.run}.md`,
      rows: request.rows.map((row) => ({ planner: row.planner, averageAtK: figures(row.planner === 'base' ? 10 : 40), passAtK: figures(50), appNotRunning: figures(0) })),
    };
  },
});

let client: () => Client;

interface SpecializationResult {
  readonly rounds: number;
  readonly specialist: { readonly name: string; readonly model: string; readonly checkpointKey?: string };
  readonly history: ReadonlyArray<{ readonly round: number; readonly checkpoint: string; readonly sources: readonly string[]; readonly reportKey: string; readonly rolloutPlanner?: string; readonly averageAtK: number }>;
}

/** Runs a specialization to its end; returns its result, the stubs' events, and the workflow runs it took (one per continue-as-new). */
async function specialize(run: string, input: Record<string, unknown>, duringTraining?: Scenario['duringTraining']) {
  const scenario: Scenario = { events: new Events(), ...(duringTraining === undefined ? {} : { duringTraining }) };
  scenarios.set(run, scenario);
  const handle = await client().workflow.start('specialization', {
    taskQueue: QUEUE,
    workflowId: `specialization-${SOFTWARE}-${run}`,
    args: [{ software: SOFTWARE, run, ...input }],
  });
  const result = (await handle.result()) as SpecializationResult;
  const all = scenario.events.list;
  return { result, events: all.filter((e) => !e.startsWith('run of ')), runs: all.filter((e) => e.startsWith('run of ')) };
}

const signalStop = (run: string) => client().workflow.getHandle(`specialization-${SOFTWARE}-${run}`).signal('stopAfterRound');

type Specialized = Awaited<ReturnType<typeof specialize>>;

describe('specialization workflow on stub activities', () => {
  client = unitWorkerForTests(QUEUE, stubs, CONFIG);
  /** The four runs, started together (each waits on the server most of its time); each test reads its own. */
  const started = new Map<string, Promise<Specialized>>();
  before(() => {
    const start = (run: string, input: Record<string, unknown>, duringTraining?: Scenario['duringTraining']): void => {
      const done = specialize(run, input, duringTraining);
      done.catch(() => undefined); // its test reports it
      started.set(run, done);
    };
    start('seq', { rounds: 2, maxStaleness: 0 });
    start('stop', { rounds: 3, maxStaleness: 0 }, async (request) => {
      if (request.checkpoint === 'stop-r1') await signalStop('stop');
    });
    // Each round's training is held until the next round's collection has measured its judge: without overlap it never would.
    start('ovl', { rounds: 3, maxStaleness: 1 }, async (request, events) => {
      const round = Number(request.checkpoint.slice('ovl-r'.length));
      if (round < 3) await events.waitFor(`measure ${round + 1} on ${round === 1 ? 'ovl-base-eval' : 'ovl-r1-eval'}`);
    });
    start('ovlstop', { rounds: 3, maxStaleness: 1 }, async (request, events) => {
      if (request.checkpoint !== 'ovlstop-r1') return;
      await events.waitFor('generate ovlstop-r2 after [ovlstop-r1/ovlstop-r1-gen]');
      await signalStop('ovlstop');
    });
  });
  const finished = (run: string): Promise<Specialized> => started.get(run)!;

  it('runs each round in order, one run per round, and carries the history and the new planner across continue-as-new', async () => {
    const { result, events, runs } = await finished('seq');
    assert.deepEqual(events, [
      // Round 1: generate, roll out the generated tasks and the base planner's real tasks, judge both, measure the judge on the real ones.
      'generate seq-r1 after []',
      'batch seq-r1-gen by base',
      'batch seq-base-eval by base',
      'judge seq-r1-gen',
      'judge seq-base-eval',
      'measure 1 on seq-base-eval',
      // Then train from the base on the generated tasks' steps, serve, evaluate beside the base.
      'dataset seq-r1 of seq-r1-gen',
      // The checkpoint records the task sets of its rounds so far, for a generalization to generate away from.
      'train seq-r1 from base recording [seq-r1/seq-r1-gen]',
      'trained seq-r1',
      'serve checkpoints/seq-r1',
      'batch seq-base-eval by base',
      'batch seq-r1-eval by specialist-KAlgebra',
      'report seq-r1-eval',
      // Round 2, in the next run: shown round 1's set, rolled out by round 1's checkpoint, trained on both rounds from it.
      'generate seq-r2 after [seq-r1/seq-r1-gen]',
      'batch seq-r2-gen by seq-r1',
      'batch seq-r1-eval by specialist-KAlgebra',
      'judge seq-r2-gen',
      'judge seq-r1-eval',
      'measure 2 on seq-r1-eval',
      'dataset seq-r2 of seq-r1-gen,seq-r2-gen',
      'train seq-r2 from checkpoints/seq-r1 recording [seq-r1/seq-r1-gen seq-r2/seq-r2-gen]',
      'trained seq-r2',
      'serve checkpoints/seq-r2',
      'batch seq-base-eval by base',
      'batch seq-r2-eval by specialist-KAlgebra',
      'report seq-r2-eval',
    ]);
    assert.deepEqual(runs, ['run of round 1', 'run of round 2'], 'one workflow run per round');
    assert.deepEqual([result.rounds, result.specialist], [2, { name: 'seq-r2', model: 'served/checkpoints/seq-r2', checkpointKey: 'checkpoints/seq-r2' }]);
    // Round 1's record was made by the first run and carried whole into the second.
    assert.deepEqual(
      result.history.map((r) => [r.round, r.checkpoint, r.sources, r.reportKey, r.rolloutPlanner, r.averageAtK]),
      [
        [1, 'seq-r1', ['seq-r1-gen'], 'reports/seq-r1-eval', 'base', 40],
        [2, 'seq-r2', ['seq-r2-gen'], 'reports/seq-r2-eval', 'seq-r1', 40],
      ],
    );
  });

  it('stopAfterRound ends the run after the round it is in: no next round is started', async () => {
    const { result, events, runs } = await finished('stop');
    assert.deepEqual(runs, ['run of round 1']);
    assert.deepEqual([result.rounds, result.specialist.name, result.history.map((r) => r.round)], [1, 'stop-r1', [1]]);
    assert.equal(events.at(-1), 'report stop-r1-eval');
    assert.deepEqual(events.filter((e) => e.includes('-r2')), []);
  });

  it('at maxStaleness 1, collects round n+1 with round n\'s parent while round n trains, and trains it from round n\'s checkpoint without collecting it again', async () => {
    const { result, events, runs } = await finished('ovl');
    assert.deepEqual(runs, ['run of round 1', 'run of round 2', 'run of round 3']);
    const once = (prefix: string) => events.filter((e) => e.startsWith(prefix));
    // Every round generated, measured and trained once, in round order.
    assert.deepEqual(once('generate '), ['generate ovl-r1 after []', 'generate ovl-r2 after [ovl-r1/ovl-r1-gen]', 'generate ovl-r3 after [ovl-r1/ovl-r1-gen ovl-r2/ovl-r2-gen]']);
    assert.deepEqual(once('measure '), ['measure 1 on ovl-base-eval', 'measure 2 on ovl-base-eval', 'measure 3 on ovl-r1-eval']);
    // The generated tasks rolled out by base, base, r1: one checkpoint behind the round's parent from round 2 on.
    assert.deepEqual(once('batch ovl-r'), [
      'batch ovl-r1-gen by base',
      'batch ovl-r2-gen by base',
      'batch ovl-r1-eval by specialist-KAlgebra', // round 1's evaluation
      'batch ovl-r3-gen by ovl-r1',
      'batch ovl-r1-eval by specialist-KAlgebra', // round 3's real tasks: r1's evaluation batch, awaited again
      'batch ovl-r2-eval by specialist-KAlgebra',
      'batch ovl-r3-eval by specialist-KAlgebra',
    ]);
    // Round 2's real tasks are the base planner's, rolled out in round 1's collection: not started again
    // (the base batch runs in round 1's collection and in each round's evaluation only).
    assert.equal(once('batch ovl-base-eval').length, 4);
    assert.deepEqual(once('train '), [
      'train ovl-r1 from base recording [ovl-r1/ovl-r1-gen]',
      'train ovl-r2 from checkpoints/ovl-r1 recording [ovl-r1/ovl-r1-gen ovl-r2/ovl-r2-gen]',
      'train ovl-r3 from checkpoints/ovl-r2 recording [ovl-r1/ovl-r1-gen ovl-r2/ovl-r2-gen ovl-r3/ovl-r3-gen]',
    ]);
    // Round 2's collection started while round 1 trained.
    assert.ok(events.indexOf('generate ovl-r2 after [ovl-r1/ovl-r1-gen]') < events.indexOf('trained ovl-r1'));
    assert.ok(events.indexOf('generate ovl-r3 after [ovl-r1/ovl-r1-gen ovl-r2/ovl-r2-gen]') < events.indexOf('trained ovl-r2'));
    assert.deepEqual(result.history.map((r) => [r.round, r.checkpoint, r.rolloutPlanner, r.sources]), [
      [1, 'ovl-r1', 'base', ['ovl-r1-gen']],
      [2, 'ovl-r2', 'base', ['ovl-r2-gen']],
      [3, 'ovl-r3', 'ovl-r1', ['ovl-r3-gen']],
    ]);
    assert.deepEqual(once('dataset '), ['dataset ovl-r1 of ovl-r1-gen', 'dataset ovl-r2 of ovl-r1-gen,ovl-r2-gen', 'dataset ovl-r3 of ovl-r1-gen,ovl-r2-gen,ovl-r3-gen']);
  });

  it('stopAfterRound with two rounds in flight ends after the older one: the newer one\'s collection is not trained on or recorded', async () => {
    const { result, events, runs } = await finished('ovlstop');
    assert.deepEqual(runs, ['run of round 1']);
    assert.deepEqual([result.rounds, result.specialist.name, result.history.map((r) => r.round)], [1, 'ovlstop-r1', [1]]);
    assert.deepEqual(events.filter((e) => /^(dataset|train|serve|report) .*-r2/.test(e)), []);
  });
});
