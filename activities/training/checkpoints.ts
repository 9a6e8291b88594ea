import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { safeRelative } from '../../core/keys';
import { mapLimited } from '../concurrency';
import type { ObjectStore } from '../storage/object-store';

/**
 * A job's resumable checkpoints, between the trainer's folder and S3. The trainer writes them
 * where it always does (OpenRLHF: `{ckpt.path}/_actor/global_stepN/` and `_actor/latest`;
 * LLaMA-Factory and TRL, through transformers' Trainer: `output_dir/checkpoint-N/`); the worker uploads each new complete one under the
 * job's prefix and then writes `latest.json`, the commit marker, so a retry on any GPU worker
 * restores exactly the files of the newest complete upload before running the same command again.
 *
 *   {jobPrefix}/checkpoints/latest.json        {"step", "files"}: what to restore
 *   {jobPrefix}/checkpoints/{step}/{file}      the files, relative to the trainer's folder
 */

export interface LocalCheckpoint {
  readonly step: number;
  /** Paths relative to the trainer's checkpoint folder. */
  readonly files: readonly string[];
}

/** Where a trainer keeps its checkpoints and how to tell a complete one. */
export interface CheckpointLayout {
  /** The newest complete checkpoint in `root`, if any. */
  latest(root: string): LocalCheckpoint | undefined;
}

/** Every file below `dir`, as paths relative to `root`. */
export function filesBelow(root: string, dir: string, skip: (relative: string) => boolean = () => false): string[] {
  if (!existsSync(path.join(root, dir))) return [];
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(dir, entry.name);
    if (skip(relative)) return [];
    return entry.isDirectory() ? filesBelow(root, relative, skip) : [relative];
  });
}

/** OpenRLHF (DeepSpeed): `_actor/latest` names the newest tag once it is complete. */
export const openrlhfCheckpoints: CheckpointLayout = {
  latest(root) {
    const marker = path.join(root, '_actor', 'latest');
    if (!existsSync(marker)) return undefined;
    const tag = readFileSync(marker, 'utf8').trim();
    const step = /^global_step(\d+)$/.exec(tag)?.[1];
    if (step === undefined) return undefined;
    return { step: Number(step), files: [...filesBelow(root, path.join('_actor', tag)), path.join('_actor', 'latest')] };
  },
};

/** transformers' Trainer (LLaMA-Factory, TRL): `checkpoint-N/` is complete once its trainer_state.json, written last, exists. */
export const hfTrainerCheckpoints: CheckpointLayout = {
  latest(root) {
    if (!existsSync(root)) return undefined;
    const steps = readdirSync(root)
      .map((name) => /^checkpoint-(\d+)$/.exec(name)?.[1])
      .filter((step): step is string => step !== undefined && existsSync(path.join(root, `checkpoint-${step}`, 'trainer_state.json')))
      .map(Number)
      .sort((a, b) => b - a);
    const step = steps[0];
    return step === undefined ? undefined : { step, files: filesBelow(root, `checkpoint-${step}`) };
  },
};

interface Marker {
  readonly step: number;
  readonly files: readonly string[];
  readonly uploadedAt: string;
}

const markerKey = (jobPrefix: string): string => `${jobPrefix}/checkpoints/latest.json`;
const fileKey = (jobPrefix: string, step: number, file: string): string => `${jobPrefix}/checkpoints/${step}/${file.split(path.sep).join('/')}`;

/** The step of the newest uploaded checkpoint of a job, if any. */
export async function uploadedStep(store: ObjectStore, jobPrefix: string): Promise<number | undefined> {
  const raw = await store.tryGet(markerKey(jobPrefix));
  return raw === undefined ? undefined : (JSON.parse(raw.toString('utf8')) as Marker).step;
}

/**
 * Uploads a checkpoint, then points the marker at it and drops the one it replaces. Undefined when
 * the trainer deleted it meanwhile (rotation): the next, newer one will be uploaded instead.
 */
export async function uploadCheckpoint(store: ObjectStore, jobPrefix: string, root: string, checkpoint: LocalCheckpoint): Promise<number | undefined> {
  const previous = await store.tryGet(markerKey(jobPrefix));
  try {
    await mapLimited(checkpoint.files, 4, (file) => store.putFile(fileKey(jobPrefix, checkpoint.step, file), path.join(root, file)));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const marker: Marker = { step: checkpoint.step, files: checkpoint.files, uploadedAt: new Date().toISOString() };
  await store.putJson(markerKey(jobPrefix), marker);
  if (previous !== undefined) {
    const old = JSON.parse(previous.toString('utf8')) as Marker;
    if (old.step !== checkpoint.step) await mapLimited(old.files, 8, (file) => store.delete(fileKey(jobPrefix, old.step, file)));
  }
  return checkpoint.step;
}

/** Puts the newest uploaded checkpoint back into the trainer's folder; its step, or undefined when there is none. */
export async function restoreCheckpoint(store: ObjectStore, jobPrefix: string, root: string): Promise<number | undefined> {
  const raw = await store.tryGet(markerKey(jobPrefix));
  if (raw === undefined) return undefined;
  const marker = JSON.parse(raw.toString('utf8')) as Marker;
  const files = marker.files.map((file) => safeRelative(file, store.uri(markerKey(jobPrefix))));
  await mapLimited(files, 4, (file) => store.getFile(fileKey(jobPrefix, marker.step, file), path.join(root, file)));
  return marker.step;
}

/** Uploads every file below `root` (skipping what `skip` names) under `prefix`; the relative paths. */
export async function uploadFolder(store: ObjectStore, root: string, prefix: string, skip?: (relative: string) => boolean): Promise<string[]> {
  const files = filesBelow(root, '', skip).filter((file) => statSync(path.join(root, file)).isFile());
  await mapLimited(files, 4, (file) => store.putFile(`${prefix}/${file.split(path.sep).join('/')}`, path.join(root, file)));
  return files;
}
