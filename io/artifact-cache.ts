import { createHash, randomBytes } from 'node:crypto';
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { childrenCpuSeconds } from './cpu-time';

/**
 * Artifacts built once and kept, keyed by what they are built from (issue 43 item 2): the small
 * planner's models and trained starts, which several test files, the benchmark and the demo need.
 * An entry is `<root>/artifacts/<kind>/<key>/`, the key the sha256 of the canonical JSON of its
 * kind and inputs, and lives outside the clone (cacheRoot), so that CI's clean clones on one
 * machine find what an earlier run built.
 *
 * Correctness rests on two things, the lock only saves work:
 * - an entry is built in a temporary folder beside it and renamed into place, its record
 *   (ENTRY_FILE: inputs, info, every file's sha256) written last, so a reader sees a whole entry
 *   or none; and every use checks the files against the record, so an entry a crash or a writer
 *   left incomplete or changed is rebuilt (and said so), never served;
 * - at most one process builds a key at a time: the lock `<key>.lock`, created with O_EXCL and
 *   holding the builder's pid and start time; the others wait for the entry. A lock whose process
 *   is gone (or whose pid now names another process) is taken over, with the dead builder's
 *   temporary folders removed.
 * Users never write into an entry: a training from a cached model writes its own folder.
 */

/** The record of an entry, written last. */
export const ENTRY_FILE = 'entry.json';

/** Inputs of a key: JSON, hashed in canonical form (keys sorted); big inputs go in as their sha256. */
export type KeyValue = string | number | boolean | null | readonly KeyValue[] | { readonly [name: string]: KeyValue };
export type KeyInputs = { readonly [name: string]: KeyValue };

/** The cache's folder: CODA_CACHE_DIR, else `coda` in $XDG_CACHE_HOME (when absolute, as the XDG spec asks) or ~/.cache. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const own = env.CODA_CACHE_DIR?.trim();
  if (own) return path.resolve(own);
  const xdg = env.XDG_CACHE_HOME?.trim();
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(homedir(), '.cache'), 'coda');
}

export const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/** A file's sha256, read 8 MiB at a time: a VM image's disk is gigabytes, more than one Buffer holds. */
export function fileSha256(file: string): string {
  const hash = createHash('sha256');
  const chunk = Buffer.alloc(8 * 1024 * 1024);
  const fd = openSync(file, 'r');
  try {
    for (let n = readSync(fd, chunk); n > 0; n = readSync(fd, chunk)) hash.update(chunk.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

function canonical(value: KeyValue): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, KeyValue>)[k]!)}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

export const artifactKey = (kind: string, inputs: KeyInputs): string => sha256(canonical({ kind, inputs }));

/** What a build is: its kind (a folder name), what it is built from, and the builder, which fills the empty folder it is given and returns what to record (JSON). */
export interface ArtifactSpec<I> {
  readonly kind: string;
  readonly inputs: KeyInputs;
  readonly build: (dir: string) => Promise<I>;
}

export interface EntryRecord<I> {
  readonly kind: string;
  readonly key: string;
  readonly inputs: KeyInputs;
  readonly info: I;
  /** Every file of the entry but the record, by path from the entry's folder, with its sha256. */
  readonly files: Readonly<Record<string, string>>;
  /** When and by which process it was built; its wall time and its child processes' CPU time. */
  readonly built: { readonly at: string; readonly pid: number; readonly wallSeconds: number; readonly cpuSeconds: number };
}

export interface Artifact<I> {
  readonly key: string;
  /** The entry's folder: read only. */
  readonly dir: string;
  readonly record: EntryRecord<I>;
  /** Whether this call built it (false: found, or built by another process while this one waited). */
  readonly built: boolean;
}

export interface CacheOptions {
  /** The cache's folder; cacheRoot() by default. */
  readonly root?: string;
  /** How often a waiting process looks again. */
  readonly pollMs?: number;
  /** Where the cache says it rebuilds a bad entry or waits for another builder. */
  readonly log?: (line: string) => void;
}

/** The artifact `spec` describes: from the cache when a whole entry is there, else built once (by this process, or by another one while this one waits). */
export async function cachedArtifact<I>(spec: ArtifactSpec<I>, options: CacheOptions = {}): Promise<Artifact<I>> {
  const key = artifactKey(spec.kind, spec.inputs);
  const kindDir = path.join(options.root ?? cacheRoot(), 'artifacts', spec.kind);
  const dir = path.join(kindDir, key);
  const lockFile = `${dir}.lock`;
  const log = options.log ?? ((line: string) => console.error(line));
  const name = `artifact cache: ${spec.kind} ${key.slice(0, 12)}`;
  mkdirSync(kindDir, { recursive: true });
  let waited = false;
  for (;;) {
    const found = readEntry<I>(dir, key);
    if (typeof found !== 'string') return { key, dir, record: found, built: false };
    const lock = takeLock(lockFile);
    if (lock !== undefined) {
      try {
        // Looked at again under the lock: another builder may have published it since.
        const again = readEntry<I>(dir, key);
        if (typeof again !== 'string') return { key, dir, record: again, built: false };
        if (again !== ABSENT) log(`${name}: ${again}; rebuilding it`);
        return { key, dir, record: await buildEntry(spec, key, kindDir), built: true };
      } finally {
        releaseLock(lockFile, lock);
      }
    }
    if (!waited) log(`${name}: waiting for the process building it (${lockOwner(lockFile) ?? 'its lock'})`);
    waited = true;
    await sleep(options.pollMs ?? 500);
  }
}

const ABSENT = 'absent';

