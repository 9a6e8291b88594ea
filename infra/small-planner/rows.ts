import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { makeVariants } from '../../activities/images/variants';
import { TaskLibrary } from '../../activities/tasks/library';
import type { PreparedDataset } from '../../activities/training/trainer-inputs';
import { parseTrajectoryManifest } from '../../apps/manifests';
import { referencePlanFor } from '../../apps/policies';
import type { GuiAction } from '../../core/actions';
import type { Size } from '../../core/images';
import { manifestKey, screenshotKey, verdictKey, type AttemptRef } from '../../core/keys';
import { parsePlannerOutput, plannerActionText } from '../../core/planner-parser';
import { keyedRandom, randomIndex } from '../../core/prng';
import { buildPlannerMessages } from '../../core/prompts/planner';
import { DATASET_SCHEMA, datasetManifestSchema, plannerMessagesAt, sftRows, type DatasetImage, type DatasetManifest, type SftRow } from '../../core/training';
import type { ChatMessage } from '../../core/prompts/messages';
import { TRAJECTORY_SCHEMA, type StepRecord, type TrajectoryManifest } from '../../core/trajectory';
import type { Task } from '../../core/task';
import { replyFor } from '../../doubles/learning-planner/situation';

/**
 * The SFT rows a small planner learns from (issue 32, "a small planner that can learn"): for each
 * local task, a trajectory that follows its reference plan (apps/policies.ts), each step's reply
 * the one a planner that knows the plan writes (the learning planner double's replyFor),
 * made into ShareGPT rows by the pipeline's own sftRows (core/training.ts) with the screenshot
 * fitted to the planner's box, as the datasets activity writes them for LLaMA-Factory. No desktop
 * runs: every step's screenshot is the one given (a real KAlgebra screen in the benchmark), so
 * what tells the rows apart is their text, which is what the model must learn to answer.
 */


/**
 * The small planner's image box (models.planner.image): 320x180 keeps a 1920x1080 screen's shape;
 * Qwen2-VL's processor fits it to 308x168, 11x6 = 66 image tokens after the 2x2 merge, so a row of
 * two screenshots stays about 500 tokens, a training step of the small planner about 65 ms here.
 * The tiny model of the real-trainer and real-server tests is trained and served at the same box.
 */
export const SMALL_PLANNER_BOX: Size = { width: 320, height: 180 };

const RUN = 'small-planner';
const PREFIX = 'coda';

/** The actions of `task`'s reference plan, the last one the stop (DONE or ANS); undefined for a task it cannot replay. */
function planOf(task: Task, screen: Size): GuiAction[] | undefined {
  const plan = referencePlanFor(task, screen);
  return plan.replayable ? [...plan.actions] : undefined;
}

/** A trajectory of `task` that follows its reference plan step by step, as a rollout's manifest records it under the deployment's key `prefix`. */
export function referenceTrajectory(task: Task, screen: Size, prefix = PREFIX): TrajectoryManifest {
  const actions = planOf(task, screen);
  if (actions === undefined) throw new Error(`${task.type} ${task.id}: the reference policy cannot replay it`);
  const ref: AttemptRef = { run: RUN, software: task.type, task: task.id, attempt: 0 };
  const at = new Date(0).toISOString();
  const steps: StepRecord[] = actions.map((action, i) => {
    const raw = replyFor(i + 1, action);
    const parsed = parsePlannerOutput(raw);
    if (!parsed.ok) throw new Error(`${task.id} step ${i + 1}: ${parsed.reason}`);
    return {
      index: i + 1,
      screenshotKey: screenshotKey(prefix, ref, i),
      planner: { thought: parsed.thought, actionText: plannerActionText(parsed.action), raw, model: RUN, latencyMs: 0 },
      action,
      timings: { plannerMs: 0 },
      startedAt: at,
    };
  });
  const stop = actions.at(-1)?.type === 'answer' ? 'ANS' : 'DONE';
  return parseTrajectoryManifest(
    {
      schema: TRAJECTORY_SCHEMA,
      ...ref,
      taskId: task.id,
      stage: 'reference',
      task: { instruction: task.instruction, maxSteps: Math.max(task.steps, steps.length) },
      models: { planner: { model: RUN, baseUrl: 'none' }, executor: { model: RUN, baseUrl: 'none' } },
      desktop: { host: 'reference-plan', id: 'none', screen },
      steps,
      initialScreenshotKey: screenshotKey(prefix, ref, 0),
      stop: { reason: stop },
      resumes: 0,
      startedAt: at,
      endedAt: at,
    },
    `${task.id} reference trajectory`,
  );
}

/** One SFT row of a reference trajectory, with where it came from. */
export interface ReferenceRow {
  readonly taskId: string;
  readonly step: number;
  readonly row: SftRow;
}

/** The SFT rows of some tasks' reference trajectories (every step positive), the images they name and the trajectories as a dataset's sources. */
export interface ReferenceRows {
  readonly rows: ReferenceRow[];
  readonly images: DatasetImage[];
  readonly sources: DatasetManifest['sources'];
}

