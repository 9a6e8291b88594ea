import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { TrainingConfig } from '../../config/schema';
import { datasetManifestSchema, DATASET_SCHEMA } from '../../core/training';
import type { PreparedDataset } from '../../activities/training/trainer-inputs';
import { artifactKey, cacheRoot, cachedArtifact, ENTRY_FILE, type Artifact } from '../../io/artifact-cache';
import { modelInputs, sftInputs, trainersVenv } from '../../infra/small-planner/artifacts';

/**
 * The artifact cache (io/artifact-cache.ts, issue 43 item 2) and the small planner's keys
 * (infra/small-planner/artifacts.ts): a key changes with each thing an artifact is built from and
 * not with where its inputs lie; two processes asking at once build once; what a crashed builder
 * left (its lock, its temporary folder) and an entry that is incomplete or changed are never
 * served: the entry is built again. No trainer runs here: the builders write files.
 */

const CACHE = path.resolve(__dirname, '..', '..', 'io', 'artifact-cache.js');

/** A node process that asks the cache for `kind` with inputs `{ n: 1 }`, its builder taking `buildMs`, logging its pid to `log` and, when `crash`, killing itself mid-build; prints the artifact as JSON. */
function child(root: string, log: string, buildMs: number, crash = false): Promise<{ code: number | null; out: string; err: string }> {
  const script = `
    const { cachedArtifact } = require(${JSON.stringify(CACHE)});
    const fs = require('node:fs');
    const build = async (dir) => {
      fs.appendFileSync(${JSON.stringify(log)}, process.pid + '\\n');
      fs.writeFileSync(dir + '/half', 'written before the pause');
      await new Promise((r) => setTimeout(r, ${buildMs}));
      if (${crash}) process.kill(process.pid, 'SIGKILL');
      fs.writeFileSync(dir + '/weights', 'built by ' + process.pid);
      return { by: process.pid };
    };
    cachedArtifact({ kind: 'test', inputs: { n: 1 }, build }, { root: ${JSON.stringify(root)}, pollMs: 50, log: (l) => console.error(l) })
      .then((a) => console.log(JSON.stringify(a)), (e) => { console.error(e); process.exit(1); });`;
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let [out, err] = ['', ''];
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('close', (code) => resolve({ code, out, err }));
  });
}

/** A builder for the tests in this process: writes one file, counts its calls. */
function counted(): { calls: number; build: (dir: string) => Promise<{ by: string }> } {
  const c = {
    calls: 0,
    build: async (dir: string) => {
      c.calls += 1;
      writeFileSync(path.join(dir, 'weights'), 'here');
      return { by: 'this process' };
    },
  };
  return c;
}

