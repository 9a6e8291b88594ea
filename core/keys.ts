import { ValidationError } from './validation';

/**
 * The one S3 key scheme. Workflows compute keys with these functions and carry only keys; the
 * bytes (screenshots, raw model texts, manifests) live in the bucket.
 *
 *   {prefix}/runs/{run}/{software}/summary.json
 *   {prefix}/runs/{run}/{software}/{task}/{attempt}/manifest.json
 *   {prefix}/runs/{run}/{software}/{task}/{attempt}/steps/{step}/screenshot.png
 *   {prefix}/runs/{run}/{software}/{task}/{attempt}/steps/{step}/decision-{n}.json
 *   {prefix}/runs/{run}/{software}/{task}/{attempt}/verdict.json          the judge's verdict
 *   {prefix}/runs/{run}/{software}/{task}/{attempt}/verdicts/{label}.json  verdicts of other judge plans
 *   {prefix}/runs/{run}/{software}/{task}/{attempt}/judging/{label}/vote-{n}.json   raw judge replies
 *   {prefix}/tasks/{software}/{task}.json
 *   {prefix}/tasks/{software}/sets/{version}/manifest.json   a generated task set and its provenance
 *   {prefix}/tasks/{software}/sets/{version}/{task}.json
 *   {prefix}/reports/{series}/{stamp}-{run}.json (and .md)   evaluation reports, in time order
 *   {prefix}/judge-evals/{id}.json (and .md)                  judge strategy comparisons
 *   {prefix}/stack-checks/{id}.json
 *
 * `step` is zero-padded to four digits so a listing sorts in step order; step 0000 is the
 * screenshot taken right after reset, before any action.
 */

/**
 * What can be one path segment of a key: letters, digits, . _ -, at most 128, no leading
 * punctuation, no dot-dot (no slashes, no spaces). Task ids are held to it, so every valid task
 * has a key.
 */