/** Every file below `dir`, by path from it (posix separators), sorted. */
function filesBelow(dir: string, at = ''): string[] {
  return readdirSync(path.join(dir, at), { withFileTypes: true })
    .flatMap((d) => (d.isDirectory() ? filesBelow(dir, path.posix.join(at, d.name)) : [path.posix.join(at, d.name)]))
    .sort();
}

/** The entry's record when the entry is whole and unchanged; otherwise why not. */
export function readEntry<I>(dir: string, key: string): EntryRecord<I> | string {
  const file = path.join(dir, ENTRY_FILE);
  if (!existsSync(file)) return existsSync(dir) ? `no ${ENTRY_FILE} (a build that did not finish)` : ABSENT;
  let record: EntryRecord<I>;
  try {
    record = JSON.parse(readFileSync(file, 'utf8')) as EntryRecord<I>;
  } catch (err) {
    return `${ENTRY_FILE} unreadable (${(err as Error).message})`;
  }
  if (record.key !== key || typeof record.files !== 'object' || record.files === null) return `${ENTRY_FILE} is not this key's record`;
  const present = filesBelow(dir).filter((f) => f !== ENTRY_FILE);
  const recorded = Object.keys(record.files).sort();
  const extra = present.find((f) => !(f in record.files));
  if (extra !== undefined) return `${extra} was added after the entry was published`;
  const missing = recorded.find((f) => !present.includes(f));
  if (missing !== undefined) return `${missing} is missing`;
  // Each file's content is hashed once per process; later reads compare sizes and times, which a write changes.
  const stamp = [ENTRY_FILE, ...recorded].map((f) => statSync(path.join(dir, f))).map((st) => `${st.size}:${st.mtimeMs}`).join('|');
  if (verified.get(dir) === stamp) return record;
  const changed = recorded.find((f) => fileSha256(path.join(dir, f)) !== record.files[f]);
  if (changed !== undefined) return `${changed} changed after the entry was published`;
  verified.set(dir, stamp);
  return record;
}

/** The entries whose files this process hashed, with their files' sizes and modification times then: a VM image's disk is gigabytes. */
const verified = new Map<string, string>();

/** Builds the entry in a temporary folder beside it and renames it into place (the caller holds the lock). */
async function buildEntry<I>(spec: ArtifactSpec<I>, key: string, kindDir: string): Promise<EntryRecord<I>> {
  const dir = path.join(kindDir, key);
  // What builders of this key that died left: with the lock held, no live process writes them.
  for (const name of readdirSync(kindDir)) if (name.startsWith(`.tmp-${key}-`) || name.startsWith(`.old-${key}-`)) rmSync(path.join(kindDir, name), { recursive: true, force: true });
  const unique = `${key}-${process.pid}-${randomBytes(4).toString('hex')}`;
  const tmp = path.join(kindDir, `.tmp-${unique}`);
  mkdirSync(tmp);
  try {
    const [began, cpu] = [Date.now(), childrenCpuSeconds() + cpuSeconds(process.cpuUsage())];
    const info = await spec.build(tmp);
    const files = Object.fromEntries(filesBelow(tmp).map((f) => [f, fileSha256(path.join(tmp, f))]));
    const built = { at: new Date().toISOString(), pid: process.pid, wallSeconds: (Date.now() - began) / 1000, cpuSeconds: childrenCpuSeconds() + cpuSeconds(process.cpuUsage()) - cpu };
    const record: EntryRecord<I> = { kind: spec.kind, key, inputs: spec.inputs, info, files, built };
    writeFileSync(path.join(tmp, ENTRY_FILE), `${JSON.stringify(record, null, 2)}\n`);
    // A bad entry in the way goes aside first: rename does not replace a folder that has files.
    if (existsSync(dir)) renameSync(dir, path.join(kindDir, `.old-${unique}`));
    renameSync(tmp, dir);
    rmSync(path.join(kindDir, `.old-${unique}`), { recursive: true, force: true });
    return record;
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

const cpuSeconds = (usage: NodeJS.CpuUsage): number => (usage.user + usage.system) / 1e6;

/** A process's start time since boot (/proc/<pid>/stat field 22), which tells a live builder from a later process given its pid; undefined when it is gone or a zombie. */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' || fields[0] === 'X' ? undefined : fields[19];
  } catch {
    return undefined;
  }
}

/** Creates the lock with this process's pid and start time; the text written, or undefined when another process holds it. */
function takeLock(file: string): string | undefined {
  const mine = `${process.pid} ${startTime(process.pid)}\n`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, mine, { flag: 'wx' });
      return mine;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (!breakStaleLock(file)) return undefined;
  }
  return undefined;
}

/** The pid a lock names, for the waiting line. */
function lockOwner(file: string): string | undefined {
  try {
    const pid = readFileSync(file, 'utf8').split(' ')[0];
    return pid ? `pid ${pid}` : undefined;
  } catch {
    return undefined;
  }
}

/** How long a lock file may stay empty (its creator between creating and writing it) before it counts as a dead builder's. */
const EMPTY_LOCK_GRACE_MS = 10_000;

/**
 * Removes the lock when its builder is gone; whether the lock is free now. The lock removed is
 * the one read (same inode), not one a third process created meanwhile.
 */
function breakStaleLock(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw err;
  }
  try {
    const seen = fstatSync(fd);
    const [pid, started] = readFileSync(fd, 'utf8').trim().split(' ');
    if (pid === undefined || pid === '' || started === undefined) {
      if (Date.now() - seen.mtimeMs < EMPTY_LOCK_GRACE_MS) return false;
    } else if (startTime(Number(pid)) === started) return false;
    try {
      if (statSync(file).ino !== seen.ino) return true;
      unlinkSync(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    return true;
  } finally {
    closeSync(fd);
  }
}

function releaseLock(file: string, mine: string): void {
  try {
    if (readFileSync(file, 'utf8') === mine) unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
