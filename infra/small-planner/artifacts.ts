import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { TrainingConfig } from '../../config/schema';
import type { Size } from '../../core/images';
import { writeSftInputs, type PreparedDataset } from '../../activities/training/trainer-inputs';
import { cachedArtifact, sha256, type CacheOptions, type KeyInputs } from '../../io/artifact-cache';
import { buildQwen, QWEN_BUILDER, qwenOptions, TRAINERS_VENV, trainSft, type QwenModel } from './runs';

/**
 * The small planner's expensive artifacts, each built once per machine and shared (io/artifact-cache.ts):
 * the models tiny_qwen2_5_vl.py builds, and the starts the real LLaMA-Factory trains from them.
 * A key holds everything the artifact is built from: for a model the builder's bytes, its options
 * (size, seed, box) and the tokenizer's corpus; for a start the parent model's key, the trainer's
 * YAML and command as the GPU worker writes them (writeSftInputs: every setting, the seed, the
 * epochs), its environment and the dataset's files; for both the trainers' venv (python's version
 * and every package's). Users read an entry and never write into it.
 */

/** The trainers' venv in a key: python's version (pyvenv.cfg) and every installed package with its version (the *.dist-info folders). */
export function trainersVenv(venv: string = TRAINERS_VENV): KeyInputs {
  const config = path.join(venv, 'pyvenv.cfg');
  if (!existsSync(config)) throw new Error(`${config} is missing: run bash infra/install-trainers.sh (or set CODA_TRAINERS_VENV)`);
  const python = /^version\s*=\s*(\S+)/m.exec(readFileSync(config, 'utf8'))?.[1] ?? 'unknown';
  const lib = path.join(venv, 'lib');
  const sites = readdirSync(lib).map((d) => path.join(lib, d, 'site-packages')).filter((d) => existsSync(d));
  const packages = sites.flatMap((site) => readdirSync(site).filter((n) => n.endsWith('.dist-info')).map((n) => n.slice(0, -'.dist-info'.length)));
  return { python, packages: packages.sort() };
}

/** A model from the cache: its folder (read only), key and parameter count. */
export interface CachedModel {
  readonly dir: string;
  readonly key: string;
  readonly parameters: number;
  /** Whether this call built it. */
  readonly built: boolean;
}

/** What `model` is built from: the builder's bytes and options, the corpus, the venv (`at` names other places than the repository's, for tests). */
export function modelInputs(model: QwenModel, at: { readonly venv?: string; readonly builder?: string } = {}): KeyInputs {
  return {
    builder: sha256(readFileSync(at.builder ?? QWEN_BUILDER)),
    options: qwenOptions(model),
    corpus: model.size === 'tiny' ? null : sha256(JSON.stringify(model.corpus)),
    trainers: trainersVenv(at.venv),
  };
}

/** `model`, built by tiny_qwen2_5_vl.py unless the cache has it. */
export async function cachedModel(model: QwenModel, options?: CacheOptions): Promise<CachedModel> {
  const entry = await cachedArtifact({ kind: `qwen2.5-vl-${model.size}`, inputs: modelInputs(model), build: async (dir) => ({ parameters: buildQwen(path.join(dir, 'model'), model) }) }, options);
  return { dir: path.join(entry.dir, 'model'), key: entry.key, parameters: entry.record.info.parameters, built: entry.built };
}

/** The tiny Qwen2.5-VL of the real-trainer and real-server tests. */
export const tinyQwen = (options?: CacheOptions): Promise<CachedModel> => cachedModel({ size: 'tiny' }, options);

/** The small planner of `seed`, its tokenizer trained on `corpus`, its processor's box `box`. */
export const smallPlannerModel = (corpus: readonly string[], box: Size, seed: number, options?: CacheOptions): Promise<CachedModel> => cachedModel({ size: 'small', corpus, box, seed }, options);

/** Placeholders for the folders of one run in the trainer's inputs, so that a key does not depend on where they are. */
const PLACES = { model: '{model}', output: '{output}', dataset: '{dataset}', inputs: '{inputs}' } as const;

/**
 * What an SFT of `parent` on `dataset` is built from: the YAML and command line the GPU worker's
 * code writes for it (writeSftInputs, its folders as placeholders), the trainer's environment,
 * the dataset's files (its rows, dataset_info.json, every image), the parent's key and the venv.
 */
export function sftInputs(settings: TrainingConfig['sft'], dataset: PreparedDataset, parentKey: string, box: Size, venv?: string): KeyInputs {
  const scratch = mkdtempSync(path.join(tmpdir(), 'coda-sft-key-'));
  try {
    const inputs = writeSftInputs(settings, dataset, { inputs: scratch, checkpoints: PLACES.output, output: PLACES.output }, { model: PLACES.model }, undefined, box);
    const yaml = readFileSync(path.join(scratch, 'train.yaml'), 'utf8').replaceAll(dataset.dir, PLACES.dataset);
    const files = [dataset.dataFile, path.join(dataset.dir, 'dataset_info.json'), ...dataset.manifest.images.map((image) => path.join(dataset.dir, image.path))];
    return {
      yaml,
      // The trainer's program by name: a `nice` before it or the venv's place changes nothing it writes.
      program: path.basename(settings.program.trim().split(/\s+/).at(-1) ?? ''),
      args: inputs.args.map((arg) => arg.replaceAll(scratch, PLACES.inputs)),
      env: settings.env ?? {},
      dataset: Object.fromEntries(files.map((file) => [path.relative(dataset.dir, file), sha256(readFileSync(file))])),
      parent: parentKey,
      trainers: trainersVenv(venv),
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** A start from the cache: the trained weights' folder (full weights, read only), its key and the training's steps. */
export interface CachedStart {
  readonly dir: string;
  readonly key: string;
  readonly steps: number;
  readonly built: boolean;
}

/** The SFT of `parent` on `dataset` with `settings` (full fine-tuning), trained by the real LLaMA-Factory as the GPU worker runs it (trainSft) unless the cache has it. */
export async function cachedStart(settings: TrainingConfig['sft'], dataset: PreparedDataset, parent: CachedModel, box: Size, options?: CacheOptions): Promise<CachedStart> {
  if ((settings.config.finetuning_type ?? 'lora') === 'lora') throw new Error('training.sft.config.finetuning_type: a start is full weights (full), got a LoRA');
  const build = async (dir: string): Promise<{ steps: number }> => ({ steps: (await trainSft(settings, dataset, parent.dir, dir, box)).steps });
  const entry = await cachedArtifact({ kind: 'small-planner-start', inputs: sftInputs(settings, dataset, parent.key, box), build }, options);
  return { dir: path.join(entry.dir, 'output'), key: entry.key, steps: entry.record.info.steps, built: entry.built };
}
