import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { TaskLibrary } from '../activities/tasks/library';
import { loadConfig } from '../config/load';
import { pngSize, type Size } from '../core/images';
import { REPO_CONFIG } from '../infra/ephemeral';
import { LOCAL_KALGEBRA_TASKS, plannerCorpus, referenceRows, shuffledReplies, SMALL_PLANNER_BOX, writeSftDataset, type ReferenceRows } from '../infra/small-planner/rows';
import { buildSmallPlanner, checkTrainers, greedyReplies, LLAMAFACTORY, scoreReplies, smallPlannerSft, trainSft, type Score } from '../infra/small-planner/runs';
import { childrenCpuSeconds, printTable } from './stats';

/**
 * Whether the small planner learns (issue 32): the Qwen2.5-VL built here with `--size small`
 * (infra/trainers/tiny_qwen2_5_vl.py, seeded random weights, its tokenizer trained on the planner's
 * prompts for every task in data/scienceboard) is trained by the real LLaMA-Factory on the SFT rows
 * of the local KAlgebra tasks' reference plans (infra/small-planner/rows.ts: the pipeline's own
 * sftRows, every screenshot the real KAlgebra screen of bench/fixtures fitted to the planner's box),
 * then asked for its greedy reply to every row. Per seed (the weights', the training's and the
 * shuffle's): the rows it answers exactly as the plan says untrained, after SFT, and after the same
 * SFT on the replies shuffled across the rows (no row keeping a reply of its own text); the tasks
 * answered right at every step; the SFT's steps, time and CPU time (the machine's load beside it).
 *
 *   node build/bench/small-planner.js [--seeds 0,1,2] [--epochs 30] [--keep]
 */

interface SeedResult {
  readonly seed: number;
  readonly parameters: number;
  readonly untrained: Score;
  readonly sft: Score;
  readonly shuffled: Score;
  readonly steps: number;
  readonly trainSeconds: number;
  readonly stepsPerSecond: number;
  readonly wallSeconds: number;
  readonly cpuSeconds: number;
  readonly load: string;
}

interface Setup {
  readonly dir: string;
  readonly made: ReferenceRows;
  readonly corpus: readonly string[];
  readonly screenshot: Buffer;
  readonly box: Size;
  readonly epochs: number;
}

async function runSeed(setup: Setup, seed: number): Promise<SeedResult> {
  const { made, box } = setup;
  const dir = path.join(setup.dir, `seed-${seed}`);
  const model = path.join(dir, 'model');
  const parameters = buildSmallPlanner(model, setup.corpus, box, seed);
  const reference = await writeSftDataset(path.join(dir, 'reference'), `small-planner-${seed}`, made, setup.screenshot, box);
  const shuffled = await writeSftDataset(path.join(dir, 'shuffled'), `small-planner-shuffled-${seed}`, { ...made, rows: shuffledReplies(made.rows, seed) }, setup.screenshot, box);
  const settings = smallPlannerSft(loadConfig(REPO_CONFIG).training.sft, `nice -n 5 ${LLAMAFACTORY}`, setup.epochs, seed);
  const ask = (run: Parameters<typeof greedyReplies>[1], name: string): Score => scoreReplies(made.rows, greedyReplies(model, run, reference, box, path.join(dir, `${name}.json`)));
  const untrained = ask(undefined, 'untrained');
  const cpuBefore = childrenCpuSeconds();
  const loadBefore = loadavg()[0]!;
  const sft = await trainSft(settings, reference, model, path.join(dir, 'sft'), box);
  const cpuSeconds = childrenCpuSeconds() - cpuBefore;
  const load = `${loadBefore.toFixed(1)}-${loadavg()[0]!.toFixed(1)}`;
  const learned = ask(sft, 'sft');
  const control = await trainSft(settings, shuffled, model, path.join(dir, 'shuffled-sft'), box);
  return { seed, parameters, untrained, sft: learned, shuffled: ask(control, 'shuffled-sft'), steps: sft.steps, trainSeconds: sft.trainSeconds, stepsPerSecond: sft.stepsPerSecond, wallSeconds: sft.wallSeconds, cpuSeconds, load };
}

const shown = (s: Score): string => `${s.exact}/${s.rows} (${Object.values(s.byStep).join('+')}), ${s.tasksRight}/${s.tasks} tasks`;

function report(results: readonly SeedResult[], epochs: number): void {
  printTable(`The small planner on the ${LOCAL_KALGEBRA_TASKS.length} local KAlgebra tasks, ${epochs} epochs: replies written exactly as the plan says (by step), tasks right at every step`, [
    ['seed', 'untrained', 'after SFT', 'after SFT on shuffled replies'],
    ...results.map((r) => [String(r.seed), shown(r.untrained), shown(r.sft), shown(r.shuffled)]),
  ]);
  printTable('The SFT run (real LLaMA-Factory, full fine-tuning, 1 thread, nice 5)', [
    ['seed', 'parameters', 'steps', 'training loop s', 'steps/s', 'process s', 'CPU s', 'load avg (1 min) before-after'],
    ...results.map((r) => [String(r.seed), String(r.parameters), String(r.steps), r.trainSeconds.toFixed(1), r.stepsPerSecond.toFixed(2), r.wallSeconds.toFixed(1), r.cpuSeconds.toFixed(1), r.load]),
  ]);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seeds: { type: 'string', default: '0,1,2' }, epochs: { type: 'string', default: '30' }, keep: { type: 'boolean', default: false } } });
  checkTrainers();
  const screenshot = readFileSync(path.resolve(__dirname, '..', '..', 'bench', 'fixtures', 'kalgebra-1920x1080.png'));
  const screen = pngSize(screenshot);
  if (screen === undefined) throw new Error('bench/fixtures/kalgebra-1920x1080.png is not a PNG');
  const tasks = new TaskLibrary().load('KAlgebra', LOCAL_KALGEBRA_TASKS);
  const box = SMALL_PLANNER_BOX;
  const epochs = Number(values.epochs);
  const dir = mkdtempSync(path.join(tmpdir(), 'coda-small-planner-'));
  const setup: Setup = { dir, made: referenceRows(tasks, screen, box), corpus: plannerCorpus(screen), screenshot, box, epochs };
  const results: SeedResult[] = [];
  try {
    for (const seed of values.seeds.split(',').map(Number)) {
      console.log(`seed ${seed}: building, asking untrained, training, asking, training on shuffled replies, asking...`);
      results.push(await runSeed(setup, seed));
    }
    report(results, epochs);
  } finally {
    if (values.keep) console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
