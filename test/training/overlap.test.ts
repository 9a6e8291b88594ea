import assert from 'node:assert/strict';
import * as path from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import type { TrainRequest } from '../../activities/training/contract';
import type { TrainingHeartbeat } from '../../activities/training/progress';
import { checkpointManifestKey, datasetManifestKey, trainingJobPrefix } from '../../core/keys';
import { checkpointManifestSchema } from '../../core/training';
import { stopAfterRound, type SpecializationProgress, type SpecializationResult } from '../../workflows/training/progress';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDaemon, stopDaemon } from '../../infra/daemon';
import { workerSpec } from '../../infra/worker-process';
import { eventually, waitForPoller } from '../support/rollouts';
import { batchInputs, startGpuHarness, type GpuHarness } from '../support/gpu-harness';
import { alive, causes, processesMentioning } from './processes';
import { batchWorkflowId, judgeRunWorkflowId, specializationWorkflowId } from '../../workflows/names';

/**
 * Overlapped specialization rounds (specialization.maxStaleness 1, issue 20) on the real Temporal
 * server, MinIO and a real KAlgebra desktop, with the OpenRLHF double on a GPU worker: round n+1
 * generates, rolls out with the newest served planner and judges while round n trains, serves and
 * is evaluated; its training still starts from round n's checkpoint. The orchestrator worker is
 * restarted while two rounds are in flight, and every stage runs once.
 */
