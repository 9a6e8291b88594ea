import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import type { Size } from '../../core/smart-resize';
import { TRAINER_DOUBLE_MARKER } from '../../activities/training/contract';
import type { LearningPolicy } from '../learning-planner/policy';
import { UsageError } from './argparse';

/**
 * TEST DOUBLE support shared by the trainer doubles: how they refuse input (as the real trainers
 * fail: argparse's exit 2 for a command line, a Python exception and exit 1 for bad data), the
 * checks the real loaders make implicitly, and the placeholder weights they write.
 */

/** Input the real trainer would fail on: printed as a Python ValueError, exit code 1. */
export class InputError extends Error {}

/** Runs a double's main: its exit code and error output follow the real program's. */
export function runTrainerDouble(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      if (err instanceof UsageError) {
        process.stderr.write(`usage: ${err.prog} [-h] [options]\n${err.prog}: error: ${err.message}\n`);
        process.exit(2);
      }
      process.stderr.write(`Traceback (most recent call last):\n  (trainer double)\n${err instanceof InputError ? 'ValueError' : 'RuntimeError'}: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}

type JsonType = 'string' | 'number' | 'boolean' | 'object' | 'array';
const jsonType = (value: unknown): JsonType | undefined =>
  value === null || value === undefined ? undefined : Array.isArray(value) ? 'array' : (typeof value as JsonType);

/**
 * HF datasets reads JSON through Arrow, where each field keeps one type over all rows: a field that
 * is a string in one row and a list in another fails with Arrow's "changed from ... to ..." error.
 */
export function checkArrowTypes(rows: readonly unknown[], file: string): void {
  const seen = new Map<string, JsonType>();
  const visit = (value: unknown, at: string, row: number): void => {
    const type = jsonType(value);
    if (type === undefined) return;
    const before = seen.get(at);
    if (before !== undefined && before !== type) throw new InputError(`${file}: JSON parse error: Column(${at || '/'}) changed from ${before} to ${type} in row ${row}`);
    seen.set(at, type);
    if (type === 'array') for (const item of value as unknown[]) visit(item, `${at}/[]`, row);
    if (type === 'object') for (const [key, item] of Object.entries(value as object)) visit(item, `${at}/${key}`, row);
  };
  rows.forEach((row, i) => visit(row, '', i));
}

/** The size of an image file as PIL would open it (relative paths from the working directory). */
export async function imageSize(file: string, where: string): Promise<Size> {
  try {
    const { width, height, format } = await sharp(file).metadata();
    if ((format !== 'png' && format !== 'jpeg') || width === undefined || height === undefined) throw new Error(`not a PNG or JPEG image (${format})`);
    return { width, height };
  } catch (err) {
    throw new InputError(`${where}: cannot open image ${file}: ${(err as Error).message.split('\n')[0]}`);
  }
}

/** A valid safetensors file with no tensors: the doubles' weights are placeholders, and say so in the metadata. */
export function placeholderSafetensors(note: string): Buffer {
  const header = Buffer.from(JSON.stringify({ __metadata__: { format: 'pt', note } }), 'utf8');
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(header.length));
  return Buffer.concat([length, header]);
}


/**
 * A model folder as the real trainer saves it: a PEFT LoRA adapter (adapter_config.json +
 * adapter_model.safetensors) or full weights (config.json + model.safetensors), all placeholders,
 * with the double's marker and the learning planner double's logits (its only parameters).
 */
export function writeModelFolder(dir: string, opts: { readonly trainer: string; readonly base: string; readonly loraRank: number; readonly loraAlpha: number; readonly step: number }, policy: LearningPolicy): void {
  mkdirSync(dir, { recursive: true });
  const note = `TEST DOUBLE weights (${opts.trainer} double, step ${opts.step}): placeholders; the planner's parameters are the logits of planner-policy.json`;
  if (opts.loraRank > 0) {
    writeFileSync(
      path.join(dir, 'adapter_config.json'),
      JSON.stringify({ peft_type: 'LORA', task_type: 'CAUSAL_LM', base_model_name_or_path: opts.base, r: opts.loraRank, lora_alpha: opts.loraAlpha, target_modules: 'all-linear', lora_dropout: 0 }, null, 2),
    );
    writeFileSync(path.join(dir, 'adapter_model.safetensors'), placeholderSafetensors(note));
  } else {
    writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ architectures: ['Qwen2_5_VLForConditionalGeneration'], _name_or_path: opts.base }, null, 2));
    writeFileSync(path.join(dir, 'model.safetensors'), placeholderSafetensors(note));
  }
  policy.write(dir);
  writeFileSync(path.join(dir, TRAINER_DOUBLE_MARKER), JSON.stringify({ double: true, trainer: opts.trainer, step: opts.step, note, updates: policy.updates }, null, 2));
}

/** The doubles' pacing: milliseconds each training step takes on top of its real work (0 by default). */
export const stepDelayMs = (): number => Number(process.env.CODA_TRAINER_DOUBLE_STEP_MS ?? '0') || 0;