describe('the artifact cache: entries keyed by what they are built from, published whole, built once', () => {
  let dir: string;
  let root: string;
  const lines: string[] = [];
  const options = (): { root: string; pollMs: number; log: (l: string) => void } => ({ root, pollMs: 50, log: (l) => lines.push(l) });
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'coda-cache-test-'));
    root = path.join(dir, 'cache');
    lines.length = 0;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('lives in CODA_CACHE_DIR, else coda in XDG_CACHE_HOME (when absolute), else ~/.cache/coda', () => {
    assert.equal(cacheRoot({ CODA_CACHE_DIR: '/var/cache/mine', XDG_CACHE_HOME: '/x' }), '/var/cache/mine');
    assert.equal(cacheRoot({ XDG_CACHE_HOME: '/x' }), '/x/coda');
    assert.equal(cacheRoot({ XDG_CACHE_HOME: 'relative', HOME: '/home/ci' }).endsWith(path.join('.cache', 'coda')), true);
  });

  it('serves a built entry again without building, and rebuilds one whose file changed, one with a file added and one without its record', async () => {
    const b = counted();
    const first = await cachedArtifact({ kind: 'test', inputs: { n: 1 }, build: b.build }, options());
    const again = await cachedArtifact({ kind: 'test', inputs: { n: 1 }, build: b.build }, options());
    assert.deepEqual([first.built, again.built, b.calls, again.dir], [true, false, 1, first.dir]);
    assert.deepEqual(again.record.info, { by: 'this process' });
    const rebuiltAfter = async (damage: () => void, reason: RegExp): Promise<void> => {
      damage();
      const served: Artifact<unknown> = await cachedArtifact({ kind: 'test', inputs: { n: 1 }, build: b.build }, options());
      assert.equal(served.built, true, `rebuilt after ${reason}`);
      assert.equal(readFileSync(path.join(served.dir, 'weights'), 'utf8'), 'here');
      assert.match(lines.at(-1) ?? '', reason);
    };
    await rebuiltAfter(() => writeFileSync(path.join(first.dir, 'weights'), 'a trainer wrote here'), /weights changed after the entry was published; rebuilding it/);
    await rebuiltAfter(() => writeFileSync(path.join(first.dir, 'extra'), 'x'), /extra was added after the entry was published/);
    await rebuiltAfter(() => rmSync(path.join(first.dir, 'weights')), /weights is missing/);
    await rebuiltAfter(() => rmSync(path.join(first.dir, ENTRY_FILE)), /no entry\.json \(a build that did not finish\)/);
    assert.equal(b.calls, 5);
    assert.deepEqual(readdirSync(path.dirname(first.dir)).sort(), [path.basename(first.dir)], 'no temporary folder, old entry or lock left');
  });

  it('a builder that fails leaves no entry, no temporary folder and no lock', async () => {
    const failing = async (d: string): Promise<void> => {
      writeFileSync(path.join(d, 'half'), 'x');
      throw new Error('the trainer exited with 1');
    };
    await assert.rejects(cachedArtifact({ kind: 'test', inputs: { n: 1 }, build: failing }, options()), /the trainer exited with 1/);
    assert.deepEqual(readdirSync(path.join(root, 'artifacts', 'test')), []);
  });

  it('two processes asking at once: one builds, the other waits and is served the same entry', async () => {
    const log = path.join(dir, 'builds.log');
    const [a, b] = await Promise.all([child(root, log, 1_500), child(root, log, 1_500)]);
    assert.deepEqual([a.code, b.code], [0, 0], a.err + b.err);
    const [x, y] = [JSON.parse(a.out) as Artifact<{ by: number }>, JSON.parse(b.out) as Artifact<{ by: number }>];
    assert.equal(readFileSync(log, 'utf8').trim().split('\n').length, 1, 'the builder ran once');
    assert.deepEqual([x.built, y.built].sort(), [false, true]);
    assert.equal(x.dir, y.dir);
    assert.equal(x.record.info.by, y.record.info.by);
    assert.match((x.built ? b : a).err, /waiting for the process building it \(pid \d+\)/);
    assert.equal(readFileSync(path.join(x.dir, 'weights'), 'utf8'), `built by ${x.record.info.by}`);
  });

  it("a builder killed mid-build: its lock and half-written folder are not served, the next asker takes the lock over and builds", async () => {
    const log = path.join(dir, 'builds.log');
    const crashed = await child(root, log, 100, true);
    assert.equal(crashed.code, null, 'killed');
    const kindDir = path.join(root, 'artifacts', 'test');
    const left = readdirSync(kindDir);
    assert.ok(left.some((n) => n.endsWith('.lock')) && left.some((n) => n.startsWith('.tmp-')), `the dead builder's lock and folder: ${left.join(', ')}`);
    const b = counted();
    const served = await cachedArtifact({ kind: 'test', inputs: { n: 1 }, build: b.build }, options());
    assert.deepEqual([served.built, b.calls], [true, 1]);
    assert.equal(existsSync(path.join(served.dir, 'half')), false, "nothing of the dead builder's folder");
    assert.deepEqual(readdirSync(kindDir), [path.basename(served.dir)]);
  });

  it('a lock naming a pid that is now another process (its start time differs) is taken over; a live builder\'s lock is waited for', async () => {
    const kindDir = path.join(root, 'artifacts', 'test');
    mkdirSync(kindDir, { recursive: true });
    const key = artifactKey('test', { n: 1 });
    writeFileSync(path.join(kindDir, `${key}.lock`), `1 999999999999\n`);
    const b = counted();
    assert.equal((await cachedArtifact({ kind: 'test', inputs: { n: 1 }, build: b.build }, options())).built, true);

    // Held by a live process (this one, as a builder elsewhere in it): the asker waits until the entry appears.
    const other = artifactKey('test', { n: 2 });
    const stat = readFileSync('/proc/self/stat', 'utf8');
    writeFileSync(path.join(kindDir, `${other}.lock`), `${process.pid} ${stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]}\n`);
    const waiting = cachedArtifact({ kind: 'test', inputs: { n: 2 }, build: b.build }, options());
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(b.calls, 1, 'not built while the lock is held');
    rmSync(path.join(kindDir, `${other}.lock`));
    assert.equal((await waiting).built, true);
    assert.match(lines.join('\n'), new RegExp(`waiting for the process building it \\(pid ${process.pid}\\)`));
  });
});

