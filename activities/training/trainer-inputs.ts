import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import type { TrainingConfig } from '../../config/schema';
import type { Size } from '../../core/images';
import { safeRelative } from '../../core/keys';
import { datasetManifestSchema, parseGrpoLabel, SFT_IMAGE_TOKEN, type DatasetManifest, type GrpoRow, type PromptPart, type SftRow } from '../../core/training';
import { parseOrThrow, ValidationError } from '../../core/validation';
import { mapLimited } from '../concurrency';
import type { ObjectStore } from '../storage/object-store';
import { hfTrainerCheckpoints, openrlhfCheckpoints, type CheckpointLayout } from './checkpoints';

/**
 * What a trainer reads, written on the GPU node from a dataset in S3 (core/training.ts):
 * - GRPO, for OpenRLHF (and TRL, through infra/trainers/trl_grpo.py, which reads the same file): the prompt JSONL with every message content as a list of parts (HF datasets
 *   reads JSON through Arrow, where one field cannot be a string in one row and a list in
 *   another) and absolute image paths (PIL opens them from the trainer's working directory);
 * - SFT, for LLaMA-Factory: the ShareGPT JSON as it is, `dataset_info.json` beside it (columns,
 *   and the tags, system_tag included: tags not given are unset) and the YAML: the configured keys
 *   plus the job's own, which hold what the rows mean: `mask_history` (a row trains its last
 *   assistant turn only, that step's reply; LLaMA-Factory's default trains every turn, so each reply
 *   would be a target again in every later row of its trajectory) and `image_max_pixels`, the
 *   planner's box in pixels (models.planner.image), so LLaMA-Factory keeps the screenshots at the
 *   size the planner is served instead of its 768x768 default.
 * Every row is checked first (images present, one image per image item, labels that parse), so a
 * bad dataset fails the job at once, naming the row, instead of failing on the GPU.
 */

export interface PreparedDataset {
  readonly manifest: DatasetManifest;
  /** The dataset's folder on this node: the data file and images/ below it. */
  readonly dir: string;
  readonly dataFile: string;
}

/** Downloads a dataset once per node (datasets never change once written); its manifest and folder. */
export async function prepareDataset(store: ObjectStore, datasetKey: string, datasetsDir: string, signal: AbortSignal): Promise<PreparedDataset> {
  const raw = await store.tryGet(datasetKey);
  if (raw === undefined) throw new ValidationError(datasetKey, ['no such dataset manifest in S3']);
  const manifest = parseOrThrow(datasetManifestSchema, JSON.parse(raw.toString('utf8')), datasetKey);
  const dir = path.join(datasetsDir, safeRelative(manifest.id, `${datasetKey} id`));
  const dataFile = path.join(dir, safeRelative(path.posix.basename(manifest.dataKey), `${datasetKey} dataKey`));
  const complete = path.join(dir, '.complete');
  if (existsSync(complete) && readFileSync(complete, 'utf8') === manifest.createdAt) return { manifest, dir, dataFile };
  await store.getFile(manifest.dataKey, dataFile);
  const images = manifest.images.map((image) => ({ key: image.key, file: path.join(dir, safeRelative(image.path, `${datasetKey} images`)) }));
  await mapLimited(images, 8, async (image) => {
    signal.throwIfAborted();
    await store.getFile(image.key, image.file);
  });
  writeFileSync(complete, manifest.createdAt);
  return { manifest, dir, dataFile };
}

function rowsOf(dataset: PreparedDataset): unknown[] {
  const text = readFileSync(dataset.dataFile, 'utf8');
  if (dataset.manifest.kind === 'sft') return JSON.parse(text) as unknown[];
  return text.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as unknown);
}

