import { z } from 'zod';
import { guiActionSchema, type GuiAction } from './actions';
import { keyFor, type Size } from './images';
import { buildPlannerMessages } from './prompts/planner';
import type { ChatMessage } from './prompts/messages';
import type { TrajectoryManifest } from './trajectory';
import { formatIssues } from './validation';

/**
 * Training data from judged trajectories (docs/method.md, docs/formats.md). Only the planner is trained.
 *
 * GRPO (specialization, OpenRLHF's VLM prompt format): one row per positive step — `prompt`, the
 * planner's chat messages exactly as it saw them at that step (the windowed history of
 * core/prompts/planner.ts, image items as {"type":"image"}), `images`, the paths of those
 * screenshots in the dataset's folder, and `label`, a JSON string with all the reward service
 * needs, since OpenRLHF sends it nothing else: where the step's screen and trajectory are in S3,
 * the screen size and the labelled action the frozen executor should derive from a good thought.
 *
 * SFT (generalization, LLaMA-Factory's ShareGPT format): one row per positive step — the same
 * conversation with the planner's own reply as the last assistant turn (the only one trained:
 * the trainer's YAML sets `mask_history`), one `<image>` per image. The planner's prompt already
 * alternates user and assistant, as ShareGPT does; with content parts joined by nothing, as the
 * Qwen2-VL chat template joins them, a row renders through LLaMA-Factory's `qwen2_vl` template to
 * the very text the planner is served.
 *
 * Both take the screenshots the planner is served: each one's variant for the planner's box
 * (models.planner.image, core/images.ts), so one planner sees one image size in serving and in
 * both trainings.
 */

export const GRPO_LABEL_SCHEMA = 'coda.grpo-label/v1';

export const grpoLabelSchema = z.strictObject({
  schema: z.literal(GRPO_LABEL_SCHEMA),
  software: z.string().min(1),
  /** The trajectory and the 1-based step the row was made from; the manifest holds the history. */
  manifestKey: z.string().min(1),
  step: z.number().int().min(1),
  /** The screen the planner (and the executor) saw at this step. */
  screenshotKey: z.string().min(1),
  screen: z.strictObject({ width: z.number().int().positive(), height: z.number().int().positive() }),
  /** The judge-approved action of this step. */
  action: guiActionSchema,
});

export type GrpoLabel = z.output<typeof grpoLabelSchema>;

/** A row's label text as a GrpoLabel, or why it is not one (`label: ...`, naming the field). */
export function parseGrpoLabel(text: string): GrpoLabel | string {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return 'label: not JSON';
  }
  const parsed = grpoLabelSchema.safeParse(raw);
  return parsed.success ? parsed.data : `label: ${formatIssues(parsed.error.issues).join('; ')}`;
}

export type PromptPart = { readonly type: 'text'; readonly text: string } | { readonly type: 'image' };

export interface GrpoRow {
  readonly prompt: ReadonlyArray<{ readonly role: ChatMessage['role']; readonly content: string | readonly PromptPart[] }>;
  readonly images: readonly string[];
  readonly label: string;
}

export interface SftRow {
  readonly messages: ReadonlyArray<{ readonly role: ChatMessage['role']; readonly content: string }>;
  readonly images: readonly string[];
}

/** A screenshot a row refers to: its S3 key and its path inside the dataset's folder. */
export interface DatasetImage {
  readonly key: string;
  readonly path: string;
}

/** The image token LLaMA-Factory's ShareGPT rows use, one per image. */
export const SFT_IMAGE_TOKEN = '<image>';

/** Where a screenshot goes in a dataset's folder: its key below the runs folder, so names never collide. */
export const datasetImagePath = (key: string): string => `images/${key.slice(key.indexOf('runs/') + 'runs/'.length)}`;

/** The planner's messages at step `step` (1-based) of a trajectory, as decideStep built them. */
export function plannerMessagesAt(manifest: TrajectoryManifest, step: number): ChatMessage[] {
  const current = manifest.steps[step - 1];
  if (current === undefined) throw new RangeError(`${manifest.taskId}/${manifest.attempt} has no step ${step}`);
  return buildPlannerMessages({
    instruction: manifest.task.instruction,
    software: manifest.software,
    screenshotKey: current.screenshotKey,
    history: manifest.steps.slice(0, step - 1).map((s) => ({ thought: s.planner.thought, actionText: s.planner.actionText, screenshotKey: s.screenshotKey })),
  });
}

/** What the planner saw of a trajectory's screens: their size, and the box it is served them fitted in (models.planner.image). */
export interface PlannerView {
  readonly screen: Size;
  readonly box?: Size;
}

/** Messages with image keys as OpenRLHF prompt items and the images in order: each the screenshot as the planner is served it. */
function promptOf(messages: readonly ChatMessage[], view: PlannerView): { prompt: GrpoRow['prompt']; images: DatasetImage[] } {
  const images: DatasetImage[] = [];
  const prompt = messages.map((m) => ({
    role: m.role,
    content:
      typeof m.content === 'string'
        ? m.content
        : m.content.map((part): PromptPart => {
            if (part.type === 'text') return { type: 'text', text: part.text };
            const key = keyFor(part.key, view.screen, view.box);
            images.push({ key, path: datasetImagePath(key) });
            return { type: 'image' };
          }),
  }));
  return { prompt, images };
}

