import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import * as path from 'node:path';
import type { TrainingConfig } from '../../config/schema';
import type { Size } from '../../core/images';
import { writeSftInputs, type PreparedDataset } from '../../activities/training/trainer-inputs';
import { startTrainer } from '../../activities/training/trainer-process';
import { childrenCpuSeconds } from '../../io/cpu-time';
import { type ReferenceRow } from './rows';

/**
 * The small planner's processes (issue 32): built by infra/trainers/tiny_qwen2_5_vl.py, trained by
 * the real LLaMA-Factory from the YAML the GPU worker writes (writeSftInputs) and started as the
 * worker starts a trainer (startTrainer), and asked for its greedy reply to each row by
 * infra/trainers/greedy_replies.py (LLaMA-Factory's Hugging Face engine, what its API server runs).
 */

/** The repository's root, from build/infra/small-planner. */
const ROOT = path.resolve(__dirname, '..', '..', '..');
/** infra/install-trainers.sh's venv (CODA_TRAINERS_VENV names another). */
export const TRAINERS_VENV = path.resolve(ROOT, process.env.CODA_TRAINERS_VENV ?? '.tools/trainers');
const VENV = path.join(TRAINERS_VENV, 'bin');
export const PYTHON = path.join(VENV, 'python3');
export const LLAMAFACTORY = path.join(VENV, 'llamafactory-cli');
/** The real LLaMA-Factory API server's launcher (start, stop): training.serving's restart command for the small planner. */
export const LAUNCHER = path.join(ROOT, 'infra', 'serving', 'llamafactory_api.py');
/** The variable holding the key the launcher's server demands (`--api-key-env`) when models.planner names none. */
export const PLANNER_KEY_ENV = 'CODA_PLANNER_API_KEY';

/**
 * A fresh key for the launcher's server, which always demands one (at least 16 characters): 32
 * random bytes. A start generates one and hands it to the server and the workers through their
 * environment, never a command line (`ps` shows those to every local user).
 */
export const newPlannerKey = (): string => randomBytes(32).toString('base64url');

/**
 * The environment of every process here: no GPU, no download, and one thread. With torch's two
 * threads the small planner's 360 steps of 10 epochs took as long on this 2-core machine at rest
 * but 1.7 times the CPU (45.5 s against 27.2 s: bench/small-planner.ts --threads), and, at a load
 * of 3 to 4, 158 s against 28 s: each thread spins waiting for the other's core.
 */
export const CPU_ENV: Readonly<Record<string, string>> = { CUDA_VISIBLE_DEVICES: '', HF_HUB_OFFLINE: '1', OMP_NUM_THREADS: '1', TOKENIZERS_PARALLELISM: 'false' };

const pythonEnv = (): Record<string, string> => ({ ...(process.env as Record<string, string>), ...CPU_ENV });

export function checkTrainers(): void {
  if (!existsSync(LLAMAFACTORY)) throw new Error(`${LLAMAFACTORY} is missing: run bash infra/install-trainers.sh (or set CODA_TRAINERS_VENV)`);
}

/** infra/trainers/tiny_qwen2_5_vl.py, which builds the tiny Qwen2.5-VL and the small planner. */
export const QWEN_BUILDER = path.join(ROOT, 'infra', 'trainers', 'tiny_qwen2_5_vl.py');

/**
 * What tiny_qwen2_5_vl.py builds: the tiny model of the real-trainer and real-server tests (its
 * defaults: seed 0, Qwen's max_pixels, its own corpus), or the small planner (seeded weights, its
 * tokenizer trained on `corpus`, its processor's box the planner's).
 */
export type QwenModel = { readonly size: 'tiny' } | { readonly size: 'small'; readonly corpus: readonly string[]; readonly box: Size; readonly seed: number };

/** The builder's options for `model`, the corpus file's path aside. */
export const qwenOptions = (model: QwenModel): string[] =>
  model.size === 'tiny' ? [] : ['--size', 'small', '--max-pixels', String(model.box.width * model.box.height), '--seed', String(model.seed)];

