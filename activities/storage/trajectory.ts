import { manifestKey, runPrefix, runSummaryKey, type AttemptRef } from '../../core/keys';
import { hasEvaluators } from '../../core/task';
import type { EvaluationResult } from '../../core/evaluation';
import { summarizeRuns, type RunRecord } from '../../core/metrics';
import type { UnsupportedTask } from '../../core/report';
import { TRAJECTORY_SCHEMA, type StepRecord, type TrajectoryManifest } from '../../core/trajectory';
import type { StepSummary, StopSummary } from '../../core/rollout-types';
import type { DecisionRecord, DecisionStore } from '../models/decision';
import type { TaskReader } from '../tasks/library';
import { orchestratorMetrics, type OrchestratorMetrics } from '../metrics';
import type { ObjectStore } from './object-store';
import { parseTrajectoryManifest, trajectoryManifestSchema } from '../../apps/manifests';

export interface ManifestInput {
  readonly ref: AttemptRef;
  readonly stage: string;
  readonly taskKey: string;
  readonly maxSteps: number;
  readonly steps: readonly StepSummary[];
  readonly desktop: { readonly host: string; readonly id: string; readonly screen?: { readonly width: number; readonly height: number } };
  readonly initialScreenshotKey: string;
  readonly finalScreenshotKey: string;
  readonly stop: StopSummary;
  readonly evaluation?: EvaluationResult;
  readonly resumes: number;
  readonly startedAt: string;
  readonly endedAt: string;
}

/** Every manifest of one run and software, validated, with its key (which names the attempt). */
export async function readRunManifests(store: ObjectStore, prefix: string, run: string, software: string): Promise<Array<{ key: string; manifest: TrajectoryManifest }>> {
  const keys = (await store.list(`${runPrefix(prefix, run, software)}/`)).filter((k) => k.endsWith('/manifest.json'));
  return Promise.all(keys.map(async (key) => ({ key, manifest: parseTrajectoryManifest(await store.getJson(key), key) })));
}

/**
 * Whether each rollout of a run passed its task's checks, for Average@k / Pass@k. Rollouts of
 * tasks without checks (generated tasks, judged instead) are not counted; one that ended in ERROR
 * counts as a failure.
 */
export async function runRecords(store: ObjectStore, prefix: string, run: string, software: string): Promise<RunRecord[]> {
  return (await readRunManifests(store, prefix, run, software))
    .map(({ manifest }) => manifest)
    .filter((m) => m.task.evaluated !== false)
    .map((m) => ({ software: m.software, taskId: m.taskId, run: m.attempt, success: m.evaluation?.passed === true, ...(m.evaluation?.appNotRunning === undefined ? {} : { appNotRunning: true }) }));
}

export interface RunSummary {
  readonly key: string;
  readonly averageAtK: number;
  readonly passAtK: number;
}

function stepRecord(step: StepSummary, decision: DecisionRecord): StepRecord {
  const { planner, executor } = decision;
  return {
    index: step.index,
    screenshotKey: step.screenshotKey,
    planner: { thought: planner.thought, actionText: planner.actionText, raw: planner.raw, model: planner.model, latencyMs: planner.latencyMs, usage: planner.usage },
    ...(executor === undefined ? {} : { executor: { raw: executor.raw, model: executor.model, latencyMs: executor.latencyMs, usage: executor.usage } }),
    action: step.action,
    ...(decision.droppedActions === undefined ? {} : { droppedActions: decision.droppedActions }),
    ...(step.error === undefined ? {} : { error: step.error }),
    timings: {
      plannerMs: step.plannerMs,
      ...(step.executorMs === undefined ? {} : { executorMs: step.executorMs }),
      ...(step.actMs === undefined ? {} : { actMs: step.actMs }),
      ...(step.screenshotMs === undefined ? {} : { screenshotMs: step.screenshotMs }),
    },
    startedAt: step.startedAt,
    ...(step.resumed ? { resumed: true } : {}),
  };
}