export const KEY_SEGMENT = /^(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Throws when `value` cannot be one path segment of a key. */
export function keySegment(value: string, what: string): string {
  if (!KEY_SEGMENT.test(value)) {
    throw new Error(`${what} "${value}" cannot be part of a storage key (expected letters, digits, . _ -; at most 128)`);
  }
  return value;
}

/**
 * `relative` as a path below a local folder, or a ValidationError naming `what`: the one guard
 * between S3 and the local disk. Every local path made from a key (the part below a listed
 * prefix) or from a list read from S3 (a checkpoint marker's files, a dataset's image paths) goes
 * through it — `coda fetch`, the GPU worker's checkpoint restore, serving and training's
 * downloads — since a key or a list is whatever was written to the bucket: no `..`, `.` or empty
 * segment, so no absolute path either, and nothing above the folder it is joined to.
 */
export function safeRelative(relative: string, what: string): string {
  if (relative.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) {
    throw new ValidationError(what, [`path "${relative}" would leave its folder (expected /-separated names, none of them empty, . or ..)`]);
  }
  return relative;
}

const join = (prefix: string, ...parts: string[]): string => (prefix === '' ? parts : [prefix, ...parts]).join('/');

export interface AttemptRef {
  readonly run: string;
  readonly software: string;
  readonly task: string;
  readonly attempt: number;
}

/** Everything one run wrote for one software. */
export const runPrefix = (prefix: string, run: string, software: string): string =>
  join(prefix, 'runs', keySegment(run, 'run id'), keySegment(software, 'software'));

export const attemptPrefix = (prefix: string, ref: AttemptRef): string =>
  `${runPrefix(prefix, ref.run, ref.software)}/${keySegment(ref.task, 'task id')}/${ref.attempt}`;

/** Average@k / Pass@k of one run of one software, beside its manifests. */
export const runSummaryKey = (prefix: string, run: string, software: string): string => `${runPrefix(prefix, run, software)}/summary.json`;

export const manifestKey = (prefix: string, ref: AttemptRef): string => `${attemptPrefix(prefix, ref)}/manifest.json`;

const stepDir = (prefix: string, ref: AttemptRef, step: number): string =>
  `${attemptPrefix(prefix, ref)}/steps/${String(step).padStart(4, '0')}`;

export const screenshotKey = (prefix: string, ref: AttemptRef, step: number): string =>
  `${stepDir(prefix, ref, step)}/screenshot.png`;

export const stackCheckKey = (prefix: string, id: string): string =>
  join(prefix, 'stack-checks', `${keySegment(id, 'check id')}.json`);

/** A validated task as the workers read it: {prefix}/tasks/{software}/{task}.json */
export const taskKey = (prefix: string, software: string, taskId: string): string =>
  join(prefix, 'tasks', keySegment(software, 'software'), `${keySegment(taskId, 'task id')}.json`);

/** Raw model texts of one decision (planner and executor replies), per activity attempt. */
export const decisionKey = (prefix: string, ref: AttemptRef, step: number, attempt: number): string =>
  `${stepDir(prefix, ref, step)}/decision-${attempt}.json`;

/**
 * The attempt a manifest key belongs to: the inverse of manifestKey. Throws, naming the key, when
 * it does not follow the scheme.
 */
export function attemptOfManifest(prefix: string, key: string): AttemptRef {
  const head = prefix === '' ? '' : `${prefix}/`;
  const parts = key.startsWith(head) ? key.slice(head.length).split('/') : [];
  const [runs, run, software, task, attempt, file] = parts;
  if (parts.length !== 6 || runs !== 'runs' || file !== 'manifest.json' || !/^(0|[1-9]\d{0,5})$/.test(attempt ?? '')) {
    throw new Error(`"${key}" is not a trajectory manifest key (expected ${head}runs/{run}/{software}/{task}/{attempt}/manifest.json)`);
  }
  const ref = { run: run as string, software: software as string, task: task as string, attempt: Number(attempt) };
  manifestKey(prefix, ref); // every segment is checked
  return ref;
}

/** The label of the verdict the deployment's (or the run's) judge plan writes: verdict.json. */
export const DEFAULT_VERDICT = 'default';

/** A judge's verdict on one attempt: verdict.json for the default label, verdicts/{label}.json for others. */
export const verdictKey = (prefix: string, ref: AttemptRef, label: string = DEFAULT_VERDICT): string =>
  label === DEFAULT_VERDICT ? `${attemptPrefix(prefix, ref)}/verdict.json` : `${attemptPrefix(prefix, ref)}/verdicts/${keySegment(label, 'verdict label')}.json`;

/** The raw reply of one judge vote (vote `index` of the plan, 0-based). */
export const judgeVoteKey = (prefix: string, ref: AttemptRef, label: string, index: number): string =>
  `${attemptPrefix(prefix, ref)}/judging/${keySegment(label, 'verdict label')}/vote-${index}.json`;

/** Everything of one generated task set. */
export const taskSetPrefix = (prefix: string, software: string, version: string): string =>
  join(prefix, 'tasks', keySegment(software, 'software'), 'sets', keySegment(version, 'task set version'));

export const taskSetManifestKey = (prefix: string, software: string, version: string): string =>
  `${taskSetPrefix(prefix, software, version)}/manifest.json`;

export const taskSetTaskKey = (prefix: string, software: string, version: string, taskId: string): string =>
  `${taskSetPrefix(prefix, software, version)}/${keySegment(taskId, 'task id')}.json`;

/** A raw task-generator reply, kept for provenance. */
export const taskSetReplyKey = (prefix: string, software: string, version: string, request: number): string =>
  `${taskSetPrefix(prefix, software, version)}/replies/reply-${request}.json`;

/** The reports of one evaluation series (e.g. the nightly one), listed in time order. */
export const reportSeriesPrefix = (prefix: string, series: string): string => join(prefix, 'reports', keySegment(series, 'report series'));

/**
 * One evaluation report, without its extension (`.json`, `.md`). `stamp` is the report's UTC time
 * as yyyymmddThhmmssZ, so the series lists in time order whatever the run ids are.
 */
export const reportKeyBase = (prefix: string, series: string, stamp: string, run: string): string =>
  `${reportSeriesPrefix(prefix, series)}/${keySegment(stamp, 'report stamp')}-${keySegment(run, 'run id')}`;

/** A judge strategy comparison, without its extension. */
export const judgeEvalKeyBase = (prefix: string, id: string): string => join(prefix, 'judge-evals', keySegment(id, 'judge evaluation id'));

/** yyyymmddThhmmssZ of an ISO time: a sortable key segment. */
export const stampOf = (iso: string): string => `${iso.slice(0, 19).replace(/[-:]/g, '')}Z`;

/** A training dataset (GRPO prompts or SFT rows) and its manifest. */
export const datasetPrefix = (prefix: string, id: string): string => join(prefix, 'datasets', keySegment(id, 'dataset id'));
export const datasetManifestKey = (prefix: string, id: string): string => `${datasetPrefix(prefix, id)}/manifest.json`;

/** A trained planner checkpoint: its manifest (lineage) and files/ below it. */
export const checkpointPrefix = (prefix: string, name: string): string => join(prefix, 'checkpoints', keySegment(name, 'checkpoint name'));
export const checkpointManifestKey = (prefix: string, name: string): string => `${checkpointPrefix(prefix, name)}/manifest.json`;

/** A training job's working state in S3 (intermediate checkpoints, trainer logs), what a retry on another GPU worker resumes from. */
export const trainingJobPrefix = (prefix: string, job: string): string => join(prefix, 'training-jobs', keySegment(job, 'training job id'));
