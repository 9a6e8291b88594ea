import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { ObjectStore } from '../../activities/storage/object-store';
import type { BatchResult } from '../../workflows/rollout/batch';
import { startHarness, runSeed } from './harness';
import { stopTestStack } from '../stack';
import { keyScheme, readRecording, RECORDING_FORMAT, recordingDir, runRoot, TRAJECTORY_FIXTURES, type RecordedObject, type Recording } from './recorded';

/**
 * The recorder of test/fixtures/trajectories/: real rollout batches on real KAlgebra desktops with
 * the scripted models, on a stack of its own, and every object the live run wrote under the run's
 * keys copied into the fixture folder with a recording.json (what, by which commit and seed).
 *
 *   npm run record:trajectories -- judging     (or: all)
 *
 * Refresh a recording whenever the loader (test/support/recorded.ts) calls it stale, and commit it.
 */

export interface Recipe {
  /** The rolloutBatch input, without its run. */
  readonly batch: { readonly software: string; readonly attempts: number; readonly taskIds: readonly string[] };
  /** The scripted planner's rate of wrong steps (dev.scriptedModels.errorRate), so that some rollouts fail. */
  readonly errorRate: number;
  readonly desktops: number;
}

export const RECIPES: Record<string, Recipe> = {
  // test/judging/judging.test.ts: 10 trajectories of 5 tasks, some passed and some failed.
  judging: { batch: { software: 'KAlgebra', attempts: 2, taskIds: ['A-01', 'C-01', 'C-03', 'B-01', 'C-08'] }, errorRate: 0.4, desktops: 2 },
};

/** The run id a recording is made under: its name, which the loader replaces with the test's own run. */
export const recordedRun = (name: string): string => `recorded-${name}`;

function commit(): string {
  const repo = path.resolve(TRAJECTORY_FIXTURES, '..', '..', '..');
  const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
  const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: repo, encoding: 'utf8' }).trim() !== '';
  return dirty ? `${head}+dirty` : head;
}

/** Copies every object under the run's root into `dir`/objects, and returns them as recording.json lists them. */
async function copyRun(store: ObjectStore, root: string, dir: string): Promise<RecordedObject[]> {
  const objects: RecordedObject[] = [];
  for (const full of (await store.list(root)).sort()) {
    const streamed = await store.stream(full);
    if (streamed === undefined) throw new Error(`${full} vanished while it was recorded`);
    const chunks: Buffer[] = [];
    for await (const chunk of streamed.body) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const key = full.slice(root.length);
    mkdirSync(path.dirname(path.join(dir, 'objects', key)), { recursive: true });
    writeFileSync(path.join(dir, 'objects', key), body);
    objects.push({ key, contentType: streamed.contentType ?? 'application/octet-stream', bytes: body.length, sha256: createHash('sha256').update(body).digest('hex') });
  }
  return objects;
}

/** Rolls out `name`'s recipe on real desktops and writes the recording; returns it. */
export async function record(name: string, root = TRAJECTORY_FIXTURES): Promise<Recording> {
  const recipe = RECIPES[name];
  if (recipe === undefined) throw new Error(`no recipe "${name}": expected one of ${Object.keys(RECIPES).join(', ')}`);
  const run = recordedRun(name);
  const h = await startHarness({ name: `record-${name}`, desktops: recipe.desktops, displayFrom: 1300, errorRate: recipe.errorRate });
  try {
    await h.startVmHost();
    const batch = await h.execute<BatchResult>('rolloutBatch', `batch-${run}-${recipe.batch.software}`, { run, ...recipe.batch });
    const expected = recipe.batch.attempts * recipe.batch.taskIds.length;
    if (batch.completed !== expected) throw new Error(`the batch completed ${batch.completed} of ${expected} rollouts: nothing recorded`);
    const dir = recordingDir(name, root);
    rmSync(dir, { recursive: true, force: true });
    const prefix = h.config.storage.prefix;
    const objects = await copyRun(h.stack.store, runRoot(prefix, run), dir);
    const recording: Recording = {
      format: RECORDING_FORMAT,
      name,
      recipe: { ...recipe },
      commit: commit(),
      seed: runSeed(),
      recordedAt: new Date().toISOString(),
      keyScheme: keyScheme(),
      prefix,
      run,
      objects,
    };
    writeFileSync(path.join(dir, 'recording.json'), `${JSON.stringify(recording, null, 2)}\n`);
    // What the tests will load: read back and checked as they check it.
    readRecording(name, root);
    return recording;
  } finally {
    await h.stop();
  }
}

async function main(names: string[]): Promise<void> {
  const chosen = names.length === 1 && names[0] === 'all' ? Object.keys(RECIPES) : names;
  if (chosen.length === 0) throw new Error(`usage: npm run record:trajectories -- <name>... | all (names: ${Object.keys(RECIPES).join(', ')})`);
  try {
    for (const name of chosen) {
      const recording = await record(name);
      const bytes = recording.objects.reduce((a, o) => a + o.bytes, 0);
      console.log(`recorded ${name}: ${recording.objects.length} objects, ${(bytes / 1e6).toFixed(2)} MB, commit ${recording.commit}, seed ${recording.seed}`);
    }
  } finally {
    await stopTestStack();
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  });
}