describe("the small planner's artifact keys", () => {
  let dir: string;
  let venv: string;
  const site = (): string => path.join(venv, 'lib', 'python3.11', 'site-packages');
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'coda-cache-keys-'));
    venv = path.join(dir, 'venv');
    mkdirSync(path.join(site(), 'torch-2.11.0.dist-info'), { recursive: true });
    mkdirSync(path.join(site(), 'llamafactory-0.9.5.dist-info'));
    writeFileSync(path.join(venv, 'pyvenv.cfg'), 'home = /usr/bin\nversion = 3.11.7\n');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("the venv's part: python's version and every package's", () => {
    assert.deepEqual(trainersVenv(venv), { python: '3.11.7', packages: ['llamafactory-0.9.5', 'torch-2.11.0'] });
  });

  it("a model's key changes with the builder's bytes, the size, the seed, the box, the corpus, a package's version and python's", () => {
    const builder = path.join(dir, 'builder.py');
    writeFileSync(builder, 'print(1)\n');
    const small = { size: 'small', corpus: ['a b c'], box: { width: 320, height: 180 }, seed: 1 } as const;
    const key = (model: Parameters<typeof modelInputs>[0]): string => artifactKey('model', modelInputs(model, { venv, builder }));
    const base = key(small);
    const changed: Array<[string, () => string]> = [
      ['the tiny size', () => key({ size: 'tiny' })],
      ['the seed', () => key({ ...small, seed: 2 })],
      ['the box', () => key({ ...small, box: { width: 640, height: 360 } })],
      ['the corpus', () => key({ ...small, corpus: ['a b d'] })],
      ["the builder's bytes", () => (writeFileSync(builder, 'print(2)\n'), key(small))],
      ["a package's version", () => (rmSync(path.join(site(), 'torch-2.11.0.dist-info'), { recursive: true }), mkdirSync(path.join(site(), 'torch-2.12.0.dist-info')), key(small))],
      ["python's version", () => (writeFileSync(path.join(venv, 'pyvenv.cfg'), 'version = 3.12.1\n'), key(small))],
    ];
    const seen = new Set([base]);
    for (const [what, make] of changed) {
      const k = make();
      assert.ok(!seen.has(k), `${what} changed the key`);
      seen.add(k);
    }
  });

  /** A one-row SFT dataset with one image in `at`, as prepareDataset leaves it. */
  function dataset(at: string, reply = 'Thought: click. Action: click', image = 'png bytes'): PreparedDataset {
    mkdirSync(path.join(at, 'images'), { recursive: true });
    writeFileSync(path.join(at, 'images', 'a.png'), image);
    const dataFile = path.join(at, 'sft.json');
    writeFileSync(dataFile, JSON.stringify([{ messages: [{ role: 'user', content: '<image>Task' }, { role: 'assistant', content: reply }], images: ['images/a.png'] }]));
    writeFileSync(path.join(at, '.complete'), `${Math.random()}`);
    const manifest = datasetManifestSchema.parse({
      schema: DATASET_SCHEMA, id: 'd', kind: 'sft', createdAt: new Date().toISOString(), software: ['KAlgebra'], dataKey: 'coda/datasets/d/sft.json', rows: 1,
      images: [{ key: 'coda/runs/r/a.png', path: 'images/a.png' }], sources: [], bytes: { data: 1, images: 1 },
    });
    return { manifest, dir: at, dataFile };
  }

  it("a start's key changes with the rows, an image, each setting, the trainer's environment, the parent and the venv, not with where the dataset lies", () => {
    const settings: TrainingConfig['sft'] = { program: '/venv/bin/llamafactory-cli', args: ['train', '{config}'], env: { OMP_NUM_THREADS: '1' }, config: { finetuning_type: 'full', learning_rate: 3e-3, num_train_epochs: 10, seed: 1 } } as unknown as TrainingConfig['sft'];
    const box = { width: 320, height: 180 };
    const key = (s = settings, data = dataset(path.join(dir, 'd1')), parent = 'parent-1'): string => artifactKey('start', sftInputs(s, data, parent, box, venv));
    const base = key();
    assert.equal(key(settings, dataset(path.join(dir, 'elsewhere'))), base, 'the same files in another folder');
    assert.equal(key({ ...settings, program: 'nice -n 5 /other/venv/bin/llamafactory-cli' }), base, 'the same trainer under nice, from another clone');
    const changed: Array<[string, () => string]> = [
      ['a reply', () => key(settings, dataset(path.join(dir, 'd2'), 'Thought: type. Action: type'))],
      ['an image', () => key(settings, dataset(path.join(dir, 'd3'), undefined, 'other png bytes'))],
      ['the learning rate', () => key({ ...settings, config: { ...settings.config, learning_rate: 1e-3 } })],
      ['the epochs', () => key({ ...settings, config: { ...settings.config, num_train_epochs: 30 } })],
      ['the seed', () => key({ ...settings, config: { ...settings.config, seed: 2 } })],
      ["the trainer's threads", () => key({ ...settings, env: { OMP_NUM_THREADS: '2' } })],
      ['the parent', () => key(settings, undefined, 'parent-2')],
      ["a package's version", () => (mkdirSync(path.join(site(), 'peft-0.17.1.dist-info')), key())],
    ];
    const seen = new Set([base]);
    for (const [what, make] of changed) {
      const k = make();
      assert.ok(!seen.has(k), `${what} changed the key`);
      seen.add(k);
    }
  });
});

