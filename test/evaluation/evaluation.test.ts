import assert from 'node:assert/strict';
import { WorkflowFailedError } from '@temporalio/client';
import { syncSchedules } from '../../cli/schedules';
import { reportSeriesPrefix } from '../../core/keys';
import { REPORT_SCHEMA, type EvaluationReport } from '../../core/report';
import { DEFAULT_BOOTSTRAP } from '../../core/uncertainty';
import { ValidationError } from '../../core/validation';
import type { EvaluationResult } from '../../workflows/evaluation/evaluation';
import { startHarness, type Harness } from '../support/harness';
import { eventually } from '../support/rollouts';
import { rolloutWorkflowId } from '../../workflows/names';

describe('evaluation: Average@k and Pass@k reports with their diff, and the nightly schedule', function () {
  this.timeout(600_000);
  let h: Harness;
  const stamp = Date.now();
  const series = `series-${stamp}`;
  const scheduleId = `nightly-test-${stamp}`;
  const scheduleInput = { series: `sched-${stamp}`, software: ['KAlgebra'], attempts: 1, taskIds: { KAlgebra: ['C-03'] } };


  before(async () => {
    h = await startHarness({
      name: 'evaluation',
      desktops: 2,
      displayFrom: Number(process.env.CODA_DISPLAY_BASE ?? 300),
      edit: (doc) => (doc.schedules = [{ id: scheduleId, cron: '0 2 * * *', workflow: 'evaluation', taskQueue: 'orchestrator', input: scheduleInput, catchupWindow: '2 hours' }]),
    });
    await h.startVmHost();
  });
  after(async () => {
    await h?.stack.client.schedule.getHandle(scheduleId).delete().catch(() => undefined);
    await h?.stop();
  });

  it('runs k attempts of the tasks per planner and writes a report in the paper layout; the next report of the series names what changed', async () => {
    const first = await h.execute<EvaluationResult>('evaluation', `evaluation-first-${stamp}`, {
      run: `first-${stamp}`,
      series,
      software: ['KAlgebra'],
      attempts: 2,
      taskIds: { KAlgebra: ['A-01', 'C-03'] },
      planners: [{ name: 'base', model: 'coda-planner' }],
    });
    assert.equal(first.previousKey, undefined);
    const certain = { lower: 100, upper: 100 };
    assert.deepEqual(first.rows, [{ planner: 'base', averageAtK: { KAlgebra: 100, overall: 100 }, passAtK: { KAlgebra: 100, overall: 100 }, averageInterval: { KAlgebra: certain, overall: certain }, appNotRunning: { KAlgebra: 0, overall: 0 } }]);
    const report = await h.stack.store.getJson<EvaluationReport>(first.key);
    assert.equal(report.schema, REPORT_SCHEMA);
    assert.equal(report.k, 2);
    assert.deepEqual(report.rows[0]?.metrics.tasks.map((t) => [t.taskId, t.runs, t.successes]), [['A-01', 2, 2], ['C-03', 2, 2]]);
    assert.ok(first.key.startsWith(`${reportSeriesPrefix(h.config.storage.prefix, series)}/`));
    const markdown = (await h.stack.store.get(first.markdownKey)).toString('utf8');
    assert.match(markdown, /\| base \(`coda-planner`\) \| 100\.00 \[100\.0, 100\.0\] \| 100\.00 \[100\.0, 100\.0\] \|/);
    assert.match(markdown, /This is the first report of its series\./);
    assert.match(markdown, /## The app was not running at evaluation\n\n.*\n\n- base: 0\n/);

    // The same checkpoint name served by a model the endpoint does not have: every rollout ends in ERROR.
    const second = await h.execute<EvaluationResult>('evaluation', `evaluation-second-${stamp}`, {
      run: `second-${stamp}`,
      series,
      software: ['KAlgebra'],
      attempts: 2,
      taskIds: { KAlgebra: ['A-01', 'C-03'] },
      planners: [{ name: 'base', model: 'no-such-planner' }],
    });
    assert.equal(second.previousKey, first.key);
    assert.deepEqual(second.rows[0]?.averageAtK, { KAlgebra: 0, overall: 0 });
    const diffed = await h.stack.store.getJson<EvaluationReport>(second.key);
    assert.deepEqual(diffed.diff, [{ planner: 'base', started: [], stopped: ['KAlgebra/A-01', 'KAlgebra/C-03'], averageDelta: { KAlgebra: -100, overall: -100 } }]);
    const text = (await h.stack.store.get(second.markdownKey)).toString('utf8');
    assert.match(text, new RegExp(`## Since first-${stamp} \\(`));
    assert.match(text, /- base: Average@2 KAlgebra -100\.00, overall -100\.00; started passing: none; stopped passing: KAlgebra\/A-01, KAlgebra\/C-03/);
  });

  it('compares every row with the base over the same tasks, and rolls out a base row that names its run once for every evaluation', async () => {
    const baseRun = `shared-base-${stamp}`;
    const evaluate = (name: string) =>
      h.execute<EvaluationResult>('evaluation', `evaluation-${name}-${stamp}`, {
        run: `${name}-${stamp}`,
        series: `paired-${stamp}`,
        software: ['KAlgebra'],
        attempts: 2,
        taskIds: { KAlgebra: ['A-01', 'C-03'] },
        planners: [{ name: 'base', model: 'coda-planner', run: baseRun }, { name: 'broken', model: 'no-such-planner' }],
      });
    const first = await evaluate('paired1');
    const broken = first.rows.find((r) => r.planner === 'broken')!;
    assert.equal(first.rows.find((r) => r.planner === 'base')!.vsBase, undefined);
    // Both tasks 100 points worse; two tasks cannot show it beyond noise (the sign-flip test's p is 0.5), nor reject any difference.
    assert.deepEqual({ ...broken.vsBase!.KAlgebra!, pValue: Math.round(broken.vsBase!.KAlgebra!.pValue * 10) / 10 }, { difference: -100, lower: -100, upper: 100, pValue: 0.5, withinNoise: true });
    const report = await h.stack.store.getJson<EvaluationReport>(first.key);
    assert.deepEqual(report.rows.map((r) => r.runs.KAlgebra), [baseRun, `paired1-${stamp}.broken`]);
    assert.deepEqual({ ...report.uncertainty, method: undefined }, { confidence: 0.95, seed: DEFAULT_BOOTSTRAP.seed, resamples: DEFAULT_BOOTSTRAP.resamples, base: 'base', method: undefined });
    const markdown = (await h.stack.store.get(first.markdownKey)).toString('utf8');
    assert.match(markdown, /\| broken \(`no-such-planner`\) \| 0\.00 \[0\.0, 0\.0\] \| 0\.00 \[0\.0, 0\.0\] \| \u2212100\.0 \[\u2212100\.0, 100\.0\] within noise, p 0\.[45]\d\d \|/);

    const second = await evaluate('paired2');
    assert.deepEqual(second.rows.find((r) => r.planner === 'broken')!.vsBase, broken.vsBase);
    // The base's rollouts ran once: each attempt's workflow has a single execution.
    for (const task of ['A-01', 'C-03']) {
      for (const attempt of [0, 1]) {
        const executions = [];
        for await (const e of h.stack.client.workflow.list({ query: `WorkflowId = "${rolloutWorkflowId({ run: baseRun, software: 'KAlgebra', task, attempt })}"` })) executions.push(e);
        assert.equal(executions.length, 1, `${task} attempt ${attempt}`);
      }
    }
  });

  it('has one column per software and lists the tasks this deployment cannot run apart, never as failures', async () => {
    const result = await h.execute<EvaluationResult>('evaluation', `evaluation-two-${stamp}`, {
      run: `two-${stamp}`,
      series: `two-${stamp}`,
      software: ['KAlgebra', 'TeXstudio'],
      attempts: 1,
      taskIds: { KAlgebra: ['C-03'], TeXstudio: ['D-01', 'A-01'] },
    });
    assert.deepEqual(result.rows[0]?.passAtK, { KAlgebra: 100, TeXstudio: 100, overall: 100 });
    const report = await h.stack.store.getJson<EvaluationReport>(result.key);
    assert.deepEqual(report.softwares, ['KAlgebra', 'TeXstudio']);
    assert.deepEqual(report.rows[0]?.metrics.tasks.map((t) => `${t.software}/${t.taskId}`), ['KAlgebra/C-03', 'TeXstudio/D-01']);
    assert.deepEqual(report.unsupported.map((u) => `${u.software}/${u.taskId}`), ['TeXstudio/A-01']);
    assert.match(report.unsupported[0]!.reason, /^needs ChimeraX \(initialize\[\d\] launches it/);
    const markdown = (await h.stack.store.get(result.markdownKey)).toString('utf8');
    assert.match(markdown, /\| Planner \| Algebra \(KAlgebra\) \| Documents \(TeXstudio\) \| Overall \|/);
    assert.match(markdown, /## Not run here \(unsupported, not counted\)\n\n- TeXstudio\/A-01: needs ChimeraX/);
  });

  it('evaluates a row on the software it names only (a specialist on its own): no batch of the others, a gap in their column', async () => {
    const run = `own-${stamp}`;
    const result = await h.execute<EvaluationResult>('evaluation', `evaluation-${run}`, {
      run,
      series: run,
      software: ['KAlgebra', 'TeXstudio'],
      attempts: 1,
      taskIds: { KAlgebra: ['C-03'], TeXstudio: ['D-01'] },
      planners: [{ name: 'base', model: 'coda-planner' }, { name: 'specialist-KAlgebra', model: 'coda-planner', software: ['KAlgebra'] }],
    });
    assert.deepEqual(result.rows.map((r) => Object.keys(r.averageAtK)), [['KAlgebra', 'TeXstudio', 'overall'], ['KAlgebra', 'overall']]);
    const report = await h.stack.store.getJson<EvaluationReport>(result.key);
    assert.deepEqual(report.rows.map((r) => r.runs), [{ KAlgebra: `${run}.base`, TeXstudio: `${run}.base` }, { KAlgebra: `${run}.specialist-KAlgebra` }]);
    const batches = [];
    for await (const e of h.stack.client.workflow.list({ query: `WorkflowType = "rolloutBatch" AND CodaRun = "${run}.specialist-KAlgebra"` })) batches.push(e.workflowId);
    assert.deepEqual(batches, [`batch-${run}.specialist-KAlgebra-KAlgebra`]);
    // Compared with the base over the tasks both ran: KAlgebra only.
    assert.deepEqual(Object.keys(report.rows[1]!.vsBase!.bySoftware), ['KAlgebra']);
    const markdown = (await h.stack.store.get(result.markdownKey)).toString('utf8');
    assert.match(markdown, /\| specialist-KAlgebra \(`coda-planner`\) \| 100\.00 \[100\.0, 100\.0\] \| – \| 100\.00 \[100\.0, 100\.0\] \|/);
  });

  it('creates the nightly schedule idempotently, keeps an operator\'s pause, and a triggered run produces a report', async () => {
    const { client } = h.stack;
    assert.deepEqual(await syncSchedules(client, h.config), [`created ${scheduleId} (0 2 * * *, evaluation)`]);
    const handle = client.schedule.getHandle(scheduleId);
    await handle.pause('maintenance');
    assert.deepEqual(await syncSchedules(client, h.config), [`updated ${scheduleId} (0 2 * * *, evaluation)`]);
    let described = await handle.describe();
    assert.equal(described.state.paused, true, 'syncing again keeps the pause');
    assert.equal(described.policies.overlap, 'SKIP');
    assert.equal(described.policies.catchupWindow, 2 * 3600 * 1000);
    assert.equal(described.action.type === 'startWorkflow' && described.action.workflowType, 'evaluation');
    await handle.unpause();
    described = await handle.describe();
    assert.equal(described.state.paused, false);
    assert.equal(new Date(described.info.nextActionTimes[0]!).getUTCHours(), 2);

    await handle.trigger();
    const started = await eventually('the scheduled evaluation', async () => (await handle.describe()).info.recentActions[0]?.action.workflow.workflowId);
    assert.ok(started.startsWith(`${scheduleId}-`), started);
    const result = (await client.workflow.getHandle(started).result()) as EvaluationResult;
    assert.equal(result.series, scheduleInput.series);
    assert.deepEqual(result.rows[0]?.passAtK, { KAlgebra: 100, overall: 100 });
    assert.ok(await h.stack.store.exists(result.markdownKey));
  });

  it('refuses schedules of unknown workflows or with bad input, naming them', async () => {
    const bad = { ...h.config, schedules: [{ ...h.config.schedules[0]!, workflow: 'evaluate' }] };
    await assert.rejects(syncSchedules(h.stack.client, bad), /schedules\[0\]\.workflow: unknown workflow "evaluate" \(expected one of stackCheck, rollout, rolloutBatch, judgeTrajectory, judgeRun, judgeEvaluation, taskGeneration, evaluation, specialization, generalization\)/);
    const badInput = { ...h.config, schedules: [{ ...h.config.schedules[0]!, input: { attempts: 0, software: ['Excel'] } }] };
    await assert.rejects(syncSchedules(h.stack.client, badInput), (err: unknown) => {
      assert.ok(err instanceof ValidationError);
      assert.deepEqual(err.problems, ['schedules[0].input.attempts: expected an integer >= 1']);
      return true;
    });
  });

  it('fails at once on bad input, naming the field', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ software: ['Excel'] }, /software: unknown software "Excel": expected one of Celestia, ChimeraX, GrassGIS, KAlgebra, Lean, TeXstudio/],
      [{ attempts: 0 }, /attempts: expected an integer >= 1/],
      [{ planners: [{ name: 'a', model: 'm' }, { name: 'a', model: 'n' }] }, /planners\[1\]\.name: duplicate planner "a"/],
      [{ planners: [{ name: 'a', model: 'm', run: 'r1' }, { name: 'b', model: 'n', run: 'r1' }] }, /planners\[1\]\.run: run "r1" is another planner's too/],
      [{ taskIds: { TeXstudio: ['A-01'] }, software: ['KAlgebra'] }, /taskIds\.TeXstudio: "TeXstudio" is not among the software evaluated/],
      [{ software: ['KAlgebra'], planners: [{ name: 'a', model: 'm', software: ['TeXstudio'] }] }, /planners\[0\]\.software: "TeXstudio" is not among the software evaluated/],
      [{ series: 'Nightly Run' }, /series: expected a series name/],
    ];
    for (const [i, [input, expected]] of cases.entries()) {
      await assert.rejects(h.execute('evaluation', `bad-evaluation-${stamp}-${i}`, input), (err: unknown) => {
        assert.ok(err instanceof WorkflowFailedError);
        assert.match(String(err.cause?.message), expected);
        return true;
      });
    }
  });
});