/** The steps of `positiveSteps` that can be training rows: those with an action (a malformed step has none). */
const usable = (manifest: TrajectoryManifest, positiveSteps: readonly number[]) =>
  positiveSteps.flatMap((step) => {
    const record = manifest.steps[step - 1];
    return record?.action === null || record?.action === undefined ? [] : [{ step, record, action: record.action as GuiAction }];
  });

/** GRPO rows of the positive steps of one trajectory, and the images they use. */
export function grpoRows(manifest: TrajectoryManifest, manifestKey: string, positiveSteps: readonly number[], view: PlannerView): Array<{ row: GrpoRow; images: DatasetImage[]; step: number }> {
  return usable(manifest, positiveSteps).map(({ step, record, action }) => {
    const { prompt, images } = promptOf(plannerMessagesAt(manifest, step), view);
    // The executor sees the original screen (the reward service fits it to the executor's own box).
    const label: GrpoLabel = { schema: GRPO_LABEL_SCHEMA, software: manifest.software, manifestKey, step, screenshotKey: record.screenshotKey, screen: view.screen, action };
    return { row: { prompt, images: images.map((i) => i.path), label: JSON.stringify(label) }, images, step };
  });
}

/** SFT rows of the positive steps of one trajectory: the planner's conversation, its reply as the answer (the last turn, the only one trained). */
export function sftRows(manifest: TrajectoryManifest, positiveSteps: readonly number[], view: PlannerView): Array<{ row: SftRow; images: DatasetImage[]; step: number }> {
  return usable(manifest, positiveSteps).map(({ step, record }) => {
    const { prompt, images } = promptOf(plannerMessagesAt(manifest, step), view);
    const turns = prompt.map((message) => ({
      role: message.role,
      content: typeof message.content === 'string' ? message.content : message.content.map((p) => (p.type === 'image' ? SFT_IMAGE_TOKEN : p.text)).join(''),
    }));
    turns.push({ role: 'assistant', content: record.planner.raw });
    return { row: { messages: turns, images: images.map((i) => i.path) }, images, step };
  });
}

export const DATASET_SCHEMA = 'coda.dataset/v1';

export const datasetManifestSchema = z.strictObject({
  schema: z.literal(DATASET_SCHEMA),
  id: z.string().min(1),
  kind: z.enum(['grpo', 'sft']),
  createdAt: z.iso.datetime({ offset: true }),
  software: z.array(z.string().min(1)),
  /** S3 key of the rows: JSONL of GrpoRow, or a JSON list of SftRow. */
  dataKey: z.string().min(1),
  rows: z.number().int().min(0),
  /** Every image the rows use: download `key` to `path` in the dataset's folder. */
  images: z.array(z.strictObject({ key: z.string().min(1), path: z.string().min(1) })),
  /** Which trajectories and steps the rows come from, and the verdicts that chose them. */
  sources: z.array(z.strictObject({ manifestKey: z.string().min(1), verdictKey: z.string().min(1), software: z.string().min(1), steps: z.array(z.number().int().min(1)) })),
  bytes: z.strictObject({ data: z.number().int().min(0), images: z.number().int().min(0) }),
});

export type DatasetManifest = z.output<typeof datasetManifestSchema>;

export const CHECKPOINT_SCHEMA = 'coda.checkpoint/v1';

/** A specialization round's generated task set, and the run its tasks were rolled out (and judged) in, when any was. */
export const roundTaskSetSchema = z.strictObject({
  set: z.string().min(1),
  round: z.number().int().min(1),
  rollouts: z.string().min(1).optional(),
});

export type RoundTaskSet = z.output<typeof roundTaskSetSchema>;

/** A trained planner checkpoint in S3 and its lineage: what it grew from and on which data. */
export const checkpointManifestSchema = z.strictObject({
  schema: z.literal(CHECKPOINT_SCHEMA),
  /** Its name, also the model name it is served under once registered. */
  name: z.string().min(1),
  kind: z.enum(['grpo', 'sft']),
  createdAt: z.iso.datetime({ offset: true }),
  /** The checkpoint it was trained from (its manifest key), absent for one trained from the base planner. */
  parent: z.string().min(1).optional(),
  /** The model it started from: the base planner (an HF id or path on the GPU nodes) or the parent's files. */
  base: z.strictObject({ model: z.string().min(1), path: z.string().min(1) }),
  /** The dataset's manifest key; its sources are copied here so any evaluation row traces to its data. */
  dataset: z.string().min(1),
  sources: datasetManifestSchema.shape.sources,
  /** The training job (a retry resumes it from its last uploaded checkpoint). */
  job: z.string().min(1),
  /**
   * The task sets of the specialization rounds behind it, round 1 to its own: a generalization
   * generates its specialist fresh tasks away from them. Absent on checkpoints of other runs.
   */
  taskSets: z.array(roundTaskSetSchema).optional(),
  steps: z.number().int().min(0),
  metrics: z.record(z.string(), z.number()),
  /** LoRA adapter only (served with vLLM's runtime LoRA loading), or full weights. */
  lora: z.boolean(),
  /** S3 prefix of its files. */
  filesPrefix: z.string().min(1),
  /** The trainer's double stands in for the real one: its planner did not change. */
  double: z.boolean(),
});

export type CheckpointManifest = z.output<typeof checkpointManifestSchema>;