/** Checks the images of one row: listed, downloaded, one per image item. */
function checkImages(images: unknown, items: number, dataset: PreparedDataset, where: string): string[] {
  if (!Array.isArray(images) || images.some((p) => typeof p !== 'string')) throw new ValidationError(where, ['images: expected a list of paths']);
  if (images.length !== items) throw new ValidationError(where, [`${items} image items in the prompt but ${images.length} images`]);
  return images.map((p: string) => {
    const file = path.join(dataset.dir, safeRelative(p, where));
    if (!existsSync(file)) throw new ValidationError(where, [`image ${p} is not among the dataset's images`]);
    return file;
  });
}

export interface TrainerInputs {
  /** The trainer's name, for errors. */
  readonly trainer: string;
  /** The filled command line. */
  readonly args: string[];
  /** Where the trainer keeps resumable checkpoints, and how it lays them out. */
  readonly checkpointRoot: string;
  readonly layout: CheckpointLayout;
  /** The final model's folder, and what in it is not part of the model (checkpoints). */
  readonly outputDir: string;
  readonly outputSkip: (relative: string) => boolean;
  /** A LoRA adapter (served with runtime LoRA loading) or full weights. */
  readonly lora: boolean;
  /** Steps the whole run will take, when the command line tells. */
  readonly totalSteps?: number;
}

export interface JobFolders {
  /** Inputs written for the trainer. */
  readonly inputs: string;
  readonly checkpoints: string;
  readonly output: string;
}

const fill = (args: readonly string[], values: Readonly<Record<string, string>>): string[] => args.map((arg) => arg.replace(/\{([A-Za-z]+)\}/g, (_m, name: string) => values[name] ?? `{${name}}`));

/** The value after `flag` in a command line, or `fallback`. */
const flagValue = (args: readonly string[], flag: string, fallback: number): number => {
  const at = args.indexOf(flag);
  const value = at === -1 ? undefined : Number(args[at + 1]);
  return value === undefined || Number.isNaN(value) ? fallback : value;
};

type GrpoOutputs = Pick<TrainerInputs, 'trainer' | 'layout' | 'lora' | 'totalSteps'>;

/** What the worker reads off each GRPO backend's command line: where its checkpoints are, whether it trains a LoRA, its steps. */
const GRPO_BACKEND_OUTPUTS: Readonly<Record<TrainingConfig['grpo']['backend'], (args: readonly string[], rows: number) => GrpoOutputs>> = {
  // OpenRLHF takes --rollout.batch_size prompts per global step (default 1024), one episode by default.
  openrlhf: (args, rows) => ({
    trainer: 'OpenRLHF',
    layout: openrlhfCheckpoints,
    lora: flagValue(args, '--ds.lora.rank', 0) > 0,
    totalSteps: Math.ceil(rows / flagValue(args, '--rollout.batch_size', 1024)) * flagValue(args, '--train.num_episodes', 1),
  }),
  // infra/trainers/trl_grpo.py trains a LoRA only, --prompts-per-step prompts (default 2) a step for --epochs (default 1), unless --max-steps stops it first.
  trl: (args, rows) => {
    const epochSteps = Math.ceil(flagValue(args, '--epochs', 1) * Math.ceil(rows / flagValue(args, '--prompts-per-step', 2)));
    const maxSteps = flagValue(args, '--max-steps', -1);
    return { trainer: 'TRL', layout: hfTrainerCheckpoints, lora: true, totalSteps: maxSteps > 0 ? maxSteps : epochSteps };
  },
};

