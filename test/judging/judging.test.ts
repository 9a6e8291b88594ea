import assert from 'node:assert/strict';
import { WorkflowFailedError } from '@temporalio/client';
import type { JudgeOutcome } from '../../activities/judge/activities';
import type { JudgeEvaluationSummary } from '../../activities/judge/evaluation';
import { JUDGE_EVALUATION_SCHEMA, type JudgeEvaluationReport } from '../../core/judge/evaluation-report';
import { verdictFileSchema, type VerdictFile } from '../../core/judge/verdict-file';
import { attemptOfManifest, verdictKey } from '../../core/keys';
import { type TrajectoryManifest } from '../../core/trajectory';
import type { JudgeRunResult } from '../../workflows/judging/judge';
import { Registry } from 'prom-client';
import { orchestratorMetrics } from '../../activities/metrics';
import { datasetManifestKey } from '../../core/keys';
import { JUDGE_BELOW_FLOOR } from '../../workflows/training/judge-check';
import type { SpecializationProgress } from '../../workflows/training/progress';
import { startHarness, type Harness } from '../support/harness';
import { loadRecording } from '../support/recorded';
import { judgeRunWorkflowId, judgeWorkflowId, specializationWorkflowId } from '../../workflows/names';
import { parseTrajectoryManifest } from '../../apps/manifests';

/** A judge double that says the opposite of the evaluators: it approves exactly the failures. */
const INVERTED = { high: { falsePositive: 1, falseNegative: 1 }, low: { falsePositive: 1, falseNegative: 1 }, unreadable: 0 };
const EXACT = { high: { falsePositive: 0, falseNegative: 0 }, low: { falsePositive: 0, falseNegative: 0 }, unreadable: 0 };
const NOISY_A = { high: { falsePositive: 0.25, falseNegative: 0.1 }, low: { falsePositive: 0.4, falseNegative: 0.2 }, unreadable: 0.02 };
const NOISY_B = { high: { falsePositive: 0.3, falseNegative: 0.15 }, low: { falsePositive: 0.45, falseNegative: 0.25 }, unreadable: 0.02 };

const judge = (name: string, extra: Record<string, unknown> = {}) => ({ name, baseUrl: '${CODA_JUDGE_A_URL}', model: name, apiKeyEnv: 'CODA_JUDGE_API_KEY', ...extra });
const exactPlan = (judges: string[], low = 1, high = 1) => ({ lowResolutionVotes: low, highResolutionVotes: high, judges });

