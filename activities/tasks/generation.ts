import { Context } from '@temporalio/activity';
import { defaultStartState, generatedTask } from '../../core/generated-task';
import { verdictFileSchema } from '../../core/judge/verdict-file';
import { attemptOfManifest, runPrefix, taskSetManifestKey, taskSetReplyKey, taskSetTaskKey } from '../../core/keys';
import { buildTaskGeneratorMessages, readTaskGeneratorReply, solved, TASK_GENERATOR_PROMPT_VERSION, type EarlierTask } from '../../core/prompts/task-generator';
import { dedupeInstructions, splitRepeats, type Duplicate, type KnownInstruction } from '../../core/task-dedupe';
import { TASK_SET_SCHEMA, type TaskSetManifest } from '../../core/task-set';
import type { RoundTaskSet } from '../../core/training';
import { ValidationError } from '../../core/validation';
import type { ModelGateway } from '../models/gateway';
import type { ObjectStore } from '../storage/object-store';
import type { TaskLibrary } from './library';
import { APPS } from '../../apps/index';
import { taskSetManifestSchema } from '../../apps/manifests';

/** A task set of an earlier round (core/training.ts RoundTaskSet); skipped when absent if `ifExists`. */
export type EarlierTaskSet = RoundTaskSet & { readonly ifExists?: boolean };

/** What to generate: the task generation workflow's checked input, its settings from temporal.yaml's taskGeneration. */
export interface TaskSetRequest {
  readonly software: string;
  readonly version: string;
  readonly count: number;
  readonly seedTaskIds?: readonly string[];
  readonly earlier?: readonly EarlierTaskSet[];
  readonly tasksPerRequest: number;
  readonly maxRequests: number;
  readonly similarityThreshold: number;
  readonly maxSteps: number;
}

/** What the workflow keeps of a set: where it is and its counts (the tasks stay in S3). */
export interface TaskSetSummary {
  readonly manifestKey: string;
  readonly software: string;
  readonly version: string;
  readonly counts: TaskSetManifest['counts'];
  /** True when the set existed already and nothing was generated. */
  readonly existed: boolean;
}

/** The most earlier instructions quoted back to the generator as "do not repeat". */
const AVOID_LIMIT = 60;
/** The most tasks of earlier rounds shown to the generator (the latest); deduplication uses them all. */
const EARLIER_LIMIT = 90;

/** The tasks of the earlier rounds' sets, each with its judged attempts, and their record for the manifest. */
interface EarlierRounds {
  readonly tasks: Array<EarlierTask & { set: string; id: string }>;
  readonly record: TaskSetManifest['earlier'];
}

/** The tasks of the earlier rounds' sets, each with the attempts the judge gave a verdict on and approved. */
async function readEarlierRounds(
  store: ObjectStore,
  prefix: string,
  software: string,
  sets: readonly EarlierTaskSet[],
): Promise<EarlierRounds> {
  const tasks: Array<EarlierTask & { set: string; id: string }> = [];
  const record: Array<TaskSetManifest['earlier'][number]> = [];
  const problems: string[] = [];
  for (const [i, earlier] of sets.entries()) {
    const raw = await store.tryGet(taskSetManifestKey(prefix, software, earlier.set));
    if (raw === undefined) {
      if (earlier.ifExists !== true) problems.push(`earlier[${i}].set: no generated ${software} task set "${earlier.set}"`);
      continue;
    }
    const manifest = taskSetManifestSchema.parse(JSON.parse(raw.toString('utf8')));
    // Verdicts of the default label (what the round trained on): any approved attempt solves the task.
    const attempts = new Map<string, { judged: number; approved: number }>();
    if (earlier.rollouts !== undefined) {
      const keys = (await store.list(`${runPrefix(prefix, earlier.rollouts, software)}/`)).filter((k) => k.endsWith('/verdict.json'));
      for (const key of keys) {
        const ref = attemptOfManifest(prefix, key.replace(/\/verdict\.json$/, '/manifest.json'));
        const verdict = verdictFileSchema.parse(await store.getJson(key));
        const counted = attempts.get(ref.task) ?? { judged: 0, approved: 0 };
        attempts.set(ref.task, { judged: counted.judged + 1, approved: counted.approved + (verdict.success ? 1 : 0) });
      }
    }
    const these = manifest.tasks.map((t) => ({ set: earlier.set, id: t.id, round: earlier.round, instruction: t.instruction, ...(attempts.has(t.id) ? { attempts: attempts.get(t.id)! } : {}) }));
    tasks.push(...these);
    record.push({
      set: earlier.set,
      round: earlier.round,
      ...(earlier.rollouts === undefined ? {} : { rollouts: earlier.rollouts }),
      tasks: these.length,
      judged: these.filter((t) => solved(t) !== undefined).length,
      solved: these.filter((t) => solved(t) === true).length,
    });
  }
  if (problems.length > 0) throw new ValidationError('task generation input', problems);
  return { tasks, record };
}