describe('overlapped specialization rounds (maxStaleness 1; trainer double, real desktop)', function () {
  this.timeout(1_200_000);
  let g: GpuHarness;
  const run = 'Overlap-Spec';

  before(async () => {
    // Trainer steps slow enough that the next round's collection runs beside the training; a GPU
    // worker killed mid-training is noticed after 10 s without a heartbeat.
    g = await startGpuHarness({
      name: 'overlap',
      runtimeLora: true,
      desktops: 2,
      displayFrom: Number(process.env.CODA_DISPLAY_BASE ?? 620),
      stepMs: 1500,
      edit: (doc) => void (doc.training.heartbeatTimeoutSeconds = 10),
    });
    await g.h.startVmHost();
  });
  afterEach(async () => g?.stopGpuWorkers());
  after(async () => {
    // A failed test may leave its orchestrator processes behind.
    for (const name of ['overlap-orchestrator-a', 'overlap-orchestrator-b']) if (g) await stopDaemon(g.h.config.dataDir, name, 10_000).catch(() => undefined);
    await g?.stop();
  });

  /** Three KAlgebra rounds at maxStaleness 1 (3 generated tasks × 1 a round, evaluated on 2 real tasks × 1). */
  function startOverlapped(run: string) {
    return g.h.stack.client.workflow.start('specialization', {
      taskQueue: g.h.config.taskQueues.orchestrator,
      workflowId: specializationWorkflowId('KAlgebra', run),
      args: [{ software: 'KAlgebra', run, rounds: 3, tasksPerRound: 3, attempts: 1, evaluationAttempts: 1, evaluationTaskIds: ['C-03', 'A-01'], maxStaleness: 1 }],
    });
  }

  /** An orchestrator worker as a real process (its own group, no metrics endpoint), polling once this resolves; its pid. */
  async function spawnOrchestrator(name: string): Promise<number> {
    const state = startDaemon(g.h.config.dataDir, workerSpec(g.h.config, 'orchestrator', [], { ...g.h.env, CODA_ORCHESTRATOR_METRICS_PORT: '0' }, name));
    await waitForPoller(g.h, state, g.h.config.taskQueues.orchestrator);
    return state.pid!;
  }

  it('three rounds at maxStaleness 1: round n+1 collects with the served planner while round n trains; parents chain r1 → r2 → r3; the orchestrator and the GPU worker killed (SIGKILL) mid-overlap, no stage runs twice', async () => {
    const client = g.h.stack.client;
    // The orchestrator runs as a process of its own here, to be killed: the harness's in-process one steps aside until the end.
    await g.h.stopOrchestrator();
    const firstOrchestrator = await spawnOrchestrator('overlap-orchestrator-a');
    const firstGpu = await g.spawnGpuWorker('overlap-gpu-a');
    const workflowId = specializationWorkflowId('KAlgebra', run);
    const handle = await startOverlapped(run);
    // Watches the progress until the result: every pair of rounds seen in flight together; the first
    // time the older one trains while the newer one rolls out, the GPU worker (the trainer dies with
    // it) and the orchestrator are killed (SIGKILL), another GPU worker is started on a fresh work
    // directory and another orchestrator, on which the workflows replay. (Killed during the
    // rollouts, not during task generation: an activity the dead orchestrator held is retried after
    // its timeout, and task generation's heartbeat timeout is 5 minutes.)
    const overlaps = new Map<string, SpecializationProgress['inFlight']>();
    let restarted = false;
    let killedDuring = '';
    let done = false;
    const result = handle.result().finally(() => void (done = true)) as Promise<SpecializationResult>;
    while (!done) {
      const progress = await handle.query<SpecializationProgress>('progress').catch(() => undefined);
      if (progress !== undefined && progress.inFlight.length === 2) {
        overlaps.set(progress.inFlight.map((f) => f.round).join('+'), progress.inFlight);
        // Killed once its training is running there (it has heartbeaten), not merely scheduled.
        const training = !restarted && progress.inFlight[0]!.stage === 'training' && progress.inFlight[1]!.stage === 'rollouts' ? (await handle.describe()).raw.pendingActivities?.find((a) => a.activityType?.name === 'train' && a.heartbeatDetails !== undefined && a.heartbeatDetails !== null) : undefined;
        if (training !== undefined) {
          restarted = true;
          killedDuring = `${JSON.stringify(progress.inFlight)}, train attempt ${training.attempt}`;
          process.kill(firstGpu, 'SIGKILL');
          process.kill(firstOrchestrator, 'SIGKILL');
          await spawnOrchestrator('overlap-orchestrator-b');
          await g.spawnGpuWorker('overlap-gpu-b', { CODA_TEST_GPU_WORK_DIR: path.join(g.h.config.dataDir, 'other-gpu-node') });
        }
      }
      await sleep(200);
    }
    const specialization = await result;
    await g.stopGpuWorkers();
    await stopDaemon(g.h.config.dataDir, 'overlap-orchestrator-b', 10_000);
    await g.h.startOrchestrator();
    assert.equal(alive(firstOrchestrator), false, 'the first orchestrator was killed');

    assert.ok(restarted, 'the GPU and orchestrator workers were killed while one round trained and the next rolled out');
    assert.deepEqual([...overlaps.keys()].sort(), ['1+2', '2+3'], `rounds in flight together: ${JSON.stringify([...overlaps.values()])}`);
    for (const [older, newer] of overlaps.values()) {
      assert.ok(['starting', 'dataset', 'training', 'serving', 'evaluation'].includes(older!.stage), `the older round trains, serves or is evaluated: ${older!.stage}`);
      assert.ok(['starting', 'task-generation', 'rollouts', 'judging'].includes(newer!.stage), `the newer round collects: ${newer!.stage}`);
    }

    assert.equal(specialization.rounds, 3);
    assert.deepEqual(specialization.history.map((r) => r.round), [1, 2, 3]);
    for (const r of specialization.history) {
      assert.ok(r.skipped === undefined && r.positiveSteps > 0, `round ${r.round} trained: ${JSON.stringify(r)}`);
      assert.equal(r.checkpoint, `${run}-r${r.round}`);
      assert.deepEqual(r.sources, [`${run}-r${r.round}-gen`]);
      assert.ok(r.tasks > 0 && r.rollouts > 0 && r.judged > 0 && r.judge !== undefined, JSON.stringify(r));
    }
    // Round 1 rolls out with the base; round 2 started while round 1 trained: the base again; round 3 while round 2 trained: round 1's checkpoint.
    assert.deepEqual(specialization.history.map((r) => r.rolloutPlanner), ['base', 'base', `${run}-r1`]);
    assert.deepEqual(specialization.history.map((r) => r.judge?.run), [`${run}-base-eval`, `${run}-base-eval`, `${run}-r1-eval`], "each round's judge is measured on its rollout planner's real-task rollouts");
    const inputs = await Promise.all([1, 2, 3].map(async (r) => batchInputs(g.h.stack.client, `${run}-r${r}-gen`)));
    assert.deepEqual(inputs.map((i) => i.map((input) => (input.planner as { name: string }).name)), [['base'], ['base'], [`${run}-r1`]], 'the generated tasks were rolled out once each, by the planner the record names');

    // Training parents chain r1 → r2 → r3, every round from the base planner.
    const store = g.h.stack.store;
    const prefix = g.h.config.storage.prefix;
    const manifests = await Promise.all([1, 2, 3].map(async (r) => checkpointManifestSchema.parse(await store.getJson(checkpointManifestKey(prefix, `${run}-r${r}`)))));
    assert.deepEqual(manifests.map((m) => m.parent), [undefined, checkpointManifestKey(prefix, `${run}-r1`), checkpointManifestKey(prefix, `${run}-r2`)]);
    assert.ok(manifests.every((m) => m.kind === 'grpo'));
    assert.deepEqual(specialization.specialist.checkpointKey, checkpointManifestKey(prefix, `${run}-r3`));

    // Across every run of the specialization (one per round, continue-as-new), each child workflow
    // id was started once and each training job scheduled once.
    const children: string[] = [];
    const jobs: string[] = [];
    const trainAttempts: number[] = [];
    const runs: string[] = [];
    for await (const e of client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
      runs.push(e.runId);
      const history = await client.workflow.getHandle(e.workflowId, e.runId).fetchHistory();
      for (const event of history.events ?? []) {
        const child = event.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
        if (child) children.push(child);
        const activity = event.activityTaskScheduledEventAttributes;
        if (activity?.activityType?.name === 'train') {
          jobs.push(defaultPayloadConverter.fromPayload<TrainRequest>(activity.input!.payloads![0] as Payload).job);
          const started = history.events?.find((e) => e.activityTaskStartedEventAttributes && Number(e.activityTaskStartedEventAttributes.scheduledEventId) === Number(event.eventId));
          trainAttempts.push(started?.activityTaskStartedEventAttributes?.attempt ?? 0);
        }
      }
    }
    assert.equal(runs.length, 3, 'one workflow run per round');
    assert.deepEqual([...jobs].sort(), [1, 2, 3].map((r) => `${run}-r${r}`), 'one training job per round');
    assert.ok(trainAttempts.some((a) => a >= 2), `the killed worker's training was retried, as an attempt of the same job: ${trainAttempts.join(', ')} (killed during ${killedDuring})`);
    assert.deepEqual(children.filter((c, i) => children.indexOf(c) !== i), [], `no child workflow started twice: ${children.join(', ')}`);
    const expected = [1, 2, 3].flatMap((r) => [`task-generation-KAlgebra-${run}-r${r}`, `evaluation-${run}-r${r}`]);
    for (const id of expected) assert.ok(children.includes(id), `${id} was started: ${children.join(', ')}`);
  });

  it('stopAfterRound while two rounds are in flight ends after the older one: the newer one\'s collection is cancelled, nothing of it is counted or trained', async () => {
    const stopped = 'Overlap-Stop';
    const client = g.h.stack.client;
    await g.startGpuWorker();
    const handle = await startOverlapped(stopped);
    const overlap = await eventually('two rounds in flight', async () => {
      const progress = await handle.query<SpecializationProgress>('progress').catch(() => undefined);
      return progress !== undefined && progress.inFlight.length === 2 ? progress : undefined;
    }, 600_000);
    assert.deepEqual(overlap.inFlight.map((f) => f.round), [1, 2]);
    await handle.signal(stopAfterRound);
    const result = (await handle.result()) as SpecializationResult;
    assert.equal(result.rounds, 1, 'stopped after round 1');
    assert.deepEqual(result.history.map((r) => r.round), [1]);
    assert.equal(result.specialist.name, `${stopped}-r1`);
    const store = g.h.stack.store;
    const prefix = g.h.config.storage.prefix;
    // Round 2's collection (task generation, rollouts, judging: whichever had started) was cancelled, and nothing more ran: no dataset, no training job, no checkpoint, no evaluation.
    const round2 = await eventually("round 2's workflows to end", async () => {
      const seen: string[] = [];
      for await (const e of client.workflow.list({ query: `ExecutionStatus != "ContinuedAsNew"` })) if (e.workflowId.includes(`${stopped}-r2`)) seen.push(`${e.workflowId} ${e.status.name}`);
      return seen.length > 0 && seen.every((w) => !w.endsWith(' RUNNING')) ? seen : undefined;
    }, 60_000);
    // Cancelled before it finished: its generated tasks' batch and their judging, if started, did not complete.
    for (const id of [batchWorkflowId(`${stopped}-r2-gen`, 'KAlgebra'), judgeRunWorkflowId(`${stopped}-r2-gen`, 'KAlgebra')]) {
      const seen = round2.find((w) => w.startsWith(`${id} `));
      assert.ok(seen === undefined || seen.endsWith(' CANCELLED'), `round 2's collection was cancelled before ${id} completed: ${round2.join(', ')}`);
    }
    assert.equal(await store.tryGet(datasetManifestKey(prefix, `${stopped}-r2`)), undefined, 'no round 2 dataset');
    assert.deepEqual(await store.list(`${trainingJobPrefix(prefix, `${stopped}-r2`)}/`), [], 'no round 2 training job');
    assert.equal(await store.tryGet(checkpointManifestKey(prefix, `${stopped}-r2`)), undefined, 'no round 2 checkpoint');
    const describe = await handle.describe();
    assert.equal(describe.status.name, 'COMPLETED');
    const runs: string[] = [];
    for await (const e of client.workflow.list({ query: `WorkflowId = "${specializationWorkflowId('KAlgebra', stopped)}"` })) runs.push(e.runId);
    assert.equal(runs.length, 1, 'no continue-as-new after the stop');
  });

  it('cancelled while two rounds are in flight: the trainer of the older round is stopped, the newer round\'s rollouts are cancelled, nothing is recorded as trained', async () => {
    const cancelled = 'Overlap-Cancel';
    const client = g.h.stack.client;
    await g.startGpuWorker();
    const handle = await startOverlapped(cancelled);
    // Round 1's trainer runs (its heartbeat names its process) while round 2 rolls out.
    const trainer = await eventually("round 1's trainer to run beside round 2's collection", async () => {
      const train = (await handle.describe()).raw.pendingActivities?.find((a) => a.activityType?.name === 'train');
      const data = train?.heartbeatDetails?.payloads?.[0]?.data;
      const beat = data === undefined || data === null ? undefined : (JSON.parse(Buffer.from(data).toString('utf8')) as TrainingHeartbeat);
      return beat?.trainerPid;
    }, 600_000);
    const progress = await handle.query<SpecializationProgress>('progress');
    assert.deepEqual(progress.inFlight.map((f) => f.round), [1, 2], JSON.stringify(progress.inFlight));
    assert.ok(alive(trainer) && processesMentioning(`jobs/${cancelled}-r1/`).length > 0, 'the trainer runs before the cancellation');
    await handle.cancel();
    await assert.rejects(handle.result(), (err: Error) => /cancel/i.test(causes(err)));
    assert.equal(alive(trainer), false, 'the trainer is gone');
    assert.deepEqual(processesMentioning(`jobs/${cancelled}-r1/`), [], 'nothing of the job is left running');
    // Every workflow of the run (the rounds' batches, rollouts, task generation, evaluation) has ended.
    const running = await eventually('every workflow of the run to end', async () => {
      const left: string[] = [];
      for await (const e of client.workflow.list({ query: `ExecutionStatus = "Running"` })) if (e.workflowId.includes(cancelled)) left.push(e.workflowId);
      return left.length === 0 ? left : undefined;
    }, 60_000);
    assert.deepEqual(running, []);
    const store = g.h.stack.store;
    const prefix = g.h.config.storage.prefix;
    for (const r of [1, 2]) assert.equal(await store.tryGet(checkpointManifestKey(prefix, `${cancelled}-r${r}`)), undefined, `no round ${r} checkpoint`);
    assert.equal(await store.tryGet(datasetManifestKey(prefix, `${cancelled}-r2`)), undefined, 'no round 2 dataset');
    const runs: string[] = [];
    for await (const e of client.workflow.list({ query: `WorkflowId = "${specializationWorkflowId('KAlgebra', cancelled)}"` })) runs.push(`${e.runId} ${e.status.name}`);
    assert.equal(runs.length, 1, `one run, cancelled in round 1: ${runs.join(', ')}`);
    assert.match(runs[0]!, /CANCELLED$/);
  });
});