export function writeGrpoInputs(settings: TrainingConfig['grpo'], dataset: PreparedDataset, folders: JobFolders, model: string, rewardUrl: string): TrainerInputs {
  const rows = rowsOf(dataset).map((raw, i) => {
    const where = `${dataset.manifest.dataKey} row ${i}`;
    const row = raw as GrpoRow;
    if (!Array.isArray(row.prompt)) throw new ValidationError(where, ['prompt: expected a list of chat messages']);
    const label = typeof row.label === 'string' ? parseGrpoLabel(row.label) : 'label: expected a string';
    if (typeof label === 'string') throw new ValidationError(where, [label]);
    const prompt = row.prompt.map((m) => ({ role: m.role, content: typeof m.content === 'string' ? [{ type: 'text', text: m.content } as PromptPart] : m.content }));
    const items = prompt.reduce((n, m) => n + m.content.filter((p: PromptPart) => p.type === 'image').length, 0);
    return { prompt, images: checkImages(row.images, items, dataset, where), label: row.label };
  });
  mkdirSync(folders.inputs, { recursive: true });
  const prompts = path.join(folders.inputs, 'prompts.jsonl');
  writeFileSync(prompts, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const args = fill(settings.args, {
    model,
    prompts,
    maxImages: String(Math.max(1, ...rows.map((r) => r.images.length))),
    rewardUrl,
    checkpoints: folders.checkpoints,
    output: folders.output,
  });
  return { args, checkpointRoot: folders.checkpoints, outputDir: folders.output, outputSkip: () => false, ...GRPO_BACKEND_OUTPUTS[settings.backend](args, rows.length) };
}

export const SFT_DATASET_NAME = 'coda_sft';

/** The model a training starts from, and the LoRA adapter on it when it continues one. */
export interface StartingWeights {
  readonly model: string;
  readonly adapter?: string;
}

export function writeSftInputs(settings: TrainingConfig['sft'], dataset: PreparedDataset, folders: JobFolders, weights: StartingWeights, resumeFrom: number | undefined, plannerImage: Size | undefined): TrainerInputs {
  rowsOf(dataset).forEach((raw, i) => {
    const where = `${dataset.manifest.dataKey} row ${i}`;
    const row = raw as SftRow;
    if (!Array.isArray(row.messages) || row.messages.some((m) => typeof m?.content !== 'string')) throw new ValidationError(where, ['messages: expected a list of {role, content} with text content']);
    const tokens = row.messages.reduce((n, m) => n + m.content.split(SFT_IMAGE_TOKEN).length - 1, 0);
    checkImages(row.images, tokens, dataset, where);
  });
  const info = {
    [SFT_DATASET_NAME]: {
      file_name: path.basename(dataset.dataFile),
      formatting: 'sharegpt',
      columns: { messages: 'messages', images: 'images' },
      tags: { role_tag: 'role', content_tag: 'content', user_tag: 'user', assistant_tag: 'assistant', system_tag: 'system' },
    },
  };
  writeFileSync(path.join(dataset.dir, 'dataset_info.json'), JSON.stringify(info, null, 2));
  const yaml = {
    ...settings.config,
    model_name_or_path: weights.model,
    ...(weights.adapter === undefined ? {} : { adapter_name_or_path: weights.adapter }),
    stage: 'sft',
    do_train: true,
    mask_history: true,
    ...(plannerImage === undefined ? {} : { image_max_pixels: plannerImage.width * plannerImage.height }),
    dataset: SFT_DATASET_NAME,
    dataset_dir: dataset.dir,
    media_dir: dataset.dir,
    output_dir: folders.output,
    ...(resumeFrom === undefined ? {} : { resume_from_checkpoint: path.join(folders.output, `checkpoint-${resumeFrom}`) }),
  };
  mkdirSync(folders.inputs, { recursive: true });
  const config = path.join(folders.inputs, 'train.yaml');
  // LLaMA-Factory reads it with OmegaConf, whose YAML is 1.1: there a bare `no`, `yes`, `on` or `off`
  // is a boolean (save_strategy: no arrived as False), so strings like them must be quoted.
  writeFileSync(config, stringify(yaml, { version: '1.1' }));
  return {
    args: fill(settings.args, { config }),
    checkpointRoot: folders.output,
    trainer: 'LLaMA-Factory',
    layout: hfTrainerCheckpoints,
    outputDir: folders.output,
    outputSkip: (relative) => /^checkpoint-\d+$/.test(relative.split(path.sep)[0] ?? ''),
    // LLaMA-Factory's default finetuning_type is lora.
    lora: (settings.config.finetuning_type ?? 'lora') === 'lora',
  };
}