type GenerationDeps = { library: TaskLibrary; store: ObjectStore; prefix: string; gateway: ModelGateway };

/** What the generator's replies gave: the tasks kept, what was dropped and why, the replies' keys, the model that wrote them. */
interface Asked {
  readonly kept: KnownInstruction[];
  readonly duplicates: Duplicate[];
  readonly invalid: string[];
  readonly replies: string[];
  overLimit: number;
  model: string;
  baseUrl: string;
}

/**
 * Requests to the task-generator model until `count` new tasks are kept or `maxRequests` were made;
 * each reply stored, read (damaged JSON repaired, unusable items and replies recorded with their
 * reason) and deduplicated against `known` and the tasks kept so far.
 */
async function askGenerator(deps: GenerationDeps, request: TaskSetRequest, seeds: ReturnType<TaskLibrary['load']>, earlier: EarlierRounds, known: readonly KnownInstruction[]): Promise<Asked> {
  const asked: Asked = { kept: [], duplicates: [], invalid: [], replies: [], overLimit: 0, model: '', baseUrl: '' };
  const { kept } = asked;
  const shown = earlier.tasks.slice(-EARLIER_LIMIT);
  for (let n = 1; n <= request.maxRequests && kept.length < request.count; n++) {
    Context.current().heartbeat({ request: n, kept: kept.length });
    const messages = buildTaskGeneratorMessages({
      software: request.software,
      seeds: seeds.map((seed) => ({ id: seed.id, instruction: seed.instruction })),
      count: Math.min(request.tasksPerRequest, request.count - kept.length),
      maxSteps: request.maxSteps,
      avoid: kept.slice(-AVOID_LIMIT).map((k) => k.instruction),
      earlier: shown.map(({ round, instruction, attempts }) => ({ round, instruction, ...(attempts === undefined ? {} : { attempts }) })),
      earlierTotal: earlier.tasks.length,
    });
    // A seed per request: a sampling generator (temperature > 0) asked again after a reply that gave
    // nothing new writes another reply, and the set can still be reproduced (vLLM honours the seed).
    const completion = await deps.gateway.complete('taskGenerator', messages, { maxTokens: 8192, seed: n });
    asked.model = completion.model;
    asked.baseUrl = completion.baseUrl;
    const text = completion.texts[0] ?? '';
    const replyKey = taskSetReplyKey(deps.prefix, request.software, request.version, n);
    await deps.store.putJson(replyKey, { request: n, seed: n, model: completion.model, latencyMs: completion.latencyMs, usage: completion.usage, text });
    asked.replies.push(replyKey);
    const reply = readTaskGeneratorReply(text);
    if (!reply.ok) {
      asked.invalid.push(`reply ${n}: ${reply.reason}`);
      continue;
    }
    asked.invalid.push(...reply.invalid.map((reason) => `reply ${n}: ${reason}`));
    const candidates = reply.instructions.map((instruction, i) => ({ name: `reply ${n} item ${i + 1}`, instruction }));
    const deduped = dedupeInstructions(candidates, [...known, ...kept], request.similarityThreshold);
    asked.duplicates.push(...deduped.duplicates);
    for (const task of deduped.kept) {
      if (kept.length < request.count) kept.push(task);
      else asked.overLimit += 1;
    }
  }
  return asked;
}

