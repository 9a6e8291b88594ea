import sharp from 'sharp';
import type { Env } from '../../config/load';
import type { Config } from '../../config/schema';
import { agentStep } from '../../activities/models/agent-step';
import { ModelGateway } from '../../activities/models/gateway';
import type { ObjectStore } from '../../activities/storage/object-store';
import { TaskLibrary } from '../../activities/tasks/library';
import { isTerminal } from '../../core/episode';
import { datasetManifestKey, datasetPrefix, manifestKey, screenshotKey, verdictKey, type AttemptRef } from '../../core/keys';
import { DATASET_SCHEMA, grpoRows, sftRows, type DatasetImage, type DatasetManifest } from '../../core/training';
import { TRAJECTORY_SCHEMA, parseTrajectoryManifest, type StepRecord, type TrajectoryManifest } from '../../core/trajectory';

/**
 * Training data for the GPU-side tests, built the way the orchestrator builds it but without
 * desktops: a trajectory is recorded by running the real agent step (core prompts, the gateway, the
 * scripted planner and executor doubles over HTTP) on plain screenshots, stored in MinIO like a
 * rollout's, and turned into a dataset with core/training.ts's grpoRows / sftRows.
 */

export const SCREEN = { width: 1920, height: 1080 } as const;

export interface RecordedTrajectory {
  readonly manifest: TrajectoryManifest;
  readonly manifestKey: string;
}

/** A 1920x1080 PNG of one colour per step (the scripted models read only its size). */
const screenshot = (step: number): Promise<Buffer> =>
  sharp({ create: { ...SCREEN, channels: 3, background: { r: (step * 40) % 256, g: 120, b: 200 } } }).png().toBuffer();

/** One attempt at `taskId` with the scripted models, stored in S3 as a rollout stores it. */
export async function recordTrajectory(store: ObjectStore, config: Config, env: Env, run: string, taskId: string): Promise<RecordedTrajectory> {
  const task = new TaskLibrary().load('KAlgebra', [taskId])[0]!;
  const ref: AttemptRef = { run, software: 'KAlgebra', task: taskId, attempt: 0 };
  const prefix = config.storage.prefix;
  const gateway = new ModelGateway(config.models, { read: (key) => store.get(key) }, env);
  const steps: StepRecord[] = [];
  const startedAt = new Date().toISOString();
  await store.put(screenshotKey(prefix, ref, 0), await screenshot(0), 'image/png');
  for (let index = 1; index <= task.steps; index++) {
    const shot = screenshotKey(prefix, ref, index - 1);
    const step = await agentStep(gateway, {
      instruction: task.instruction,
      software: 'KAlgebra',
      screenshotKey: shot,
      screen: SCREEN,
      history: steps.map((s) => ({ thought: s.planner.thought, actionText: s.planner.actionText, screenshotKey: s.screenshotKey, executorRaw: s.executor?.raw })),
    });
    steps.push({
      index,
      screenshotKey: shot,
      planner: { thought: step.thought, actionText: step.actionText, raw: step.planner.texts[0] ?? '', model: step.planner.model, latencyMs: step.planner.latencyMs },
      ...(step.executor === undefined ? {} : { executor: { raw: step.executor.texts[0] ?? '', model: step.executor.model, latencyMs: step.executor.latencyMs } }),
      action: step.action,
      timings: { plannerMs: step.planner.latencyMs },
      startedAt: new Date().toISOString(),
    });
    if (step.action === null || isTerminal(step.action)) break;
    await store.put(screenshotKey(prefix, ref, index), await screenshot(index), 'image/png');
  }
  const last = steps.at(-1)?.action;
  const manifest = parseTrajectoryManifest(
    {
      schema: TRAJECTORY_SCHEMA,
      ...ref,
      taskId,
      stage: 'specialization',
      task: { instruction: task.instruction, maxSteps: task.steps },
      models: { planner: { model: config.models.planner.model, baseUrl: config.models.planner.baseUrl }, executor: { model: config.models.executor.model, baseUrl: config.models.executor.baseUrl } },
      desktop: { host: 'recorded-without-desktop', id: 'none' },
      steps,
      initialScreenshotKey: screenshotKey(prefix, ref, 0),
      stop: { reason: last?.type === 'answer' ? 'ANS' : last?.type === 'done' ? 'DONE' : 'TIMEOUT' },
      resumes: 0,
      startedAt,
      endedAt: new Date().toISOString(),
    },
    'recorded trajectory',
  );
  const key = manifestKey(prefix, ref);
  await store.putJson(key, manifest);
  return { manifest, manifestKey: key };
}

/** Every step of a trajectory that has an action: what a clean verdict makes positive. */
export const allSteps = (t: RecordedTrajectory): number[] => t.manifest.steps.filter((s) => s.action !== null).map((s) => s.index);

/** A GRPO (JSONL) or SFT (JSON list) dataset of the trajectories' steps, written to S3; its manifest key. */
export async function writeDataset(store: ObjectStore, prefix: string, id: string, kind: 'grpo' | 'sft', trajectories: readonly RecordedTrajectory[]): Promise<string> {
  const built = trajectories.flatMap((t): Array<{ row: unknown; images: DatasetImage[] }> =>
    kind === 'grpo' ? grpoRows(t.manifest, t.manifestKey, allSteps(t), SCREEN) : sftRows(t.manifest, allSteps(t)),
  );
  const data = kind === 'grpo' ? built.map((b) => JSON.stringify(b.row)).join('\n') + '\n' : JSON.stringify(built.map((b) => b.row));
  const dataKey = `${datasetPrefix(prefix, id)}/${kind === 'grpo' ? 'prompts.jsonl' : 'sft.json'}`;
  await store.put(dataKey, data, 'application/json');
  const images = new Map<string, DatasetImage>();
  for (const b of built) for (const image of b.images) images.set(image.key, image);
  let imageBytes = 0;
  for (const image of images.values()) imageBytes += (await store.get(image.key)).length;
  const manifest: DatasetManifest = {
    schema: DATASET_SCHEMA,
    id,
    kind,
    createdAt: new Date().toISOString(),
    software: ['KAlgebra'],
    dataKey,
    rows: built.length,
    images: [...images.values()],
    sources: trajectories.map((t) => ({
      manifestKey: t.manifestKey,
      verdictKey: verdictKey(prefix, { run: t.manifest.run, software: t.manifest.software, task: t.manifest.taskId, attempt: t.manifest.attempt }),
      software: t.manifest.software,
      steps: allSteps(t),
    })),
    bytes: { data: Buffer.byteLength(data), images: imageBytes },
  };
  const key = datasetManifestKey(prefix, id);
  await store.putJson(key, manifest);
  return key;
}
