import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { startGpuHarness, type GpuHarness, type GpuHarnessOptions } from './gpu-harness';

/** The repository's root from build/test/support. */
const ROOT = path.resolve(__dirname, '..', '..', '..');
/** infra/install-trainers.sh's venv python. */
const TRAINERS_PYTHON = path.join(ROOT, '.tools', 'trainers', 'bin', 'python3');
/** The planner's image box the tiny model is served and trained at: small, for CPU. */
export const TINY_QWEN_BOX = { width: 320, height: 180 } as const;

/**
 * Writes the tiny Qwen2.5-VL the real-trainer and real-server tests train and serve into `dir`
 * (infra/trainers/tiny_qwen2_5_vl.py: real architecture, seeded weights, nothing downloaded), with
 * `python`, infra/install-trainers.sh's venv.
 */
export function buildTinyQwen(python: string, dir: string): void {
  execFileSync(python, [path.join(ROOT, 'infra', 'trainers', 'tiny_qwen2_5_vl.py'), dir], { env: { ...process.env, HF_HUB_OFFLINE: '1' }, stdio: 'pipe' });
}

/** A GPU harness whose base planner is a tiny Qwen2.5-VL built for it, in a scratch folder of its own. */
export interface TinyPlannerHarness {
  readonly g: GpuHarness;
  /** The scratch folder, removed by stop(). */
  readonly scratch: string;
  /** The tiny model's folder: training.basePlanner.path. */
  readonly model: string;
  stop(): Promise<void>;
}

/**
 * Builds the tiny Qwen2.5-VL in a new scratch folder (its folder named `modelName`) and starts a GPU
 * harness on it: training.basePlanner.path is the model and the planner's image box TINY_QWEN_BOX;
 * `opts.edit` then changes what the test needs (the trainer's settings).
 */
export async function startTinyPlannerHarness(opts: GpuHarnessOptions & { readonly modelName: string }): Promise<TinyPlannerHarness> {
  const scratch = mkdtempSync(path.join(tmpdir(), `coda-${opts.name}-`));
  const model = path.join(scratch, opts.modelName);
  try {
    buildTinyQwen(TRAINERS_PYTHON, model);
    const g = await startGpuHarness({
      ...opts,
      edit: (doc) => {
        (doc.training as Record<string, any>).basePlanner.path = model;
        (doc.models as Record<string, any>).planner.image = { ...TINY_QWEN_BOX };
        opts.edit?.(doc);
      },
    });
    return { g, scratch, model, stop: async () => { await g.stop(); rmSync(scratch, { recursive: true, force: true }); } };
  } catch (err) {
    rmSync(scratch, { recursive: true, force: true });
    throw err;
  }
}
