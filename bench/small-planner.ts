import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { TaskLibrary } from '../activities/tasks/library';
import { loadConfig } from '../config/load';
import type { TrainingConfig } from '../config/schema';
import { pngSize } from '../core/images';
import { REPO_CONFIG } from '../infra/ephemeral';
import { plannerCorpus, referenceRows, SMALL_PLANNER_BOX } from '../infra/small-planner/rows';
import { checkTrainers, learningTrial, LLAMAFACTORY, smallPlannerSft, type Score, type Trial } from '../infra/small-planner/runs';
import { printTable } from './stats';
import { LEARNABLE_TASKS } from '../apps/kalgebra/seeds';

/**
 * Whether the small planner learns (issue 32): the Qwen2.5-VL built here with `--size small`
 * (infra/trainers/tiny_qwen2_5_vl.py, seeded random weights, its tokenizer trained on the planner's
 * prompts for every task in data/scienceboard) is trained by the real LLaMA-Factory on the SFT rows
 * of the local KAlgebra tasks' reference plans (infra/small-planner/rows.ts: the pipeline's own
 * sftRows, every screenshot the real KAlgebra screen of bench/fixtures fitted to the planner's box),
 * then asked for its greedy reply to every row (infra/small-planner/runs.ts learningTrial). Per
 * seed: the rows it answers exactly as the plan says untrained, after SFT, and after the same SFT
 * on the replies shuffled across the rows (no row keeping a reply of its own text); the tasks
 * answered right at every step; the SFT's steps, time and CPU time, the machine's load beside it.
 *
 * `--finetuning lora` trains the pipeline's LoRA (training.sft's rank 64 on every linear layer of
 * the language model) instead of the small planner's full fine-tuning, and `--threads N` gives
 * the trainer N torch threads instead of one, for the comparisons.
 *
 *   node build/bench/small-planner.js [--seeds 0,1,2] [--epochs 30] [--finetuning full|lora] [--threads 1] [--keep]
 */

const shown = (s: Score): string => `${s.exact}/${s.rows} (${Object.values(s.byStep).join('+')}), ${s.tasksRight}/${s.tasks} tasks`;

function report(trials: readonly Trial[], epochs: number, finetuning: string, threads: string): void {
  printTable(`The small planner on the ${LEARNABLE_TASKS.length} local KAlgebra tasks, ${epochs} epochs: replies written exactly as the plan says (by step), tasks right at every step`, [
    ['seed', 'untrained', 'after SFT', 'after SFT on shuffled replies'],
    ...trials.map((t) => [String(t.seed), shown(t.untrained), shown(t.sft), shown(t.shuffled)]),
  ]);
  printTable(`The SFT run (real LLaMA-Factory, ${finetuning} fine-tuning, ${threads} torch thread(s), nice 5)`, [
    ['seed', 'parameters', 'steps', 'training loop s', 'steps/s', 'process s', 'CPU s', 'load avg (1 min) before-after'],
    ...trials.map(({ seed, parameters, run }) => [String(seed), String(parameters), String(run.steps), run.trainSeconds.toFixed(1), run.stepsPerSecond.toFixed(2), run.wallSeconds.toFixed(1), run.cpuSeconds.toFixed(1), run.load.map((l) => l.toFixed(1)).join('-')]),
  ]);
}

/** The small planner's SFT settings with another finetuning_type (a LoRA keeps the deployment's rank and targets) and thread count. */
const varied = (settings: TrainingConfig['sft'], finetuning: string, threads: string): TrainingConfig['sft'] => ({
  ...settings,
  config: { ...settings.config, finetuning_type: finetuning },
  env: { ...settings.env, OMP_NUM_THREADS: threads },
});

async function main(): Promise<void> {
  const options = { seeds: { type: 'string', default: '0,1,2' }, epochs: { type: 'string', default: '30' }, finetuning: { type: 'string', default: 'full' }, threads: { type: 'string', default: '1' }, keep: { type: 'boolean', default: false } } as const;
  const { values } = parseArgs({ options });
  if (!['full', 'lora'].includes(values.finetuning)) throw new Error(`--finetuning: expected full or lora, got ${values.finetuning}`);
  checkTrainers();
  const screenshot = readFileSync(path.resolve(__dirname, '..', '..', 'bench', 'fixtures', 'kalgebra-1920x1080.png'));
  const screen = pngSize(screenshot);
  if (screen === undefined) throw new Error('bench/fixtures/kalgebra-1920x1080.png is not a PNG');
  const tasks = new TaskLibrary().load('KAlgebra', LEARNABLE_TASKS);
  const epochs = Number(values.epochs);
  const base = loadConfig(REPO_CONFIG).training.sft;
  const dir = mkdtempSync(path.join(tmpdir(), 'coda-small-planner-'));
  const setup = { dir, made: referenceRows(tasks, screen, SMALL_PLANNER_BOX), corpus: plannerCorpus(screen), screenshot, box: SMALL_PLANNER_BOX, sft: (seed: number) => varied(smallPlannerSft(base, `nice -n 5 ${LLAMAFACTORY}`, epochs, seed), values.finetuning, values.threads) };
  const trials: Trial[] = [];
  try {
    for (const seed of values.seeds.split(',').map(Number)) {
      console.log(`seed ${seed}: building, asking untrained, training, asking, training on shuffled replies, asking...`);
      trials.push(await learningTrial(setup, seed));
    }
    report(trials, epochs, values.finetuning, values.threads);
  } finally {
    if (values.keep) console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
