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
import { checkTrainers, LLAMAFACTORY, smallPlannerSft, type Score } from '../infra/small-planner/runs';
import { learningTrial, type Trial } from '../infra/small-planner/trial';
import { printTable } from './stats';
import { LEARNABLE_TASKS } from '../apps/kalgebra/seeds';
import { referencePlanFor } from '../apps/policies';
import type { Size } from '../core/images';
import type { Task } from '../core/task';
import { taskResolver } from '../doubles/scripted-models/task-resolver';

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
 * `--generated N` also asks each SFT planner, greedily, on N KAlgebra tasks the task-generator double
 * writes (every plan shape of the local tasks, other expressions, values and names), which it never
 * trained on: what it carries over to the tasks a specialization round rolls out. `--train-generated
 * M` trains it on M other generated tasks besides the local ones (the rows, and the shuffled control's).
 *
 * `--finetuning lora` trains the pipeline's LoRA (training.sft's rank 64 on every linear layer of
 * the language model) instead of the small planner's full fine-tuning, and `--threads N` gives
 * the trainer N torch threads instead of one, for the comparisons.
 *
 *   node build/bench/small-planner.js [--seeds 0,1,2] [--epochs 30] [--finetuning full|lora] [--threads 1] [--generated 0] [--train-generated 0] [--keep]
 */

/** `count` items spread evenly over `items`, in their order. */
const spread = <T>(items: readonly T[], count: number): T[] => Array.from({ length: count }, (_, i) => items[Math.floor((i * items.length) / count)]!);

/**
 * The generator double's KAlgebra tasks that its reference policy replays (in its templates'
 * order), none with the instruction of a local task: `heldOut` of them spread evenly over all it
 * can write, and `trained` spread evenly over the others; each with an id of its own.
 */
function generatedTasks(counts: { heldOut: number; trained: number }, local: readonly Task[], screen: Size): { heldOut: Task[]; trained: Task[] } {
  for (const [flag, n] of Object.entries(counts)) if (!Number.isInteger(n) || n < 0) throw new Error(`--${flag === 'heldOut' ? 'generated' : 'train-generated'}: expected a whole number of tasks, got ${n}`);
  const known = new Set(local.map((t) => t.instruction));
  const all = taskResolver().everyGenerated().filter((t) => t.type === 'KAlgebra' && !known.has(t.instruction) && referencePlanFor(t, screen).replayable);
  if (all.length < counts.heldOut + counts.trained) throw new Error(`--generated and --train-generated: the generator double writes ${all.length} replayable KAlgebra tasks, fewer than ${counts.heldOut + counts.trained}`);
  const heldOut = counts.heldOut === 0 ? [] : spread(all, counts.heldOut);
  const rest = all.filter((t) => !heldOut.includes(t));
  const trained = counts.trained === 0 ? [] : spread(rest, counts.trained);
  const named = (tasks: Task[], prefix: string): Task[] => tasks.map((t, i) => ({ ...t, id: `${prefix}-${String(i + 1).padStart(3, '0')}` }));
  return { heldOut: named(heldOut, 'G'), trained: named(trained, 'T') };
}

/** `--seeds`: whole numbers, comma-separated. */
function seedsOf(text: string): number[] {
  const seeds = text.split(',').map((s) => Number(s.trim()));
  const bad = seeds.findIndex((s) => !Number.isInteger(s) || s < 0);
  if (bad !== -1) throw new Error(`--seeds: expected whole numbers separated by commas, got "${text}"`);
  return seeds;
}

const shown = (s: Score): string => `${s.exact}/${s.rows} (${Object.values(s.byStep).join('+')}), ${s.tasksRight}/${s.tasks} tasks`;

function report(trials: readonly Trial[], trainedOn: string, epochs: number, finetuning: string, threads: string): void {
  printTable(`The small planner on ${trainedOn}, ${epochs} epochs: replies written exactly as the plan says (by step), tasks right at every step`, [
    ['seed', 'untrained', 'after SFT', 'after SFT on shuffled replies', 'after SFT, on generated tasks it never trained on'],
    ...trials.map((t) => [String(t.seed), shown(t.untrained), shown(t.sft), shown(t.shuffled), t.heldOut === undefined ? '-' : shown(t.heldOut)]),
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
  const options = { seeds: { type: 'string', default: '0,1,2' }, epochs: { type: 'string', default: '30' }, finetuning: { type: 'string', default: 'full' }, threads: { type: 'string', default: '1' }, generated: { type: 'string', default: '0' }, 'train-generated': { type: 'string', default: '0' }, keep: { type: 'boolean', default: false } } as const;
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
  const generated = generatedTasks({ heldOut: Number(values.generated), trained: Number(values['train-generated']) }, tasks, screen);
  const heldOut = generated.heldOut.length === 0 ? {} : { heldOut: referenceRows(generated.heldOut, screen, SMALL_PLANNER_BOX) };
  const trainedOn = `the ${tasks.length} local KAlgebra tasks${generated.trained.length === 0 ? '' : ` and ${generated.trained.length} generated ones`}`;
  const setup = { ...heldOut, dir, made: referenceRows([...tasks, ...generated.trained], screen, SMALL_PLANNER_BOX), corpus: plannerCorpus(screen), screenshot, box: SMALL_PLANNER_BOX, sft: (seed: number) => varied(smallPlannerSft(base, `nice -n 5 ${LLAMAFACTORY}`, epochs, seed), values.finetuning, values.threads) };
  const trials: Trial[] = [];
  try {
    for (const seed of seedsOf(values.seeds)) {
      console.log(`seed ${seed}: building, asking untrained, training, asking, training on shuffled replies, asking...`);
      trials.push(await learningTrial(setup, seed));
    }
    report(trials, trainedOn, epochs, values.finetuning, values.threads);
  } finally {
    if (values.keep) console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
