import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { TaskLibrary } from '../../activities/tasks/library';
import { LEARNABLE_TASKS } from '../../apps/kalgebra/seeds';
import { configRelative, loadConfig, type Env, type LoadedConfig } from '../../config/load';
import type { Size } from '../../core/images';
import { plannerCorpus, referenceRows, SMALL_PLANNER_BOX, writeSftDataset } from './rows';
import { cachedStart, smallPlannerModel, type CachedModel, type CachedStart } from './artifacts';
import { checkTrainers, LAUNCHER, LLAMAFACTORY, newPlannerKey, PLANNER_KEY_ENV, PYTHON, smallPlannerGrpo, smallPlannerSft, TRL_GRPO } from './runs';

/**
 * The small planner in the main job (`npm run demo -- --planner small`, issue 32 item 6): the real
 * Qwen2.5-VL built here from the run seed, served by the real LLaMA-Factory API server, trained by
 * the real TRL (GRPO) and the real LLaMA-Factory (SFT), in place of the planner double and the
 * trainer doubles. The executor, the judges and the task generator stay the scripted doubles (GPU
 * models). What it takes, before the stack starts:
 * - the model, built from the seed;
 * - its starting SFT, which stands where CODA starts from a pretrained planner: SMALL_START_EPOCHS
 *   of the real LLaMA-Factory on the local KAlgebra tasks' reference rows (the small planner's
 *   benchmark rows), enough to solve some of them and not all;
 *   both kept in the artifact cache (infra/small-planner/artifacts.ts), built once for what they
 *   are built from;
 * - the deployment it runs on: temporal.yaml with the planner, the trainers and serving set for it
 *   (smallPlannerDeployment), written under the data directory and named by CODA_CONFIG to every
 *   process of the stack;
 * - the server, (re)started on the start under the base planner's name; each checkpoint is then
 *   registered by the GPU worker through training.serving's restart command;
 * - the key the server demands, generated at each start (withPlannerKey) and given to the server
 *   and to every process of the stack in their environment, under models.planner.apiKeyEnv.
 */

/** The model name the server serves the start under: training.basePlanner.model and models.planner.model. */
export const SMALL_PLANNER_NAME = 'coda-small-planner';
/** The server's port unless CODA_SMALL_PLANNER_PORT names another. */
const DEFAULT_PORT = 8810;
/**
 * Epochs of the starting SFT. Greedily, after 10 the planner solves no local task on the benchmark's
 * rows, after 20 (seed 1) 10 of the 12, after 30 all 12 (docs/benchmarks.md, the small planner);
 * sampled at SMALL_PLANNER_TEMPERATURE on the desktops, the 20-epoch start solved 3 of 48 attempts.
 */
export const SMALL_START_EPOCHS = 30;
/**
 * The generalist's SFT from the start, on the specialist's judged successes: fine-tuning a trained
 * planner, at a tenth of the rate that trains it from random weights and the deployment's 3 epochs.
 * At the start's 3e-3 for 10 epochs, 14 rows of mostly one task made it forget the others (10
 * tasks of the 12 right, greedily, on the benchmark's rows before; 1 after); at 3e-4 for 3, 9.
 */
export const SMALL_GENERALIST_SFT = { learningRate: 3e-4, epochs: 3 } as const;
/**
 * The planner samples at temperature 1 in rollouts and evaluations, as GRPO samples it: greedily
 * (temporal.yaml's 0) the start writes one reply per situation, so a task is solved every time or
 * never, the judged successes are copies of the few it always solves, and GRPO and SFT on them only
 * teach it those. Sampled, it solves more tasks some of the time, and those successes are what
 * GRPO makes more likely (test/training/real-small-planner-grpo.test.ts measured its sampled rewards rise).
 */
export const SMALL_PLANNER_TEMPERATURE = 1;

/** The repository's root, from build/infra/small-planner. */
const ROOT = path.resolve(__dirname, '..', '..', '..');
const FIXTURE = path.join(ROOT, 'bench', 'fixtures', 'kalgebra-1920x1080.png');

/** Where the demo's files for the small planner live, under the data directory (the model and the start are in the artifact cache). */
export interface SmallPlannerPlaces {
  readonly root: string;
  readonly configFile: string;
  readonly stateDir: string;
  readonly served: string;
  readonly port: number;
}

export function smallPlannerPlaces(config: LoadedConfig, env: Env = process.env): SmallPlannerPlaces {
  const root = path.join(config.dataDir, 'small-planner');
  const port = Number(env.CODA_SMALL_PLANNER_PORT ?? DEFAULT_PORT);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`CODA_SMALL_PLANNER_PORT: expected a port from 1 to 65535, got "${env.CODA_SMALL_PLANNER_PORT}"`);
  return {
    root,
    configFile: path.join(root, 'temporal.yaml'),
    stateDir: path.join(root, 'server'),
    served: path.join(root, 'served'),
    port,
  };
}

/**
 * temporal.yaml (the text of `config`'s file) made into the small planner's deployment: the planner
 * served by the real server at `places.port` with its image box, reply bound and temperature, the
 * start (its weights' folder, `start`) as the base planner, GRPO by TRL (smallPlannerGrpo) and SFT by LLaMA-Factory
 * (smallPlannerSft at SMALL_GENERALIST_SFT, full weights) on CPU, each checkpoint registered by the restart command with `--checkpoint {path}`
 * (a GRPO adapter on the start, or the generalist's full weights), all seeded by `seed`. The data
 * and work directories stay `config`'s (written absolute: the file lives elsewhere).
 */
