import { Context } from '@temporalio/activity';
import { verdictFileSchema } from '../../core/judge/verdict-file';
import { attemptOfManifest, checkpointManifestKey, datasetManifestKey, datasetPrefix, DEFAULT_VERDICT, verdictKey } from '../../core/keys';
import { checkpointManifestSchema, DATASET_SCHEMA, datasetManifestSchema, grpoRows, sftRows, type DatasetImage, type DatasetManifest, type RoundTaskSet } from '../../core/training';
import type { Size } from '../../core/images';
import { ValidationError } from '../../core/validation';
import type { TrajectoryManifest } from '../../core/trajectory';
import { finalOnBadInput } from '../bad-input';
import { readRunManifests } from '../storage/trajectory';
import type { ObjectStore } from '../storage/object-store';

export interface DatasetRequest {
  /** The dataset's id (a key segment): building the same id again returns it as it is (refused when it holds other runs' or software's trajectories). */
  readonly id: string;
  readonly kind: 'grpo' | 'sft';
  /** The runs whose judged trajectories feed it, with the verdict label to read (default: verdict.json). */
  readonly sources: ReadonlyArray<{ readonly run: string; readonly software: string; readonly label?: string }>;
  /** SFT: at most this many successful trajectories per software, so one application cannot dominate. */
  readonly perSoftwareCap?: number;
}

export interface DatasetSummary {
  readonly key: string;
  readonly rows: number;
  readonly trajectories: number;
  readonly bySoftware: Readonly<Record<string, { readonly trajectories: number; readonly rows: number }>>;
  readonly bytes: DatasetManifest['bytes'];
  readonly existed: boolean;
}

const summaryOf = (key: string, manifest: DatasetManifest, existed: boolean): DatasetSummary => {
  const bySoftware: Record<string, { trajectories: number; rows: number }> = {};
  for (const source of manifest.sources) {
    const entry = (bySoftware[source.software] ??= { trajectories: 0, rows: 0 });
    entry.trajectories += 1;
    entry.rows += source.steps.length;
  }
  return { key, rows: manifest.rows, trajectories: manifest.sources.length, bySoftware, bytes: manifest.bytes, existed };
};

/**
 * An existing dataset is returned again only for the request that built it: one of another kind,
 * or with trajectories of a run or software the request does not name (two specializations of
 * different software given the same run name, whose rounds name their datasets `<run>-r<n>`),
 * is refused, naming both, instead of training one software's planner on another's data.
 */
function checkSameDataset(prefix: string, request: DatasetRequest, manifest: DatasetManifest, uri: string): void {
  const asked = new Set(request.sources.map((s) => `${s.run}/${s.software}`));
  const foreign = [...new Set(manifest.sources.map((s) => `${attemptOfManifest(prefix, s.manifestKey).run}/${s.software}`))].filter((source) => !asked.has(source));
  const problems = [
    ...(manifest.kind === request.kind ? [] : [`kind: dataset "${request.id}" exists as ${manifest.kind} (${uri}), not ${request.kind}`]),
    ...(foreign.length === 0 ? [] : [`id: dataset "${request.id}" exists (${uri}) with trajectories of ${foreign.join(', ')}, which this request (${[...asked].join(', ')}) does not name; give this run another name`]),
  ];
  if (problems.length > 0) throw new ValidationError('dataset request', problems);
}

interface DatasetDeps {
  readonly store: ObjectStore;
  readonly prefix: string;
  readonly defaultScreen: Size;
  /** The box the planner is served screenshots in (models.planner.image): rows use those variants, stored by the hosts at capture. */
  readonly plannerImage?: Size;
}

interface Judged {
  readonly manifest: TrajectoryManifest;
  readonly manifestKey: string;
  readonly verdictKey: string;
  readonly positiveSteps: number[];
  readonly success: boolean;
}

/** The manifest key of a checkpoint, checked to exist (a ValidationError names a missing one). */
async function checkpointKey({ store, prefix }: DatasetDeps, name: string): Promise<string> {
  return finalOnBadInput(async () => {
    const key = checkpointManifestKey(prefix, name);
    if (!(await store.exists(key))) throw new ValidationError('checkpoint', [`no checkpoint "${name}" (${store.uri(key)} does not exist)`]);
    checkpointManifestSchema.parse(await store.getJson(key));
    return key;
  });
}

/** The specialization rounds' task sets a checkpoint records (none for one that records none). */
async function checkpointTaskSets({ store }: DatasetDeps, checkpointKey: string): Promise<RoundTaskSet[]> {
  return finalOnBadInput(async () => checkpointManifestSchema.parse(await store.getJson(checkpointKey)).taskSets ?? []);
}

/** Every trajectory of the request's sources that has a verdict of the source's label. */
async function judgedTrajectories({ store, prefix }: DatasetDeps, request: DatasetRequest): Promise<Judged[]> {
  const judged: Judged[] = [];
  for (const source of request.sources) {
    Context.current().heartbeat({ source: `${source.run}/${source.software}` });
    for (const { key: mKey, manifest } of await readRunManifests(store, prefix, source.run, source.software)) {
      const vKey = verdictKey(prefix, attemptOfManifest(prefix, mKey), source.label ?? DEFAULT_VERDICT);
      const raw = await store.tryGet(vKey);
      if (raw === undefined) continue;
      const verdict = verdictFileSchema.parse(JSON.parse(raw.toString('utf8')));
      judged.push({ manifest, manifestKey: mKey, verdictKey: vKey, positiveSteps: verdict.positiveSteps, success: verdict.success });
    }
  }
  return judged;
}

