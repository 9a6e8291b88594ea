import sharp from 'sharp';
import type { Env } from '../../config/load';
import { preparedBoxes, type Config } from '../../config/schema';
import { storeScreenshot as storeWithVariants } from '../../activities/images/variants';
import { agentStep } from '../../activities/models/agent-step';
import { ModelGateway } from '../../activities/models/gateway';
import { s3Images } from '../../activities/models/images';
import type { ObjectStore } from '../../activities/storage/object-store';
import { TaskLibrary } from '../../activities/tasks/library';
import { isTerminal } from '../../core/episode';
import { manifestKey, screenshotKey, type AttemptRef } from '../../core/keys';
import { samplingSeed } from '../../core/sampling-seed';
import { TRAJECTORY_SCHEMA, type StepRecord, type TrajectoryManifest } from '../../core/trajectory';
import { parseTrajectoryManifest } from '../../apps/manifests';

/**
 * TEST DOUBLE support: a trajectory recorded without a desktop, for the GPU side's tests and
 * benchmark. The real agent step runs (core prompts, the gateway, the scripted planner and executor
 * over HTTP) on screenshots given by the caller, and the manifest and screenshots (with their
 * variants for the deployment's boxes, as a host stores them at capture) are stored in S3 under a
 * rollout's keys, as the orchestrator would have written them.
 */

export const SCREEN = { width: 1920, height: 1080 } as const;

export interface RecordedTrajectory {
  readonly manifest: TrajectoryManifest;
  readonly manifestKey: string;
}

/** A 1920x1080 PNG of one colour per step (the scripted models read only its size). */
const plainScreenshot = (step: number): Promise<Buffer> =>
  sharp({ create: { ...SCREEN, channels: 3, background: { r: (step * 40) % 256, g: 120, b: 200 } } }).png().toBuffer();

/** One attempt at `taskId` with the scripted models, stored in S3 as a rollout stores it; `screenshot` gives the screen after each step. */
export async function recordTrajectory(
  store: ObjectStore,
  config: Config,
  env: Env,
  run: string,
  taskId: string,
  screenshot: (step: number) => Promise<Buffer> = plainScreenshot,
): Promise<RecordedTrajectory> {
  const task = new TaskLibrary().load('KAlgebra', [taskId])[0]!;
  const ref: AttemptRef = { run, software: 'KAlgebra', task: taskId, attempt: 0 };
  const prefix = config.storage.prefix;
  const gateway = new ModelGateway({ models: config.models, images: s3Images(store, config.storage.presignSeconds), env });
  const steps: StepRecord[] = [];
  const startedAt = new Date().toISOString();
  const storeScreenshot = async (step: number): Promise<void> => {
    await storeWithVariants(store, screenshotKey(prefix, ref, step), await screenshot(step), preparedBoxes(config));
  };
  await storeScreenshot(0);
  for (let index = 1; index <= task.steps; index++) {
    const shot = screenshotKey(prefix, ref, index - 1);
    const step = await agentStep(gateway, {
      instruction: task.instruction,
      software: 'KAlgebra',
      screenshotKey: shot,
      screen: SCREEN,
      seed: samplingSeed(ref, index),
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
    await storeScreenshot(index);
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
