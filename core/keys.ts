/**
 * The one S3 key scheme. Workflows compute keys with these functions and carry only keys; the
 * bytes (screenshots, raw model texts, manifests) live in the bucket.
 *
 *   {prefix}/runs/{run}/{software}/summary.json
 *   {prefix}/runs/{run}/{software}/{task}/{attempt}/manifest.json
 *   {prefix}/runs/{run}/{software}/{task}/{attempt}/steps/{step}/screenshot.png
 *   {prefix}/runs/{run}/{software}/{task}/{attempt}/steps/{step}/decision-{n}.json
 *   {prefix}/tasks/{software}/{task}.json
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