/** The kept instructions as runnable tasks G-001, G-002, ... starting from the seeds' launch steps, each written to S3. */
function writeTasks(deps: GenerationDeps, request: TaskSetRequest, kept: readonly KnownInstruction[], start: NonNullable<ReturnType<typeof defaultStartState>>, provenance: { seedTaskIds: string[]; model: string }) {
  return Promise.all(
    kept.map(async (item, i) => {
      const id = `G-${String(i + 1).padStart(3, '0')}`;
      const task = generatedTask(APPS, {
        id,
        software: request.software,
        instruction: item.instruction,
        maxSteps: request.maxSteps,
        start,
        provenance: { set: request.version, seedTaskIds: provenance.seedTaskIds, model: provenance.model, promptVersion: TASK_GENERATOR_PROMPT_VERSION },
      });
      const key = taskSetTaskKey(deps.prefix, request.software, request.version, id);
      const { id: _id, ...file } = task;
      await deps.store.putJson(key, file);
      return { id, instruction: item.instruction, maxSteps: request.maxSteps, key };
    }),
  );
}

/**
 * Generates a versioned task set: requests to the task-generator model until `count` new tasks are
 * kept or `maxRequests` were made; each reply is read (damaged JSON repaired, unusable items and
 * replies recorded with their reason), deduplicated against the tasks of the earlier rounds' sets
 * (which the prompt shows, solved or not), the seeds and the tasks kept so far, and the survivors
 * become runnable tasks starting from the seeds' launch steps. The tasks are
 * written first and the manifest last: a version with a manifest is complete and is never
 * generated again (the model is not paid twice).
 */
export async function generateTaskSet(deps: GenerationDeps, request: TaskSetRequest): Promise<TaskSetSummary> {
  const { store, prefix } = deps;
  const manifestKey = taskSetManifestKey(prefix, request.software, request.version);
  const existing = await store.tryGet(manifestKey);
  if (existing !== undefined) {
    const manifest = taskSetManifestSchema.parse(JSON.parse(existing.toString('utf8')));
    return { manifestKey, software: manifest.software, version: manifest.version, counts: manifest.counts, existed: true };
  }

  const seeds = deps.library.load(request.software, request.seedTaskIds);
  const start = defaultStartState(seeds);
  if (start === undefined) throw new ValidationError('task generation input', [`seedTaskIds: no seed task of ${request.software} launches the app, so generated tasks would have no start state`]);
  const fromSeed = seeds.find((seed) => seed.initialize === start.initialize)?.id ?? seeds[0]!.id;
  if (request.earlier?.some((e) => e.set === request.version)) throw new ValidationError('task generation input', [`earlier: the set "${request.version}" cannot be an earlier round of itself`]);
  const earlier = await readEarlierRounds(store, prefix, request.software, request.earlier ?? []);
  // Earlier rounds first: a candidate as like an earlier task as a seed is recorded as a repeat.
  const known: KnownInstruction[] = [
    ...earlier.tasks.map((t) => ({ name: `${t.set} ${t.id}`, instruction: t.instruction, earlier: { set: t.set, round: t.round, task: t.id } })),
    ...seeds.map((seed) => ({ name: seed.id, instruction: seed.instruction })),
  ];
  const asked = await askGenerator(deps, request, seeds, earlier, known);

  const provenance = {
    seedTaskIds: seeds.map((seed) => seed.id),
    model: asked.model || 'none',
    baseUrl: asked.baseUrl || 'none',
    promptVersion: TASK_GENERATOR_PROMPT_VERSION,
    temperature: deps.gateway.temperatureOf('taskGenerator'),
  };
  const tasks = await writeTasks(deps, request, asked.kept, start, provenance);
  const dropped = splitRepeats(asked.duplicates, known);
  const counts = { requests: asked.replies.length, kept: tasks.length, duplicates: dropped.duplicates.length, invalid: asked.invalid.length, overLimit: asked.overLimit, repeats: dropped.repeats.length };
  const manifest: TaskSetManifest = taskSetManifestSchema.parse({
    schema: TASK_SET_SCHEMA,
    software: request.software,
    version: request.version,
    createdAt: new Date().toISOString(),
    provenance,
    start: { fromSeed, initialize: start.initialize },
    counts,
    earlier: earlier.record,
    tasks,
    duplicates: dropped.duplicates,
    repeats: dropped.repeats,
    invalid: asked.invalid,
    replies: asked.replies,
  });
  await store.putJson(manifestKey, manifest);
  return { manifestKey, software: request.software, version: request.version, counts, existed: false };
}