export function smallPlannerDeployment(config: LoadedConfig, places: SmallPlannerPlaces, start: string, seed: number): Record<string, any> {
  const doc = parse(readFileSync(config.file, 'utf8')) as Record<string, any>;
  doc.dev.dataDir = config.dataDir;
  const training = doc.training as Record<string, any>;
  training.workDir = configRelative(config, config.training.workDir);
  const planner = { baseUrl: `http://127.0.0.1:${places.port}/v1`, apiKeyEnv: plannerKeyEnv(config), model: SMALL_PLANNER_NAME, image: { ...SMALL_PLANNER_BOX }, imageTransport: 'data', maxTokens: 128, temperature: SMALL_PLANNER_TEMPERATURE };
  Object.assign(doc.models.planner, planner);
  training.basePlanner = { model: SMALL_PLANNER_NAME, path: start };
  training.grpo = smallPlannerGrpo(TRL_GRPO, seed);
  const sft = smallPlannerSft(config.training.sft, LLAMAFACTORY, SMALL_GENERALIST_SFT.epochs, seed);
  training.sft = { ...sft, config: { ...sft.config, learning_rate: SMALL_GENERALIST_SFT.learningRate } };
  training.serving = {
    kind: 'restart',
    dir: places.served,
    command: [PYTHON, LAUNCHER, 'start', '--model', start, '--checkpoint', '{path}', '--name', '{name}', '--port', String(places.port), '--state-dir', places.stateDir, '--seed', String(seed), '--api-key-env', plannerKeyEnv(config)],
    // The one route the server answers without its key.
    healthUrl: `http://127.0.0.1:${places.port}/health`,
    timeoutSeconds: 600,
  };
  return doc;
}

/** The small planner of `seed` (its tokenizer trained on the planner's texts for `screen`), from the artifact cache. */
export const demoModel = (screen: Size, seed: number): Promise<CachedModel> => smallPlannerModel(plannerCorpus(screen), SMALL_PLANNER_BOX, seed);

/** The start of `model`: SMALL_START_EPOCHS of SFT on the local tasks' reference rows (the bench/fixtures screen), from the artifact cache. */
export async function demoStart(config: LoadedConfig, model: CachedModel, screen: Size, seed: number): Promise<CachedStart> {
  const tasks = new TaskLibrary().load('KAlgebra', [...LEARNABLE_TASKS]);
  const scratch = mkdtempSync(path.join(tmpdir(), 'coda-small-start-'));
  try {
    const dataset = await writeSftDataset(path.join(scratch, 'data'), `small-planner-start-${seed}`, referenceRows(tasks, screen, SMALL_PLANNER_BOX), readFileSync(FIXTURE), SMALL_PLANNER_BOX);
    return await cachedStart(smallPlannerSft(config.training.sft, LLAMAFACTORY, SMALL_START_EPOCHS, seed), dataset, model, SMALL_PLANNER_BOX);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Writes the deployment on the start `start` and loads it as the stack will. */
export function writeDeployment(config: LoadedConfig, places: SmallPlannerPlaces, start: string, seed: number, env: Env): LoadedConfig {
  mkdirSync(places.root, { recursive: true });
  writeFileSync(places.configFile, `# Written by npm run demo -- --planner small (infra/small-planner/demo.ts) from ${config.file}; rewritten at each run.\n${stringify(smallPlannerDeployment(config, places, start, seed))}`);
  return loadConfig(places.configFile, env);
}

/** The variable the deployment's planner key is read from: temporal.yaml's models.planner.apiKeyEnv, else PLANNER_KEY_ENV. */
export const plannerKeyEnv = (config: LoadedConfig): string => config.models.planner.apiKeyEnv ?? PLANNER_KEY_ENV;

/** `env` with a new key for the server under the deployment's planner key variable: one per start of the demo. */
export function withPlannerKey(config: LoadedConfig, env: Readonly<Record<string, string>>): Record<string, string> {
  return { ...env, [plannerKeyEnv(config)]: newPlannerKey() };
}

/** (Re)starts the server on `start`, under the base planner's name, seeded by `seed`, demanding the key `env` holds. */
export function serveStart(config: LoadedConfig, places: SmallPlannerPlaces, start: string, seed: number, env: Readonly<Record<string, string>>): void {
  const command = [LAUNCHER, 'start', '--model', start, '--name', SMALL_PLANNER_NAME, '--port', String(places.port), '--state-dir', places.stateDir, '--seed', String(seed), '--api-key-env', plannerKeyEnv(config)];
  execFileSync(PYTHON, command, { stdio: ['ignore', 'ignore', 'pipe'], env });
}

/** Stops the small planner's server of `dataDir`, if one runs; whether one did. */
export function stopSmallPlannerServer(dataDir: string): boolean {
  const stateDir = path.join(dataDir, 'small-planner', 'server');
  if (!existsSync(path.join(stateDir, 'server.pid')) || !existsSync(PYTHON)) return false;
  execFileSync(PYTHON, [LAUNCHER, 'stop', '--state-dir', stateDir], { stdio: 'ignore' });
  return true;
}

export { checkTrainers };
