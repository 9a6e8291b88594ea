import { z } from 'zod';
import { guiActionSchema, stopReasonSchema } from './actions';
import type { EvaluationResult } from './evaluation';

/**
 * What a rollout leaves behind: one StepRecord per step and one TrajectoryManifest per attempt
 * (stored as JSON under the keys of core/keys.ts). Screenshots are referenced by key, never inlined.
 */

const isoTime = z.iso.datetime({ offset: true });
const milliseconds = z.number().min(0);

export const tokenUsageSchema = z.strictObject({
  promptTokens: z.number().int().min(0),
  completionTokens: z.number().int().min(0),
});

export const stepRecordSchema = z.strictObject({
  /** 1-based step number. */
  index: z.number().int().min(1),
  /** The screenshot the planner saw before this step. */
  screenshotKey: z.string().min(1),
  planner: z.strictObject({
    thought: z.string(),
    actionText: z.string(),
    raw: z.string(),
    model: z.string().min(1),
    latencyMs: milliseconds,
    usage: tokenUsageSchema.optional(),
  }),
  /** Absent when the planner ended the episode itself (ANS, DONE, FAIL) or its output was malformed. */
  executor: z
    .strictObject({
      raw: z.string(),
      model: z.string().min(1),
      latencyMs: milliseconds,
      usage: tokenUsageSchema.optional(),
    })
    .optional(),
  /** Null when a model's output was malformed. */
  action: guiActionSchema.nullable(),
  /**
   * Raw calls the executor wrote after the one taken as `action`, never performed: only in
   * manifests written before replies with several calls were refused as malformed.
   */
  droppedActions: z.array(z.string()).optional(),
  /** Why the output was malformed, or what failed while acting. */
  error: z.string().optional(),
  timings: z.strictObject({
    screenshotMs: milliseconds.optional(),
    plannerMs: milliseconds,
    executorMs: milliseconds.optional(),
    actMs: milliseconds.optional(),
  }),
  startedAt: isoTime,
  /** True when this step was redone after a worker crash. */
  resumed: z.boolean().optional(),
});

const endpoint = z.strictObject({ model: z.string().min(1), baseUrl: z.string().min(1) });

export const TRAJECTORY_SCHEMA = 'coda.trajectory/v1';

/**
 * A trajectory's manifest, its evaluation read by `evaluation` (core/evaluation.ts
 * evaluationResultSchemaOf: the check types the applications know). The registry's is built once,
 * with the parse that names every bad field, in apps/manifests.ts.
 */
export const trajectoryManifestSchemaOf = (evaluation: z.ZodType<EvaluationResult>) =>
  z
    .strictObject({
      schema: z.literal(TRAJECTORY_SCHEMA),
      run: z.string().min(1),
      software: z.string().min(1),
      taskId: z.string().min(1),
      attempt: z.number().int().min(0),
      /** e.g. 'specialization', 'evaluation', 'demo'. */
      stage: z.string().min(1),
      task: z.strictObject({
        instruction: z.string().min(1),
        maxSteps: z.number().int().min(1),
        /** Where the task came from: a ScienceBoard file, or a generated task's id. */
        source: z.string().optional(),
        /** False for a task without checks (generated): only its verdict says whether it passed. Absent: true. */
        evaluated: z.boolean().optional(),
      }),
      models: z.strictObject({ planner: endpoint, executor: endpoint }),
      /** Where it ran; `screen` is the size of its screenshots, the space the actions' pixels live in (absent in older manifests). */
      desktop: z.strictObject({
        host: z.string().min(1),
        id: z.string().min(1),
        screen: z.strictObject({ width: z.number().int().positive(), height: z.number().int().positive() }).optional(),
      }),
      steps: z.array(stepRecordSchema),
      initialScreenshotKey: z.string().min(1),
      finalScreenshotKey: z.string().min(1).optional(),
      stop: z.strictObject({
        reason: stopReasonSchema,
        answer: z.string().optional(),
        detail: z.string().optional(),
      }),
      evaluation: evaluation.optional(),
      resumes: z.number().int().min(0),
      startedAt: isoTime,
      endedAt: isoTime,
    })
    .superRefine((manifest, ctx) => {
      // Steps are numbered 1..n in order: judges cite step numbers, so a gap would shift every label.
      manifest.steps.forEach((step, i) => {
        if (step.index !== i + 1) ctx.addIssue({ code: 'custom', path: ['steps', i, 'index'], message: `expected step ${i + 1}, found ${step.index}` });
      });
      if (manifest.steps.length > manifest.task.maxSteps) {
        ctx.addIssue({ code: 'custom', path: ['steps'], message: `${manifest.steps.length} steps exceed maxSteps ${manifest.task.maxSteps}` });
      }
    });

export type StepRecord = z.output<typeof stepRecordSchema>;
export type TrajectoryManifest = z.output<ReturnType<typeof trajectoryManifestSchemaOf>>;
