import * as path from 'node:path';
import type { TrainingConfig } from '../../config/schema';
import type { Size } from '../../core/images';
import { smallPlannerModel } from './artifacts';
import { shuffledReplies, writeSftDataset, type ReferenceRows } from './rows';
import { greedyReplies, scoreReplies, trainSft, type Score, type SftRun } from './runs';

/**
 * A learning trial of the small planner (issue 32): the planner of a seed (from the artifact
 * cache), asked untrained, trained by the real LLaMA-Factory on the rows and asked, trained on the
 * rows with their replies shuffled and asked. The trainings are what a trial measures: they run
 * every time, into the trial's own folder.
 */

/** What a learning trial needs: its folder, the rows, the tokenizer's corpus, the screenshot and box of the rows, the SFT settings. */
export interface TrialSetup {
  readonly dir: string;
  readonly made: ReferenceRows;
  readonly corpus: readonly string[];
  readonly screenshot: Buffer;
  readonly box: Size;
  readonly sft: (seed: number) => TrainingConfig['sft'];
  /** Rows of other tasks the planner is never trained on, asked after its SFT (what it carries over). */
  readonly heldOut?: ReferenceRows;
}

/** A learning trial's figures: the planner's scores untrained, after SFT and after the same SFT on shuffled replies, and that SFT's run. */
export interface Trial {
  readonly seed: number;
  readonly parameters: number;
  readonly untrained: Score;
  readonly sft: Score;
  readonly shuffled: Score;
  readonly run: SftRun;
  /** The SFT planner's replies to the held-out rows, when the setup has them. */
  readonly heldOut?: Score;
}

/** A trained planner's replies to rows it was not trained on, scored against their plans. */
async function askHeldOut(setup: TrialSetup, rows: ReferenceRows, model: string, run: SftRun, dir: string): Promise<Score> {
  const dataset = await writeSftDataset(path.join(dir, 'held-out'), `small-planner-held-out`, rows, setup.screenshot, setup.box);
  return scoreReplies(rows.rows, greedyReplies(model, run, dataset, setup.box, path.join(dir, 'held-out.json')));
}

/**
 * One learning trial of the small planner, seeded by `seed` (its weights, the training's order,
 * the shuffle): built (or taken from the cache), asked untrained, trained on the rows and asked, trained from the same
 * weights on the rows with their replies shuffled and asked the rows' prompts again, every answer
 * scored against the plan's reply.
 */
export async function learningTrial(setup: TrialSetup, seed: number): Promise<Trial> {
  const { made, box } = setup;
  const dir = path.join(setup.dir, `seed-${seed}`);
  const { dir: model, parameters } = await smallPlannerModel(setup.corpus, box, seed);
  const reference = await writeSftDataset(path.join(dir, 'reference'), `small-planner-${seed}`, made, setup.screenshot, box);
  const shuffled = await writeSftDataset(path.join(dir, 'shuffled'), `small-planner-shuffled-${seed}`, { ...made, rows: shuffledReplies(made.rows, seed) }, setup.screenshot, box);
  const ask = (run: SftRun | undefined, name: string): Score => scoreReplies(made.rows, greedyReplies(model, run, reference, box, path.join(dir, `${name}.json`)));
  const untrained = ask(undefined, 'untrained');
  const run = await trainSft(setup.sft(seed), reference, model, path.join(dir, 'sft'), box);
  const sft = ask(run, 'sft');
  const heldOut = setup.heldOut === undefined ? undefined : await askHeldOut(setup, setup.heldOut, model, run, dir);
  const control = await trainSft(setup.sft(seed), shuffled, model, path.join(dir, 'shuffled-sft'), box);
  return { seed, parameters, untrained, sft, shuffled: ask(control, 'shuffled-sft'), run, ...(heldOut === undefined ? {} : { heldOut }) };
}
