import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { ObjectStore } from '../../activities/storage/object-store';
import { attemptOfManifest, decisionKey, manifestKey, runSummaryKey, screenshotKey, verdictKey, type AttemptRef } from '../../core/keys';
import { parseTrajectoryManifest } from '../../apps/manifests';

/**
 * Recorded real trajectories: what real rollouts on real desktops wrote to S3 (manifests, step
 * records, screenshots and their variants, summaries), kept in test/fixtures/trajectories/<name>/ by
 * `npm run record:trajectories -- <name>` (test/support/record-trajectories.ts), and uploaded here
 * under a test file's own run, so that the workflow under test reads them exactly as a live run's.
 * They are the desktops' output, not a double of them: a recording is refused, with the command
 * that refreshes it, as soon as the key scheme or the trajectory manifest it was made under changed.
 */

export const TRAJECTORY_FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'trajectories');

/** The format of recording.json and of the objects/ folder; bump it when either changes. */
export const RECORDING_FORMAT = 'coda.recording/1';

export interface RecordedObject {
  /** The key relative to the run's root, `<prefix>/runs/<run>/`. */
  readonly key: string;
  readonly contentType: string;
  readonly bytes: number;
  readonly sha256: string;
}

export interface Recording {
  readonly format: string;
  readonly name: string;
  /** What was rolled out: the batch input and the scripted models' settings. */
  readonly recipe: Record<string, unknown>;
  /** The commit the recorder ran at (with `+dirty` when the work tree had changes) and the run seed. */
  readonly commit: string;
  readonly seed: number;
  readonly recordedAt: string;
  /** The key scheme the recording was made under (keys of a sample attempt; see keyScheme). */
  readonly keyScheme: Record<string, string>;
  /** Where the live run wrote it: the storage prefix and run the objects' keys and bodies name. */
  readonly prefix: string;
  readonly run: string;
  readonly objects: readonly RecordedObject[];
}

/** The keys core/keys.ts gives a sample attempt under a sample root: a change in the scheme changes them. */
export function keyScheme(): Record<string, string> {
  const ref: AttemptRef = { run: 'RUN', software: 'SOFTWARE', task: 'TASK', attempt: 7 };
  return {
    manifest: manifestKey('PREFIX', ref),
    screenshot: screenshotKey('PREFIX', ref, 3),
    decision: decisionKey('PREFIX', ref, 3, 1),
    verdict: verdictKey('PREFIX', ref, 'LABEL'),
    summary: runSummaryKey('PREFIX', 'RUN', 'SOFTWARE'),
  };
}

export const runRoot = (prefix: string, run: string): string => `${prefix === '' ? '' : `${prefix}/`}runs/${run}/`;

export const recordingDir = (name: string, root = TRAJECTORY_FIXTURES): string => path.join(root, name);

/** The recorder's command, which every refusal names. */
export const refreshCommand = (name: string): string => `npm run record:trajectories -- ${name}`;