/** Builds `model` in `dir` (a small planner's tokenizer corpus kept beside it); its parameter count. */
export function buildQwen(dir: string, model: QwenModel): number {
  mkdirSync(dir, { recursive: true });
  const corpus = model.size === 'tiny' ? [] : ['--corpus', path.join(dir, 'tokenizer-corpus.json')];
  if (model.size === 'small') writeFileSync(corpus[1]!, JSON.stringify(model.corpus));
  const out = execFileSync(PYTHON, [QWEN_BUILDER, dir, ...qwenOptions(model), ...corpus], { env: pythonEnv(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const parameters = /: (\d+) parameters/.exec(out)?.[1];
  if (parameters === undefined) throw new Error(`tiny_qwen2_5_vl.py did not say what it built: ${out}`);
  return Number(parameters);
}

/**
 * training.sft as a lab sets it to train the small planner on CPU: the deployment's settings, with
 * no GPU or bf16, full fine-tuning (a LoRA of the pipeline's rank 64 on this randomly initialised
 * model wrote 28 of the 36 replies after 30 epochs where full fine-tuning wrote all 36:
 * docs/benchmarks.md), a learning rate for weights that start random, one row a step, and no
 * checkpoints (a run takes about a minute).
 */
export function smallPlannerSft(base: TrainingConfig['sft'], program: string, epochs: number, seed: number): TrainingConfig['sft'] {
  const config = {
    ...base.config,
    use_cpu: true,
    bf16: false,
    finetuning_type: 'full',
    learning_rate: 3e-3,
    num_train_epochs: epochs,
    per_device_train_batch_size: 1,
    gradient_accumulation_steps: 1,
    // LLaMA-Factory recomputes activations by default (memory on a GPU); on a model this small that is only CPU.
    disable_gradient_checkpointing: true,
    save_strategy: 'no',
    seed,
  };
  return { ...base, program, config, env: { ...base.env, ...CPU_ENV } };
}

/** TRL 0.29.1 in its own folder of the trainers' venv (infra/install-trainers.sh), first on the GRPO trainer's PYTHONPATH. */
export const TRL = path.resolve(VENV, '..', 'trl');
export const TRL_GRPO = `${PYTHON} ${path.join(ROOT, 'infra', 'trainers', 'trl_grpo.py')}`;

/**
 * How the small planner samples, in GRPO and when its groups are measured: 8 thoughts a prompt (the
 * deployment's group), at temperature 1, each at most 64 tokens. The local tasks' reference replies
 * are 14 to 66 of its tokenizer's tokens (28 on average); only the longest, a typed curve equation,
 * is cut, in its Action line, which the reward does not read for a typed step (the executor grounds
 * the thought).
 */
export const SMALL_PLANNER_SAMPLING = { n: 8, temperature: 1, maxTokens: 64 } as const;

/** What a GRPO run of the small planner does with the rows: the optimizer's steps and how many prompts each takes. */
export const SMALL_PLANNER_GRPO = { learningRate: 2e-3, epochs: 10, promptsPerStep: 2 } as const;

/**
 * training.grpo as a lab sets it to train the small planner on CPU with TRL (infra/trainers/trl_grpo.py,
 * backend trl): from the full weights of its SFT (the job's base), a LoRA of rank 16 on the language
 * model's projections, SMALL_PLANNER_GRPO's learning rate, prompts a step and epochs over the rows
 * (the deployment's 1e-6 is for a pretrained 32B model; this one's SFT ran at 3e-3), the sampling
 * above, seeded by `seed`, no intermediate checkpoints (180 steps, 12 minutes at a load of 5 to 8). At 1e-2 for one
 * epoch the planner's entropy rose step by step and its rewards fell (docs/real-trainers.md).
 * `rewardUrl` is the worker's own reward service unless a test puts something in front of it; it carries
 * no credentials (the worker gives TRL the token in its environment: infra/trainers/reward_token.py).
 * `epochs` shortens a run that needs fewer (the negated-rewards control).
 */
export function smallPlannerGrpo(program: string, seed: number, options: { readonly rewardUrl?: string; readonly epochs?: number } = {}): TrainingConfig['grpo'] {
  const { n, temperature, maxTokens } = SMALL_PLANNER_SAMPLING;
  const { learningRate, promptsPerStep } = SMALL_PLANNER_GRPO;
  const { rewardUrl = '{rewardUrl}', epochs = SMALL_PLANNER_GRPO.epochs } = options;
  const args = ['--model', '{model}', '--prompts', '{prompts}', '--max-images', '{maxImages}', '--reward-url', rewardUrl, '--checkpoints', '{checkpoints}', '--output', '{output}',
    '--cpu', '--seed', seed, '--num-generations', n, '--prompts-per-step', promptsPerStep, '--max-completion-length', maxTokens, '--temperature', temperature,
    '--learning-rate', learningRate, '--lora-rank', 16, '--lora-alpha', 32, '--epochs', epochs, '--save-steps', 1000,
    // TRL's own defaults for what only costs CPU here: no KL term (no pass through a reference model), no activations recomputed.
    '--beta', 0, '--no-gradient-checkpointing'];
  return { backend: 'trl', program, args: args.map(String), env: { ...CPU_ENV, PYTHONPATH: TRL } };
}

/** One SFT run: where the weights are, and the trainer's own figures. */
export interface SftRun {
  /** The folder holding the trained weights (full fine-tuning) or the adapter (LoRA). */
  readonly output: string;
  readonly lora: boolean;
  readonly steps: number;
  /** transformers' train_runtime and train_steps_per_second (the training loop, start-up excluded). */
  readonly trainSeconds: number;
  readonly stepsPerSecond: number;
  /** The whole process, start-up and saving included: its time, its CPU time, and the machine's load average (1 min) before and after. */
  readonly wallSeconds: number;
  readonly cpuSeconds: number;
  readonly load: readonly [number, number];
}

/** Trains `model` on `dataset` with LLaMA-Factory as the GPU worker runs it (its YAML, its process); throws with the log's tail when it fails. */
export async function trainSft(settings: TrainingConfig['sft'], dataset: PreparedDataset, model: string, dir: string, box: Size): Promise<SftRun> {
  const folders = { inputs: path.join(dir, 'inputs'), checkpoints: path.join(dir, 'output'), output: path.join(dir, 'output') };
  const inputs = writeSftInputs(settings, dataset, folders, { model }, undefined, box);
  const logFile = path.join(dir, 'trainer.log');
  const started = Date.now();
  const [cpu, load] = [childrenCpuSeconds(), loadavg()[0]!];
  const trainer = startTrainer({ program: settings.program.trim().split(/\s+/), args: inputs.args, env: { ...(process.env as Record<string, string>), ...settings.env }, cwd: dir }, logFile, () => undefined);
  const { code, signal } = await trainer.exited;
  if (code !== 0) throw new Error(`${inputs.trainer} exited with ${code ?? signal}: ${readFileSync(logFile, 'utf8').slice(-2000)}`);
  const results = JSON.parse(readFileSync(path.join(inputs.outputDir, 'all_results.json'), 'utf8')) as { train_runtime: number; train_steps_per_second: number };
  const log = readFileSync(path.join(inputs.outputDir, 'trainer_log.jsonl'), 'utf8').trim().split('\n');
  const steps = (JSON.parse(log.at(-1)!) as { current_steps: number }).current_steps;
  const spent = { wallSeconds: (Date.now() - started) / 1000, cpuSeconds: childrenCpuSeconds() - cpu, load: [load, loadavg()[0]!] as const };
  return { output: inputs.outputDir, lora: inputs.lora, steps, trainSeconds: results.train_runtime, stepsPerSecond: results.train_steps_per_second, ...spent };
}

/** The planner's greedy reply to every row of `dataset` (infra/trainers/greedy_replies.py), kept in `out`: the base model, or a run's weights. */
export function greedyReplies(base: string, run: SftRun | undefined, dataset: PreparedDataset, box: Size, out: string): string[] {
  const weights = run === undefined ? ['--model', base] : run.lora ? ['--model', base, '--adapter', run.output] : ['--model', run.output];
  const script = path.join(ROOT, 'infra', 'trainers', 'greedy_replies.py');
  execFileSync(PYTHON, [script, ...weights, '--dataset', dataset.dir, '--image-max-pixels', String(box.width * box.height), '--out', out], { env: pythonEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  return JSON.parse(readFileSync(out, 'utf8')) as string[];
}

/** How many rows a planner answered exactly as the reference plan says, by step, and the tasks it answered right at every step. */
export interface Score {
  readonly rows: number;
  readonly exact: number;
  readonly byStep: Readonly<Record<number, number>>;
  readonly tasks: number;
  readonly tasksRight: number;
}

export function scoreReplies(rows: readonly ReferenceRow[], replies: readonly string[]): Score {
  if (replies.length !== rows.length) throw new Error(`${replies.length} replies for ${rows.length} rows`);
  const byStep: Record<number, number> = {};
  const wrongTasks = new Set<string>();
  rows.forEach((r, i) => {
    const right = replies[i] === r.row.messages.at(-1)?.content;
    byStep[r.step] = (byStep[r.step] ?? 0) + (right ? 1 : 0);
    if (!right) wrongTasks.add(r.taskId);
  });
  const tasks = new Set(rows.map((r) => r.taskId)).size;
  return { rows: rows.length, exact: Object.values(byStep).reduce((a, b) => a + b, 0), byStep, tasks, tasksRight: tasks - wrongTasks.size };
}
