import { z } from 'zod';
import { KEY_SEGMENT } from './keys';
import type { InitializeStep } from './task';

/**
 * The manifest of a generated task set (core/keys.ts taskSetManifestKey), written last, so a set
 * with a manifest is complete: which tasks it has and where, and its provenance — the seeds, the
 * model and prompt version, how many requests were made, and what was dropped and why. A set of a
 * specialization round after the first also records the earlier rounds' sets it was shown and
 * deduplicated against, and the new tasks it dropped as repeats of theirs (absent in sets written
 * before rounds were compared: read as none). Its start steps are read by `step`, the schema of the
 * applications' steps (core/task.ts initializeStepSchemaOf; the registry's is built in apps/manifests.ts).
 */
export const TASK_SET_SCHEMA = 'coda.task-set/v1';

const count = z.number().int().min(0);

export const taskSetManifestSchemaOf = (step: z.ZodType<InitializeStep>) =>
  z.strictObject({
    schema: z.literal(TASK_SET_SCHEMA),
    software: z.string().min(1),
    version: z.string().regex(KEY_SEGMENT),
    createdAt: z.iso.datetime({ offset: true }),
    provenance: z.strictObject({
      seedTaskIds: z.array(z.string().min(1)).min(1),
      model: z.string().min(1),
      baseUrl: z.string().min(1),
      promptVersion: z.string().min(1),
      temperature: z.number().min(0),
    }),
    /** Where every task starts: the seed whose launch steps were taken, and the steps. */
    start: z.strictObject({ fromSeed: z.string().min(1), initialize: z.array(step) }),
    counts: z.strictObject({
      requests: count,
      kept: count,
      duplicates: count,
      invalid: count,
      /** New tasks past the set's size limit. */
      overLimit: count,
      /** New tasks dropped as repeats of a task of an earlier round (not counted in `duplicates`). */
      repeats: count.default(0),
    }),
    /** The earlier rounds' sets shown to the generator: their tasks, and how many of those the planner solved (judged: had a verdict). */
    earlier: z
      .array(
        z.strictObject({
          set: z.string().regex(KEY_SEGMENT),
          round: z.number().int().min(1),
          /** The rollout run whose verdicts said which tasks were solved; absent: none was read. */
          rollouts: z.string().regex(KEY_SEGMENT).optional(),
          tasks: count,
          judged: count,
          solved: count,
        }),
      )
      .default([]),
    tasks: z.array(z.strictObject({ id: z.string().regex(KEY_SEGMENT), instruction: z.string().min(1), maxSteps: z.number().int().min(1), key: z.string().min(1) })),
    /** Dropped as the same task as a seed or as a task kept before it in this set. */
    duplicates: z.array(z.strictObject({ instruction: z.string(), of: z.string(), similarity: z.number().min(0).max(1) })),
    /** Dropped as the same task as `task` of the earlier round's set `set`, whose instruction is `of`. */
    repeats: z
      .array(
        z.strictObject({
          instruction: z.string(),
          set: z.string().regex(KEY_SEGMENT),
          round: z.number().int().min(1),
          task: z.string().regex(KEY_SEGMENT),
          of: z.string(),
          similarity: z.number().min(0).max(1),
        }),
      )
      .default([]),
    /** Why each rejected item or reply was rejected. */
    invalid: z.array(z.string()),
    /** S3 keys of the raw replies. */
    replies: z.array(z.string().min(1)),
  });

export type TaskSetManifest = z.output<ReturnType<typeof taskSetManifestSchemaOf>>;