/**
 * Trajectory activities (orchestrator queue): the manifest joins the workflow's step summaries
 * with the raw model texts in S3, is validated against core/trajectory.ts, and is written under
 * the attempt's key. Rewriting it is harmless (same key, same content), so retries are safe.
 */
export function createTrajectoryActivities(deps: {
  store: ObjectStore;
  prefix: string;
  tasks: TaskReader;
  decisions: DecisionStore;
  /** Where finished rollouts and their resumes are counted (the orchestrator's metrics endpoint). */
  metrics?: Pick<OrchestratorMetrics, 'rollouts' | 'resumes'>;
}) {
  const { store, prefix } = deps;
  const metrics = deps.metrics ?? orchestratorMetrics();
  return {
    async writeManifest(input: ManifestInput): Promise<string> {
      const task = await deps.tasks.read(input.taskKey);
      const decisions = await Promise.all(input.steps.map((s) => deps.decisions.read(s.decisionKey)));
      const first = decisions[0];
      const executor = decisions.find((d) => d.executor !== undefined)?.executor;
      const manifest: TrajectoryManifest = trajectoryManifestSchema.parse({
        schema: TRAJECTORY_SCHEMA,
        run: input.ref.run,
        software: input.ref.software,
        taskId: input.ref.task,
        attempt: input.ref.attempt,
        stage: input.stage,
        task: { instruction: task.instruction, maxSteps: input.maxSteps, source: input.taskKey, evaluated: hasEvaluators(task) },
        models: {
          planner: { model: first?.planner.model ?? 'none', baseUrl: first?.planner.baseUrl ?? 'none' },
          executor: { model: executor?.model ?? 'none', baseUrl: executor?.baseUrl ?? 'none' },
        },
        desktop: {
          host: input.desktop.host || 'none',
          id: input.desktop.id || 'none',
          ...(input.desktop.screen !== undefined && input.desktop.screen.width > 0 ? { screen: input.desktop.screen } : {}),
        },
        steps: input.steps.map((s, i) => stepRecord(s, decisions[i]!)),
        initialScreenshotKey: input.initialScreenshotKey || 'none',
        ...(input.finalScreenshotKey ? { finalScreenshotKey: input.finalScreenshotKey } : {}),
        stop: input.stop,
        ...(input.evaluation === undefined ? {} : { evaluation: input.evaluation }),
        resumes: input.resumes,
        startedAt: input.startedAt,
        endedAt: input.endedAt,
      });
      const key = manifestKey(prefix, input.ref);
      await store.putJson(key, manifest);
      metrics.rollouts.inc({ stop: manifest.stop.reason });
      metrics.resumes.inc(manifest.resumes);
      return key;
    },

    /**
     * Average@k and Pass@k of a run from the manifests in S3 (k = attempts), written beside them
     * as summary.json with the attempts whose app was not running at evaluation. Reading S3 rather
     * than workflow state keeps it right across continue-as-new.
     */
    async summarizeRun(input: { run: string; software: string; stage: string; attempts: number; unsupported?: UnsupportedTask[] }): Promise<RunSummary> {
      const records = await runRecords(store, prefix, input.run, input.software);
      const report = summarizeRuns(records, input.attempts);
      const appNotRunning = records.filter((r) => r.appNotRunning === true).map((r) => `${r.taskId}/${r.run}`);
      const key = runSummaryKey(prefix, input.run, input.software);
      await store.putJson(key, { run: input.run, software: input.software, stage: input.stage, ...report, appNotRunning, unsupported: input.unsupported ?? [] });
      const software = report.bySoftware[input.software];
      return { key, averageAtK: software?.averageAtK ?? 0, passAtK: software?.passAtK ?? 0 };
    },
  };
}

export type TrajectoryActivities = ReturnType<typeof createTrajectoryActivities>;
