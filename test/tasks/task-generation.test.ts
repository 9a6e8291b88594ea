import assert from 'node:assert/strict';
import { WorkflowFailedError } from '@temporalio/client';
import type { TaskSetSummary } from '../../activities/tasks/generation';
import { attemptOfManifest, taskSetManifestKey, verdictKey } from '../../core/keys';
import { parseTask } from '../../core/task';
import { normaliseInstruction } from '../../core/task-dedupe';
import { type TaskSetManifest } from '../../core/task-set';
import { verdictFileSchema } from '../../core/judge/verdict-file';
import { readTask } from '../../doubles/scripted-models/generated-tasks';
import type { BatchResult } from '../../workflows/rollout/batch';
import type { JudgeRunResult } from '../../workflows/judging/judge';
import { startHarness, type Harness } from '../support/harness';
import { taskGenerationWorkflowId } from '../../workflows/names';
import { APPS } from '../../apps/index';
import { taskSetManifestSchema } from '../../apps/manifests';

const EXACT = { high: { falsePositive: 0, falseNegative: 0 }, low: { falsePositive: 0, falseNegative: 0 }, unreadable: 0 };

describe('task generation: a versioned task set from the generator model, run and judged', function () {
  this.timeout(600_000);
  let h: Harness;
  const version = `v${Date.now()}`;
  let manifest: TaskSetManifest;
  /** The run the set was rolled out and judged in (the third test). */
  let rollouts: string | undefined;
  let solvedTasks: string[] = [];


  before(async () => {
    h = await startHarness({
      name: 'taskgen',
      desktops: 2,
      displayFrom: 260,
      models: (doc) => {
        doc.models.judges = [{ name: 'judge-exact', baseUrl: '${CODA_JUDGE_A_URL}', model: 'judge-exact' }];
        doc.judging.plan = { lowResolutionVotes: 1, highResolutionVotes: 1, judges: ['judge-exact'] };
        delete doc.judging.strategies;
        doc.dev.scriptedModels.judges = { 'judge-exact': EXACT };
      },
      edit: (doc) => (doc.taskGeneration = { ...doc.taskGeneration, tasksPerRequest: 4 }),
    });
  });
  after(async () => h?.stop());

  it('writes the set: tasks from the seeds, deduplicated, bounded, with provenance, starting from the seeds\' launch', async () => {
    const summary = await h.execute<TaskSetSummary>('taskGeneration', taskGenerationWorkflowId('KAlgebra', version), { software: 'KAlgebra', version, count: 6 });
    assert.equal(summary.existed, false);
    assert.equal(summary.manifestKey, taskSetManifestKey(h.config.storage.prefix, 'KAlgebra', version));
    manifest = taskSetManifestSchema.parse(await h.stack.store.getJson(summary.manifestKey));
    assert.deepEqual(summary.counts, manifest.counts);
    assert.equal(manifest.counts.kept, 6);
    assert.equal(manifest.tasks.length, 6);
    assert.ok(manifest.counts.requests >= 2, 'four tasks a request: at least two requests for six');
    assert.equal(manifest.replies.length, manifest.counts.requests);
    assert.equal(manifest.duplicates.length, manifest.counts.duplicates);
    assert.equal(manifest.invalid.length, manifest.counts.invalid);
    assert.deepEqual(manifest.provenance.seedTaskIds.length, 20);
    assert.equal(manifest.provenance.model, 'task-generator');
    assert.equal(manifest.provenance.promptVersion, 'task-generator/v2');
    assert.equal(manifest.start.initialize.length, 1);
    assert.equal(manifest.start.initialize[0]?.func, 'launch');
    assert.equal(new Set(manifest.tasks.map((t) => t.instruction.toLowerCase())).size, 6, 'no two tasks alike');
    for (const entry of manifest.tasks) {
      const task = parseTask(APPS, await h.stack.store.getJson(entry.key), entry.id);
      assert.equal(task.instruction, entry.instruction);
      assert.deepEqual(task.evaluate, []);
      assert.equal(task.generated?.set, version);
      assert.deepEqual(task.initialize, manifest.start.initialize);
    }
    const reply = await h.stack.store.getJson<{ text: string }>(manifest.replies[0]!);
    assert.match(reply.text, /tasks/);
  });

  it('returns an existing version as it is, without calling the generator again', async () => {
    const calls = h.models.served.get('task-generator');
    const again = await h.execute<TaskSetSummary>('taskGeneration', `${taskGenerationWorkflowId('KAlgebra', version)}-again`, { software: 'KAlgebra', version, count: 6 });
    assert.equal(again.existed, true);
    assert.deepEqual(again.counts, manifest.counts);
    assert.equal(h.models.served.get('task-generator'), calls);
  });

  it('runs the generated tasks on real desktops, and the judge says which followed the generator\'s plan', async () => {
    await h.startVmHost();
    const run = `gen${Date.now()}`;
    rollouts = run;
    const batch = await h.execute<BatchResult>('rolloutBatch', `batch-${run}-KAlgebra`, { run, software: 'KAlgebra', taskSet: version, attempts: 1, stage: 'specialization' });
    assert.deepEqual({ completed: batch.completed, unevaluated: batch.unevaluated, passed: batch.passed, failed: batch.failed, errors: batch.errors }, { completed: 6, unevaluated: 6, passed: 0, failed: 0, errors: 0 });
    const judged = await h.execute<JudgeRunResult>('judgeRun', `judge-run-${run}`, { run, software: 'KAlgebra' });
    assert.equal(judged.judged, 6);
    const planned = manifest.tasks.filter((t) => readTask('KAlgebra', t.instruction)?.ans !== undefined);
    assert.equal(judged.succeeded, planned.length, 'the scripted planner solves the tasks it has a plan for, and only those');
    const keys = (await h.stack.store.list(`${h.config.storage.prefix}/runs/${run}/KAlgebra/`)).filter((k) => k.endsWith('/manifest.json'));
    for (const key of keys) {
      const ref = attemptOfManifest(h.config.storage.prefix, key);
      const verdict = verdictFileSchema.parse(await h.stack.store.getJson(verdictKey(h.config.storage.prefix, ref)));
      const task = manifest.tasks.find((t) => t.id === ref.task)!;
      assert.equal(verdict.success, readTask('KAlgebra', task.instruction)?.ans !== undefined, `${ref.task}: ${task.instruction}`);
    }
    solvedTasks = planned.map((t) => t.id);
  });

  it('writes the next round\'s set from the earlier round\'s tasks and verdicts: none of them again, each repeat recorded with the round it repeats', async () => {
    assert.ok(rollouts !== undefined, 'needs the judged rollouts of the test before');
    const next = `${version}-next`;
    const generated = h.models.served.get('task-generator') ?? 0;
    // The headline's round size (specialization.tasksPerRound: 12).
    const summary = await h.execute<TaskSetSummary>('taskGeneration', taskGenerationWorkflowId('KAlgebra', next), {
      software: 'KAlgebra',
      version: next,
      count: 12,
      earlier: [{ set: version, round: 1, rollouts }],
    });
    assert.ok((h.models.served.get('task-generator') ?? 0) > generated, 'the generator was asked');
    const second = taskSetManifestSchema.parse(await h.stack.store.getJson(summary.manifestKey));
    assert.deepEqual(summary.counts, second.counts);
    assert.deepEqual(second.earlier, [{ set: version, round: 1, rollouts, tasks: 6, judged: 6, solved: solvedTasks.length }]);
    assert.ok(second.counts.kept > 0);
    const before = new Set(manifest.tasks.map((t) => normaliseInstruction(t.instruction)));
    assert.deepEqual(second.tasks.filter((t) => before.has(normaliseInstruction(t.instruction))).map((t) => t.instruction), [], 'no task of round 1 again');
    assert.equal(second.repeats.length, second.counts.repeats);
    for (const repeat of second.repeats) {
      assert.equal(repeat.set, version);
      assert.equal(repeat.round, 1);
      assert.equal(manifest.tasks.find((t) => t.id === repeat.task)?.instruction, repeat.of, `${repeat.task} is the task repeated`);
    }
    // A set can be shown only sets that exist, and never itself.
    for (const [i, [earlier, expected]] of ([
      [[{ set: 'no-such-set', round: 1 }], /earlier\[0\]\.set: no generated KAlgebra task set "no-such-set"/],
      [[{ set: `${version}-self`, round: 1 }], /earlier: the set "v\d+-self" cannot be an earlier round of itself/],
    ] as const).entries()) {
      await assert.rejects(h.execute('taskGeneration', `bad-earlier-${version}-${i}`, { software: 'KAlgebra', version: `${version}-self`, earlier }), (err: unknown) => {
        assert.ok(err instanceof WorkflowFailedError);
        assert.match(String(err.cause?.message), expected);
        return true;
      });
    }
  });

  it('fails at once on bad input, naming the field', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ software: 'Excel' }, /^input is invalid:\n {2}- software: unknown software "Excel": expected one of Celestia, ChimeraX, GrassGIS, KAlgebra, Lean, TeXstudio/],
      [{ software: 'KAlgebra', count: 0 }, /^task generation input is invalid:\n {2}- count: expected an integer >= 1$/],
      [{ software: 'KAlgebra', version: '../x' }, /version: expected an id of letters/],
      [{ software: 'KAlgebra', seedTaskIds: ['Z-99'] }, /^task set KAlgebra is invalid:\n {2}- unknown KAlgebra task "Z-99"$/],
      [{ software: 'KAlgebra', earlier: [{ set: 'v1', round: 0 }] }, /^task generation input is invalid:\n {2}- earlier\[0\]\.round: expected an integer >= 1$/],
    ];
    for (const [i, [input, expected]] of cases.entries()) {
      await assert.rejects(h.execute('taskGeneration', `bad-taskgen-${version}-${i}`, input), (err: unknown) => {
        assert.ok(err instanceof WorkflowFailedError);
        assert.match(String(err.cause?.message), expected);
        return true;
      });
    }
    await assert.rejects(h.execute('rolloutBatch', `bad-set-${version}`, { software: 'KAlgebra', taskSet: 'no-such-set' }), (err: unknown) => {
      assert.ok(err instanceof WorkflowFailedError);
      assert.match(String(err.cause?.message), /taskSet: no generated KAlgebra task set "no-such-set"/);
      return true;
    });
  });
});