export function referenceRows(tasks: readonly Task[], screen: Size, box: Size): ReferenceRows {
  const rows: ReferenceRow[] = [];
  const images = new Map<string, DatasetImage>();
  const sources: DatasetManifest['sources'] = [];
  for (const task of tasks) {
    const manifest = referenceTrajectory(task, screen);
    const made = sftRows(manifest, manifest.steps.map((s) => s.index), { screen, box });
    for (const { row, step, images: used } of made) {
      rows.push({ taskId: task.id, step, row });
      for (const image of used) images.set(image.key, image);
    }
    const ref = { run: manifest.run, software: manifest.software, task: manifest.taskId, attempt: manifest.attempt };
    sources.push({ manifestKey: manifestKey(PREFIX, ref), verdictKey: verdictKey(PREFIX, ref), software: manifest.software, steps: made.map((m) => m.step) });
  }
  return { rows, images: [...images.values()], sources };
}

const replyOf = (row: ReferenceRow): string => row.row.messages.at(-1)?.content ?? '';

function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomIndex(random, i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/**
 * The control of issue 32: the same rows with the replies shuffled across them (seeded), so that
 * no row keeps a reply of its own text: what a model learns from them is the replies' format and
 * frequencies, never which reply a prompt calls for. The rows are put in a random order with equal
 * replies together, and each takes the reply of the row as many places on as the largest group of
 * equal replies is long, which always lands outside its group while that group is at most half.
 */
export function shuffledReplies(rows: readonly ReferenceRow[], seed: number): ReferenceRow[] {
  const random = keyedRandom(seed, 'shuffled-replies');
  const groups = new Map<string, number[]>();
  rows.forEach((row, i) => groups.set(replyOf(row), [...(groups.get(replyOf(row)) ?? []), i]));
  const order = shuffle([...groups.values()], random).flatMap((group) => shuffle(group, random));
  const shift = Math.max(...[...groups.values()].map((g) => g.length));
  if (2 * shift > rows.length) throw new Error(`${shift} of ${rows.length} rows have the same reply: no shuffle gives every row another one`);
  const replies = new Map(order.map((at, k) => [at, replyOf(rows[order[(k + shift) % order.length]!]!)]));
  return rows.map((row, i) => ({ ...row, row: { ...row.row, messages: [...row.row.messages.slice(0, -1), { role: 'assistant', content: replies.get(i)! }] } }));
}

/**
 * Writes rows as the datasets activity stores a dataset and the GPU worker downloads it (the
 * ShareGPT JSON list, the images below the folder, activities/training/trainer-inputs.ts): every
 * image is `screenshot` fitted to `box`, as a host stores the planner's variant at capture.
 */
export async function writeSftDataset(dir: string, id: string, made: ReferenceRows, screenshot: Buffer, box: Size): Promise<PreparedDataset> {
  const [variant] = await makeVariants('screenshot.png', screenshot, [box]);
  for (const image of made.images) {
    const file = path.join(dir, image.path);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, variant?.png ?? screenshot);
  }
  const data = `[\n${made.rows.map((r) => JSON.stringify(r.row)).join(',\n')}\n]\n`;
  const dataFile = path.join(dir, 'data.json');
  writeFileSync(dataFile, data);
  const manifest = datasetManifestSchema.parse({
    schema: DATASET_SCHEMA,
    id,
    kind: 'sft',
    createdAt: new Date().toISOString(),
    software: [...new Set(made.sources.map((s) => s.software))],
    dataKey: `${PREFIX}/datasets/${id}/data.json`,
    rows: made.rows.length,
    images: made.images,
    sources: made.sources,
    bytes: { data: Buffer.byteLength(data), images: made.images.length * (variant?.png ?? screenshot).length },
  });
  return { manifest, dir, dataFile };
}

/** The texts of a trajectory's planner prompts, one per text part, and its replies. */
const trajectoryTexts = (manifest: TrajectoryManifest): string[] =>
  manifest.steps.flatMap((step) => [...plannerMessagesAt(manifest, step.index).flatMap(messageTexts), step.planner.raw]);

const messageTexts = (message: ChatMessage): string[] => (typeof message.content === 'string' ? [message.content] : message.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])));

/**
 * What the small planner's tokenizer learns its merges from: the planner's prompts and replies
 * written by the project's own prompt code for every task in data/scienceboard, every step of the
 * reference plan where the policy replays it, the first step's prompt elsewhere.
 */
export function plannerCorpus(screen: Size, library: TaskLibrary = new TaskLibrary()): string[] {
  return library.software().flatMap((software) =>
    library.load(software).flatMap((task) => {
      if (planOf(task, screen) !== undefined) return trajectoryTexts(referenceTrajectory(task, screen));
      return buildPlannerMessages({ instruction: task.instruction, software, history: [], screenshotKey: 'screenshot.png' }).flatMap(messageTexts);
    }),
  );
}