export class StaleRecordingError extends Error {
  constructor(name: string, dir: string, why: string) {
    super(`recording "${name}" (${dir}) is stale: ${why}. Refresh it with the recorder: ${refreshCommand(name)}`);
    this.name = 'StaleRecordingError';
  }
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

function filesUnder(dir: string, relative = ''): string[] {
  return readdirSync(path.join(dir, relative), { withFileTypes: true }).flatMap((entry) => {
    const child = relative === '' ? entry.name : `${relative}/${entry.name}`;
    return entry.isDirectory() ? filesUnder(dir, child) : [child];
  });
}

/**
 * Reads a recording and checks it against the code it will be read by: its format, the key scheme,
 * every trajectory manifest parsed as today's and its screenshots' keys, and every object's bytes
 * as the recorder wrote them. Returns the recording and its objects' bytes, keyed as recorded.
 */
export function readRecording(name: string, root = TRAJECTORY_FIXTURES): { recording: Recording; bodies: Map<string, Buffer> } {
  const dir = recordingDir(name, root);
  const stale = (why: string) => new StaleRecordingError(name, dir, why);
  const file = path.join(dir, 'recording.json');
  if (!existsSync(file)) throw stale('it has no recording.json (never recorded here)');
  const recording = JSON.parse(readFileSync(file, 'utf8')) as Recording;
  if (recording.format !== RECORDING_FORMAT) throw stale(`recording.json has format ${JSON.stringify(recording.format)}, this code reads ${RECORDING_FORMAT}`);
  const scheme = keyScheme();
  for (const [what, key] of Object.entries(scheme)) {
    if (recording.keyScheme?.[what] !== key) throw stale(`the key scheme changed: core/keys.ts now gives the ${what} key ${key}, the recording was made when it was ${recording.keyScheme?.[what] ?? 'absent'}`);
  }
  const listed = new Set(recording.objects.map((o) => o.key));
  const present = filesUnder(path.join(dir, 'objects')).sort();
  const extra = present.filter((k) => !listed.has(k));
  if (extra.length > 0) throw stale(`objects/ holds files recording.json does not list: ${extra.slice(0, 3).join(', ')}`);
  const bodies = new Map<string, Buffer>();
  for (const object of recording.objects) {
    const body = existsSync(path.join(dir, 'objects', object.key)) ? readFileSync(path.join(dir, 'objects', object.key)) : undefined;
    if (body === undefined) throw stale(`objects/${object.key} is missing`);
    if (sha256(body) !== object.sha256) throw stale(`objects/${object.key} is not what the recorder wrote (sha256 ${sha256(body)}, recorded ${object.sha256})`);
    bodies.set(object.key, body);
  }
  const recordedRoot = runRoot(recording.prefix, recording.run);
  for (const key of [...bodies.keys()].filter((k) => k.endsWith('/manifest.json'))) {
    const full = `${recordedRoot}${key}`;
    let ref: AttemptRef;
    try {
      ref = attemptOfManifest(recording.prefix, full);
      const manifest = parseTrajectoryManifest(JSON.parse(bodies.get(key)!.toString('utf8')), full);
      const shots = [manifest.initialScreenshotKey, ...manifest.steps.map((s) => s.screenshotKey)];
      for (const [i, shot] of [...new Set(shots)].entries()) {
        if (shot !== screenshotKey(recording.prefix, ref, i)) throw new Error(`screenshot ${i} is ${shot}, core/keys.ts names it ${screenshotKey(recording.prefix, ref, i)}`);
        if (!bodies.has(shot.slice(recordedRoot.length))) throw new Error(`its screenshot ${shot} was not recorded`);
      }
    } catch (err) {
      throw stale(`${key} does not read as today's trajectory manifest: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (manifestKey(recording.prefix, ref) !== full) throw stale(`${key} is not where core/keys.ts puts the manifest of ${JSON.stringify(ref)}`);
  }
  return { recording, bodies };
}

/**
 * The body of a recorded object as the run `run` under `prefix` would have written it: JSON names
 * its run and its keys, which move with it; screenshots are the recorded bytes.
 */
export function relocated(recording: Recording, object: RecordedObject, body: Buffer, prefix: string, run: string): Buffer {
  if (!object.contentType.startsWith('application/json') || (prefix === recording.prefix && run === recording.run)) return body;
  const text = body
    .toString('utf8')
    .replaceAll(runRoot(recording.prefix, recording.run), runRoot(prefix, run))
    .replaceAll(JSON.stringify(recording.run), JSON.stringify(run));
  return Buffer.from(text, 'utf8');
}

/**
 * Uploads recording `name` as the run `run` under `prefix` (the test file's config's storage
 * prefix and its own run id): every object under that run's keys, as the live run wrote them.
 * Returns the keys written.
 */
export async function loadRecording(store: ObjectStore, name: string, target: { prefix: string; run: string }, root = TRAJECTORY_FIXTURES): Promise<string[]> {
  const { recording, bodies } = readRecording(name, root);
  const base = runRoot(target.prefix, target.run);
  const written: string[] = [];
  for (const object of recording.objects) {
    await store.put(`${base}${object.key}`, relocated(recording, object, bodies.get(object.key)!, target.prefix, target.run), object.contentType);
    written.push(`${base}${object.key}`);
  }
  return written;
}