/** GRPO: every trajectory with a positive step. SFT: the successful ones, first attempts first, at most `perSoftwareCap` per software. */
function choose(request: DatasetRequest, judged: readonly Judged[]): Judged[] {
  const positive = judged.filter((j) => j.positiveSteps.length > 0);
  if (request.kind !== 'sft') return positive;
  const cap = request.perSoftwareCap ?? Number.POSITIVE_INFINITY;
  const ordered = positive.filter((j) => j.success).sort((a, b) => a.manifest.attempt - b.manifest.attempt || a.manifestKey.localeCompare(b.manifestKey));
  const taken = new Map<string, number>();
  return ordered.filter((j) => {
    const n = taken.get(j.manifest.software) ?? 0;
    taken.set(j.manifest.software, n + 1);
    return n < cap;
  });
}

/** The rows of the chosen trajectories, the images they name and each trajectory's steps used. */
function rowsOf(deps: DatasetDeps, kind: DatasetRequest['kind'], chosen: readonly Judged[]): { lines: string[]; images: Map<string, DatasetImage>; sources: DatasetManifest['sources'] } {
  const images = new Map<string, DatasetImage>();
  const sources: DatasetManifest['sources'] = [];
  const lines: string[] = [];
  for (const item of chosen) {
    const screen = item.manifest.desktop.screen ?? deps.defaultScreen;
    const view = { screen, ...(deps.plannerImage === undefined ? {} : { box: deps.plannerImage }) };
    const made = kind === 'grpo' ? grpoRows(item.manifest, item.manifestKey, item.positiveSteps, view) : sftRows(item.manifest, item.positiveSteps, view);
    if (made.length === 0) continue;
    for (const { row, images: used } of made) {
      lines.push(JSON.stringify(row));
      for (const image of used) images.set(image.key, image);
    }
    sources.push({ manifestKey: item.manifestKey, verdictKey: item.verdictKey, software: item.manifest.software, steps: made.map((m) => m.step) });
  }
  return { lines, images, sources };
}

async function buildDataset(deps: DatasetDeps, request: DatasetRequest): Promise<DatasetSummary> {
  const { store, prefix } = deps;
  const key = datasetManifestKey(prefix, request.id);
  const existing = await store.tryGet(key);
  if (existing !== undefined) {
    const manifest = datasetManifestSchema.parse(JSON.parse(existing.toString('utf8')));
    return finalOnBadInput(() => {
      checkSameDataset(prefix, request, manifest, store.uri(key));
      return summaryOf(key, manifest, true);
    });
  }
  const { lines, images, sources } = rowsOf(deps, request.kind, choose(request, await judgedTrajectories(deps, request)));
  const dataKey = `${datasetPrefix(prefix, request.id)}/${request.kind === 'grpo' ? 'prompts.jsonl' : 'data.json'}`;
  const data = request.kind === 'grpo' ? lines.join('\n') + (lines.length > 0 ? '\n' : '') : `[\n${lines.join(',\n')}\n]\n`;
  await store.put(dataKey, data, request.kind === 'grpo' ? 'application/jsonl' : 'application/json');
  const missing = (await Promise.all([...images.keys()].map(async (k) => ((await store.exists(k)) ? [] : [k])))).flat();
  if (missing.length > 0) throw new ValidationError('dataset images', missing.slice(0, 5).map((k) => `${store.uri(k)} does not exist (the planner's screenshots are stored at capture time)`));
  const sizes = await Promise.all([...images.keys()].map((k) => store.size(k)));
  const manifest: DatasetManifest = datasetManifestSchema.parse({
    schema: DATASET_SCHEMA,
    id: request.id,
    kind: request.kind,
    createdAt: new Date().toISOString(),
    software: [...new Set(request.sources.map((s) => s.software))],
    dataKey,
    rows: lines.length,
    images: [...images.values()],
    sources,
    bytes: { data: Buffer.byteLength(data), images: sizes.reduce((a, b) => a + b, 0) },
  });
  await store.putJson(key, manifest);
  return summaryOf(key, manifest, false);
}

/**
 * Dataset activities (orchestrator queue): training data from judged trajectories, in S3 for the
 * GPU worker (core/training.ts). GRPO takes every positive step of every judged trajectory (the
 * steps before a first error count too); SFT takes the trajectories the judge passed, at most
 * `perSoftwareCap` per software, spread over tasks (first attempts of every task first).
 * Trajectories without a verdict are left out. The rows are written first and the manifest last.
 * Rows refer to the screenshots as the planner is served them (their variant for its box); a
 * missing variant fails the build, naming it, rather than train on another size.
 */
export function createDatasetActivities(deps: DatasetDeps) {
  return {
    checkpointKey: (name: string) => checkpointKey(deps, name),
    checkpointTaskSets: (key: string) => checkpointTaskSets(deps, key),
    buildDataset: (request: DatasetRequest) => buildDataset(deps, request),
  };
}

export type DatasetActivities = ReturnType<typeof createDatasetActivities>;
