import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { SMALL_PLANNER_BOX } from '../../infra/small-planner/rows';
import { tinyQwen } from '../../infra/small-planner/artifacts';
import { LAUNCHER, newPlannerKey, PLANNER_KEY_ENV, PYTHON } from '../../infra/small-planner/runs';
import { startGpuHarness, type GpuHarness, type GpuHarnessOptions } from './gpu-harness';

/** The real LLaMA-Factory API server's launcher, for the tests that start it themselves. */
export { LAUNCHER, PLANNER_KEY_ENV };

/** The environment a test's workers get: a fresh key for the real server, under temporal.yaml's models.planner.apiKeyEnv. */
export const plannerKeyEnv = (): Record<string, string> => ({ [PLANNER_KEY_ENV]: newPlannerKey() });

/** A GPU harness whose base planner is the tiny Qwen2.5-VL from the artifact cache, with a scratch folder of its own. */
export interface TinyPlannerHarness {
  readonly g: GpuHarness;
  /** The scratch folder, removed by stop(). */
  readonly scratch: string;
  /**
   * The tiny model's folder, training.basePlanner.path: an entry of the artifact cache
   * (infra/small-planner/artifacts.ts tinyQwen), shared with the other files and read only; what
   * is trained from it is written in the worker's folders.
   */
  readonly model: string;
  stop(): Promise<void>;
}

/**
 * Takes the tiny Qwen2.5-VL (infra/trainers/tiny_qwen2_5_vl.py) from the artifact cache, built
 * there once, and starts a GPU harness on it in a new scratch folder: training.basePlanner.path is
 * the model and the planner's image box SMALL_PLANNER_BOX, the small planner's; `opts.edit` then
 * changes what the test needs (the trainer's settings).
 */
export async function startTinyPlannerHarness(opts: GpuHarnessOptions): Promise<TinyPlannerHarness> {
  const scratch = mkdtempSync(path.join(tmpdir(), `coda-${opts.name}-`));
  try {
    const { dir: model } = await tinyQwen();
    const g = await startGpuHarness({
      ...opts,
      env: { ...plannerKeyEnv(), ...opts.env },
      edit: (doc) => {
        (doc.training as Record<string, any>).basePlanner.path = model;
        (doc.models as Record<string, any>).planner.image = { ...SMALL_PLANNER_BOX };
        opts.edit?.(doc);
      },
    });
    return { g, scratch, model, stop: async () => { await g.stop(); rmSync(scratch, { recursive: true, force: true }); } };
  } catch (err) {
    rmSync(scratch, { recursive: true, force: true });
    throw err;
  }
}

/** Where a test serves the small planner with the real LLaMA-Factory API server (infra/serving/llamafactory_api.py). */
export interface SmallPlannerServer {
  /** The small planner's folder: training.basePlanner.path. */
  readonly model: string;
  readonly name: string;
  /** The scratch folder: checkpoints are copied to its `served` folder. */
  readonly scratch: string;
  readonly port: number;
  /** The launcher's server.pid and server.log. */
  readonly stateDir: string;
  /** Seeds the server's sampling at each start. */
  readonly seed: number;
  /** Torch threads of the server; the launcher's default (torch's) when absent. */
  readonly threads?: number;
}

/**
 * The harness edit of a test of the small planner (whose harness is given plannerKeyEnv()): its image box, replies bounded well above the
 * longest thought (66 tokens; the untrained planner writes on to the limit), it as the base planner,
 * and checkpoints registered by training.serving's restart path on full weights (`--model {path}`).
 */
export function smallPlannerEdit(s: SmallPlannerServer): (doc: Record<string, any>) => void {
  const threads = s.threads === undefined ? [] : ['env', `OMP_NUM_THREADS=${s.threads}`];
  return (doc) => {
    const training = doc.training as Record<string, any>;
    Object.assign((doc.models as Record<string, any>).planner, { image: { ...SMALL_PLANNER_BOX }, maxTokens: 128 });
    training.basePlanner = { model: s.name, path: s.model };
    training.serving = {
      kind: 'restart',
      dir: path.join(s.scratch, 'served'),
      command: [...threads, PYTHON, LAUNCHER, 'start', '--model', '{path}', '--name', '{name}', '--port', String(s.port), '--state-dir', s.stateDir, '--seed', String(s.seed), '--api-key-env', PLANNER_KEY_ENV],
      healthUrl: `http://127.0.0.1:${s.port}/health`,
      timeoutSeconds: 300,
    };
  };
}

/** Stops the server a test started in `stateDir`, if it runs. */
export function stopSmallPlannerServer(stateDir: string | undefined): void {
  if (stateDir !== undefined && existsSync(path.join(stateDir, 'server.pid'))) execFileSync(PYTHON, [LAUNCHER, 'stop', '--state-dir', stateDir], { stdio: 'ignore' });
}