describe('task generation when every reply is damaged beyond repair', function () {
  this.timeout(300_000);
  let h: Harness;
  before(async () => {
    h = await startHarness({ name: 'taskgen-broken', desktops: 1, displayFrom: 280, models: (doc) => (doc.dev.scriptedModels.brokenTaskReplyRate = 1) });
  });
  after(async () => h?.stop());

  it('records why each reply was rejected and completes with an empty set, which a batch then refuses', async () => {
    const version = `broken${Date.now()}`;
    const summary = (await h.stack.client.workflow.execute('taskGeneration', {
      taskQueue: h.config.taskQueues.orchestrator,
      workflowId: taskGenerationWorkflowId('KAlgebra', version),
      args: [{ software: 'KAlgebra', version, count: 5 }],
    })) as TaskSetSummary;
    assert.deepEqual(summary.counts, { requests: 4, kept: 0, duplicates: 0, invalid: 4, overLimit: 0, repeats: 0 });
    const manifest = taskSetManifestSchema.parse(await h.stack.store.getJson(summary.manifestKey));
    assert.deepEqual(manifest.invalid, [1, 2, 3, 4].map((n) => `reply ${n}: no JSON object or list found in the reply`));
    await assert.rejects(
      h.stack.client.workflow.execute('rolloutBatch', { taskQueue: h.config.taskQueues.orchestrator, workflowId: `batch-empty-${version}`, args: [{ software: 'KAlgebra', taskSet: version }] }),
      (err: unknown) => {
        assert.ok(err instanceof WorkflowFailedError);
        assert.match(String(err.cause?.message), /taskSet: the KAlgebra task set "broken\d+" is empty/);
        return true;
      },
    );
  });
});
