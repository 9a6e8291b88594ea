import type { JudgeMeasurement } from '../../core/judge/measurement';
import type { JudgeStrategy } from '../../config/schema';
import { judgeCalibration, type Agreement } from '../../core/judge/calibration';
import { buildJudgeEvaluationReport, renderJudgeEvaluationMarkdown, type JudgeEvaluationReport } from '../../core/judge/evaluation-report';
import { verdictFileSchema } from '../../core/judge/verdict-file';
import { attemptOfManifest, judgeEvalKeyBase, verdictKey } from '../../core/keys';
import { readRunManifests } from '../storage/trajectory';
import type { ObjectStore } from '../storage/object-store';
import { orchestratorMetrics, type OrchestratorMetrics } from '../metrics';

export interface JudgeEvaluationSummary {
  readonly key: string;
  readonly markdownKey: string;
  readonly trajectories: number;
  readonly rows: ReadonlyArray<{ readonly label: string; readonly precision: number; readonly recall: number }>;
}

/**
 * Judge-evaluation activities (orchestrator queue): after every strategy has judged a run's
 * trajectories, compare their verdicts with the evaluators' results and write the comparison as
 * JSON and Markdown under judge-evals/{id}. Trajectories whose task has no checks are left out
 * (nothing says what is true for them).
 */
export function createJudgeEvaluationActivities(deps: { store: ObjectStore; prefix: string; metrics?: OrchestratorMetrics }) {
  const { store, prefix } = deps;
  const metrics = deps.metrics ?? orchestratorMetrics();
  return {
    /**
     * The judge of a specialization round measured on its rollouts of the real tasks: each
     * trajectory's default verdict (final and per vote) against the evaluators' result, counting
     * the trajectories with both; set as coda_judge_precision / coda_judge_recall (a null ratio
     * removes its series: no evidence is not a figure).
     */
    async measureJudge(input: { run: string; software: string; specialization: string; round: number; floor: number }): Promise<JudgeMeasurement> {
      const manifests = (await readRunManifests(store, prefix, input.run, input.software)).filter(({ manifest }) => manifest.evaluation !== undefined);
      const judged = await Promise.all(
        manifests.map(async ({ key, manifest }) => {
          const raw = await store.tryGet(verdictKey(prefix, attemptOfManifest(prefix, key)));
          if (raw === undefined) return [];
          const verdict = verdictFileSchema.parse(JSON.parse(raw.toString('utf8')));
          const votes = verdict.votes.map((v) => ({ judge: v.judge, resolution: v.resolution, approved: v.reply?.correctness === true }));
          return [{ passed: manifest.evaluation?.passed === true, success: verdict.success, votes }];
        }),
      );
      const calibration = judgeCalibration(judged.flat());
      const record = (labels: { judge: string; resolution: string }, figures: Agreement): void => {
        const series = { software: input.software, run: input.specialization, round: String(input.round), ...labels };
        for (const [gauge, value] of [[metrics.judgePrecision, figures.precision], [metrics.judgeRecall, figures.recall]] as const) {
          if (value === null) gauge.remove(series);
          else gauge.set(series, value);
        }
        metrics.judgeMeasured.set(series, figures.trajectories);
      };
      record({ judge: 'final', resolution: 'all' }, calibration.final);
      for (const v of calibration.votes) record({ judge: v.judge, resolution: v.resolution }, v);
      return { run: input.run, floor: input.floor, final: calibration.final, votes: [...calibration.votes] };
    },

    async summarizeJudgeEvaluation(input: { id: string; run: string; software: string; createdAt: string; strategies: readonly JudgeStrategy[] }): Promise<JudgeEvaluationSummary> {
      const manifests = (await readRunManifests(store, prefix, input.run, input.software)).filter(({ manifest }) => manifest.evaluation !== undefined);
      const trajectories = await Promise.all(
        manifests.map(async ({ key, manifest }) => {
          const ref = attemptOfManifest(prefix, key);
          const verdicts = Object.fromEntries(
            await Promise.all(
              input.strategies.map(async (s) => {
                const raw = await store.tryGet(verdictKey(prefix, ref, s.label));
                const file = raw === undefined ? undefined : verdictFileSchema.parse(JSON.parse(raw.toString('utf8')));
                return [s.label, file === undefined ? undefined : { success: file.success, cost: file.cost }] as const;
              }),
            ),
          );
          return { manifestKey: key, truth: manifest.evaluation?.passed === true, verdicts };
        }),
      );
      const report: JudgeEvaluationReport = buildJudgeEvaluationReport({ ...input, trajectories });
      const base = judgeEvalKeyBase(prefix, input.id);
      await store.putJson(`${base}.json`, report);
      const titles = new Map(input.strategies.map((s) => [s.label, s.title]));
      await store.put(`${base}.md`, renderJudgeEvaluationMarkdown(report, (label) => titles.get(label) ?? label), 'text/markdown; charset=utf-8');
      return {
        key: `${base}.json`,
        markdownKey: `${base}.md`,
        trajectories: report.trajectories,
        rows: report.rows.map((r) => ({ label: r.label, precision: r.confusion.precision, recall: r.confusion.recall })),
      };
    },
  };
}

export type JudgeEvaluationActivities = ReturnType<typeof createJudgeEvaluationActivities>;