describe('judging recorded real trajectories on the real stack: votes, verdicts, costs, subsampling, failures', function () {
  this.timeout(600_000);
  let h: Harness;
  const run = `judged${Date.now()}`;
  let manifests: Array<{ key: string; manifest: TrajectoryManifest }> = [];
  const registry = new Registry();

  const readVerdict = async (key: string): Promise<VerdictFile> => verdictFileSchema.parse(await h.stack.store.getJson(key));
  const judgeCalls = (model: string): number => h.models.served.get(model) ?? 0;

  before(async () => {
    h = await startHarness({
      name: 'judging',
      desktops: 2,
      displayFrom: 220,
      errorRate: 0.4,
      metrics: orchestratorMetrics(registry),
      models: (doc) => {
        doc.models.judges = [
          judge('judge-a', { maxImages: 32 }),
          judge('judge-b', { maxImages: 8 }),
          judge('judge-exact'),
          judge('judge-two-images', { maxImages: 2 }),
          judge('judge-unreadable'),
          judge('judge-inverted'),
          { ...judge('judge-down'), baseUrl: 'http://127.0.0.1:1/v1', maxRetries: 0, timeoutSeconds: 2 },
        ];
        doc.dev.scriptedModels.judges = { 'judge-a': NOISY_A, 'judge-b': NOISY_B, 'judge-exact': EXACT, 'judge-two-images': EXACT, 'judge-unreadable': { ...EXACT, unreadable: 1 }, 'judge-inverted': INVERTED };
      },
    });
    // The desktops serve the specialization below, which rolls out on them itself.
    await h.startVmHost();
    // The trajectories to judge: a real batch of 10 rollouts (5 tasks x 2) on real desktops, recorded
    // (test/fixtures/trajectories/judging, `npm run record:trajectories -- judging`) and uploaded as this run.
    await loadRecording(h.stack.store, 'judging', { prefix: h.config.storage.prefix, run });
    const keys = (await h.stack.store.list(`${h.config.storage.prefix}/runs/${run}/KAlgebra/`)).filter((k) => k.endsWith('/manifest.json'));
    assert.equal(keys.length, 10);
    manifests = await Promise.all(keys.map(async (key) => ({ key, manifest: parseTrajectoryManifest(await h.stack.store.getJson(key), key) })));
    const passed = manifests.filter((m) => m.manifest.evaluation?.passed).length;
    assert.ok(passed > 0 && passed < 10, `the planner's error rate should fail some rollouts and pass others (${passed} of 10 passed)`);
  });
  after(async () => h?.stop());

  it('judges a whole run: low resolution first, early exit on failure, verdicts beside the manifests, equal to the evaluators with an exact judge', async () => {
    const result = await h.execute<JudgeRunResult>('judgeRun', judgeRunWorkflowId(run, 'KAlgebra', 'exact'), { run, software: 'KAlgebra', label: 'exact', plan: exactPlan(['judge-exact']) });
    assert.equal(result.judged, 10);
    for (const { key, manifest } of manifests) {
      const verdict = await readVerdict(verdictKey(h.config.storage.prefix, attemptOfManifest(h.config.storage.prefix, key), 'exact'));
      const truth = manifest.evaluation?.passed === true;
      assert.equal(verdict.success, truth, `${key}: verdict ${verdict.stoppedBecause}`);
      assert.equal(verdict.manifestKey, key);
      assert.equal(verdict.votes[0]?.resolution, 'low');
      if (truth) {
        assert.deepEqual(verdict.votes.map((v) => v.resolution), ['low', 'high']);
        assert.deepEqual(verdict.positiveSteps, manifest.steps.map((s) => s.index));
        assert.match(verdict.stoppedBecause, /^all 2 votes said success/);
      } else {
        // A failure is caught by the cheap vote: no high-resolution pixels are spent on it.
        assert.deepEqual(verdict.votes.map((v) => v.resolution), ['low']);
        assert.equal(verdict.cost.highResolutionPixels, 0);
        assert.match(verdict.stoppedBecause, /vote 1 of 2 \(low resolution, judge judge-exact\) said failure/);
      }
      const screens = manifest.steps.length + 1;
      assert.equal(verdict.cost.calls, verdict.votes.length);
      assert.equal(verdict.cost.images, verdict.votes.length * screens);
      assert.equal(verdict.votes[0]?.cost.pixels, screens * 640 * 360, 'low-resolution screens are fitted into 640x360');
      if (truth) assert.equal(verdict.votes[1]?.cost.pixels, screens * 1280 * 720, 'high-resolution screens are fitted into 1280x720');
      assert.ok(verdict.cost.promptTokens > 0 && verdict.cost.completionTokens > 0);
      const raw = await h.stack.store.getJson<{ raw: string; model: string }>(verdict.votes[0]!.replyKey);
      assert.match(raw.raw, /"Correctness":\s*(true|false)/);
      assert.equal(raw.model, 'judge-exact');
    }
  });

  it('never pays twice: judging the same trajectories again reuses their verdicts', async () => {
    const before = judgeCalls('judge-exact');
    const again = await h.execute<JudgeRunResult>('judgeRun', `${judgeRunWorkflowId(run, 'KAlgebra', 'exact')}-again`, { run, software: 'KAlgebra', label: 'exact', plan: exactPlan(['judge-exact']) });
    assert.equal(again.judged, 10);
    assert.equal(judgeCalls('judge-exact'), before, 'no judge call was made');
    const one = manifests[0]!;
    const ref = attemptOfManifest(h.config.storage.prefix, one.key);
    const outcome = await h.execute<JudgeOutcome>('judgeTrajectory', `${judgeWorkflowId(ref, 'exact')}-direct`, { manifestKey: one.key, label: 'exact', plan: exactPlan(['judge-exact']) });
    assert.equal(outcome.reused, true);
    assert.equal(judgeCalls('judge-exact'), before);
  });

  it("subsamples the screens of a trajectory longer than a judge's image limit, and says so", async () => {
    const long = manifests.find((m) => m.manifest.steps.length >= 2)!;
    const ref = attemptOfManifest(h.config.storage.prefix, long.key);
    const outcome = await h.execute<JudgeOutcome>('judgeTrajectory', judgeWorkflowId(ref, 'two-images'), { manifestKey: long.key, label: 'two-images', plan: exactPlan(['judge-two-images'], 1, 0) });
    const verdict = await readVerdict(outcome.verdictKey);
    assert.deepEqual(verdict.votes[0]?.screens, { shown: 2, of: long.manifest.steps.length + 1 });
    assert.equal(verdict.votes[0]?.cost.images, 2);
    assert.match(verdict.subsampled ?? '', /1 of 1 votes saw a subsample of the \d+ screens \(the judge's image limit\): the first, the last and evenly spaced ones between/);
    assert.equal(verdict.success, long.manifest.evaluation?.passed === true, 'the double still judged it, within its limit');
  });

  it('counts an unreadable vote as failure', async () => {
    const passed = manifests.find((m) => m.manifest.evaluation?.passed)!;
    const ref = attemptOfManifest(h.config.storage.prefix, passed.key);
    const outcome = await h.execute<JudgeOutcome>('judgeTrajectory', judgeWorkflowId(ref, 'unreadable'), { manifestKey: passed.key, label: 'unreadable', plan: exactPlan(['judge-unreadable']) });
    assert.equal(outcome.success, false);
    assert.match(outcome.stoppedBecause, /^vote 1 of 2 \(low resolution, judge judge-unreadable\) was unreadable, counted as failure: no Correctness, Redundant or First_Error_Step in the judge reply$/);
    const verdict = await readVerdict(outcome.verdictKey);
    assert.equal(verdict.votes[0]?.reply, null);
    assert.deepEqual(verdict.positiveSteps, []);
  });

  it('ends with a clear reason, and writes no verdict, when a judge endpoint stays down', async () => {
    const one = manifests[1]!;
    const ref = attemptOfManifest(h.config.storage.prefix, one.key);
    await assert.rejects(h.execute('judgeTrajectory', judgeWorkflowId(ref, 'down'), { manifestKey: one.key, label: 'down', plan: exactPlan(['judge-down']) }), (err: unknown) => {
      assert.ok(err instanceof WorkflowFailedError);
      assert.match(String(err.cause?.message), /^judge judge-down \(judge-down\) gave no vote 1 \(low resolution\): judge:judge-down \(judge-down at http:\/\/127\.0\.0\.1:1\/v1\) is unreachable/);
      return true;
    });
    assert.equal(await h.stack.store.exists(verdictKey(h.config.storage.prefix, ref, 'down')), false);
  });

  it('fails at once on bad input, naming the field', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ manifestKey: 'runs/x/manifest.json' }, /^judge input is invalid:\n {2}- manifestKey: "runs\/x\/manifest\.json" is not a trajectory manifest key/],
      [{ manifestKey: manifests[0]!.key, plan: { lowResolutionVotes: 0, highResolutionVotes: 0, judges: ['judge-a'] } }, /plan: a judge plan needs at least one vote/],
      [{ manifestKey: manifests[0]!.key, plan: exactPlan(['nobody']) }, /plan\.judges\[0\]: unknown judge "nobody"/],
      [{ manifestKey: manifests[0]!.key, label: 'Bad Label' }, /label: expected a label \(a-z, 0-9, -\)/],
      ['not an object', /judge input is invalid/],
    ];
    for (const [i, [input, expected]] of cases.entries()) {
      await assert.rejects(h.execute('judgeTrajectory', `bad-judge-${run}-${i}`, input), (err: unknown) => {
        assert.ok(err instanceof WorkflowFailedError, String(err));
        assert.match(String(err.cause?.message), expected);
        assert.equal((err.cause as { nonRetryable?: boolean }).nonRetryable, true);
        return true;
      });
    }
    await assert.rejects(h.execute('judgeRun', `bad-judge-run-${run}`, { run, software: 'KAlgebra', concurrency: 0 }), (err: unknown) => {
      assert.ok(err instanceof WorkflowFailedError);
      assert.match(String(err.cause?.message), /^judge run input is invalid:\n {2}- concurrency: /);
      return true;
    });
  });

  it('compares the judge strategies of temporal.yaml on the labelled trajectories (the paper table 2)', async () => {
    const summary = await h.execute<JudgeEvaluationSummary>('judgeEvaluation', `judge-eval-${run}`, { run, software: 'KAlgebra', id: `je-${run}` });
    assert.equal(summary.trajectories, 10);
    const report = await h.stack.store.getJson<JudgeEvaluationReport>(summary.key);
    assert.equal(report.schema, JUDGE_EVALUATION_SCHEMA);
    assert.deepEqual(report.rows.map((r) => r.label), ['single', 'voting4', 'voting4-multires', 'voting4-ensemble', 'voting4-ensemble-allhigh']);
    for (const row of report.rows) {
      const c = row.confusion;
      assert.equal(c.truePositives + c.falsePositives + c.falseNegatives + c.trueNegatives, 10, row.label);
      assert.equal(c.truePositives + c.falseNegatives, report.passed, `${row.label}: the truth is the evaluators'`);
    }
    // Voting@4 is the all-high-resolution plan of Voting@4 + multi-res: it is reused, not judged again.
    assert.deepEqual(report.savings.map((s) => [s.label, s.against]), [['voting4-multires', 'voting4'], ['voting4-ensemble', 'voting4-ensemble-allhigh']]);
    for (const saving of report.savings) {
      assert.equal(saving.trajectories, 10);
      assert.ok(saving.multiResolution.highResolutionPixels < saving.allHigh.highResolutionPixels, `${saving.label} spends fewer high-resolution pixels`);
    }
    const markdown = (await h.stack.store.get(summary.markdownKey)).toString('utf8');
    assert.match(markdown, /\| Strategy \| Precision \(%\) \| Recall \(%\) \|/);
    assert.match(markdown, /\| Voting@4 \+ multi-res \+ ensemble \| \d+\.\d \| \d+\.\d \|/);
    assert.match(markdown, /## What the low-resolution early exit saved/);
    assert.match(markdown, /\| Voting@4 \+ multi-res \| Voting@4 \| \d+ vs \d+ \(/);
  });

  it("stops a specialization round before its dataset when the judge's precision on the real tasks is below the floor, and says why", async () => {
    // B-03's reference has no answer: the scripted planner answers FAIL and the evaluators fail it,
    // every time; the inverted judge approves it, so its precision is 0, below temporal.yaml's floor of 0.6.
    const spec = `floor${Date.now()}`;
    const workflowId = specializationWorkflowId('KAlgebra', spec);
    const failure = await h
      .execute('specialization', workflowId, { software: 'KAlgebra', run: spec, rounds: 2, tasksPerRound: 1, attempts: 1, evaluationAttempts: 1, evaluationTaskIds: ['B-03'], judging: exactPlan(['judge-inverted']) })
      .then(
        () => assert.fail('the round should have stopped'),
        (err: unknown) => err,
      );
    assert.ok(failure instanceof WorkflowFailedError);
    const cause = failure.cause as { type?: string; message?: string; nonRetryable?: boolean } | undefined;
    assert.equal(cause?.type, JUDGE_BELOW_FLOOR);
    assert.equal(cause?.nonRetryable, true);
    assert.equal(
      cause?.message,
      `specialization ${spec} round 1 stopped before training: the judge's precision on the real tasks is 0.000, below the floor of 0.6: ` +
        `of 1 rollouts it approved, the evaluators passed 0 (1 judged, 0 passed, 1 false positives) (judgePrecisionFloor; run ${spec}-base-eval)`,
    );

    // The failed run still answers its progress: the stage it stopped in, why, and the figures.
    const progress = await h.stack.client.workflow.getHandle(workflowId).query<SpecializationProgress>('progress');
    assert.equal(progress.round, 1);
    assert.equal(progress.stage, 'judging');
    assert.equal(progress.stopped, cause?.message);
    assert.deepEqual(progress.history, [], 'no round finished');
    const judged = progress.judge;
    assert.ok(judged !== undefined);
    assert.equal(judged.run, `${spec}-base-eval`, "round 1's planner is the base: the base row's evaluation rollouts, rolled out by the round");
    assert.equal(judged.floor, 0.6, "temporal.yaml's specialization.judgePrecisionFloor");
    assert.deepEqual(judged.final, { trajectories: 1, approved: 1, passed: 0, truePositives: 0, falsePositives: 1, falseNegatives: 0, trueNegatives: 0, precision: 0, recall: null });
    assert.deepEqual(
      judged.votes.map((v) => [v.judge, v.resolution, v.approved, v.precision, v.recall]),
      [['judge-inverted', 'low', 1, 0, null], ['judge-inverted', 'high', 1, 0, null]],
    );
    // The real-task rollout is the evaluators' failure the judge approved; no other batch of the real tasks was made.
    assert.deepEqual(await h.stack.store.list(`${h.config.storage.prefix}/runs/${spec}-r1-seed/`), []);
    const [real] = await Promise.all((await h.stack.store.list(`${h.config.storage.prefix}/runs/${spec}-base-eval/KAlgebra/`)).filter((k) => k.endsWith('/manifest.json')).map(async (key) => parseTrajectoryManifest(await h.stack.store.getJson(key), key)));
    assert.equal(real?.taskId, 'B-03');
    assert.equal(real?.evaluation?.passed, false);

    // Nothing was built or trained from the round's verdicts.
    assert.equal(await h.stack.store.tryGet(datasetManifestKey(h.config.storage.prefix, `${spec}-r1`)), undefined, 'no dataset');

    // Prometheus: the final verdict's precision and each vote's; recall has no series (nothing passed).
    const text = await registry.metrics();
    const series = (name: string, judge: string, resolution: string) =>
      new RegExp(`^${name}\\{software="KAlgebra",run="${spec}",round="1",judge="${judge}",resolution="${resolution}"\\} (\\S+)$`, 'm').exec(text)?.[1];
    assert.equal(series('coda_judge_precision', 'final', 'all'), '0');
    assert.equal(series('coda_judge_precision', 'judge-inverted', 'low'), '0');
    assert.equal(series('coda_judge_precision', 'judge-inverted', 'high'), '0');
    assert.equal(series('coda_judge_measured_trajectories', 'final', 'all'), '1');
    assert.equal(series('coda_judge_recall', 'final', 'all'), undefined, 'no recall where nothing passed');
  });
});
