import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { notInstalled } from './tools';

/** A long-running process of the dev stack, started detached with its log and pid file under the data directory. */
export interface DaemonSpec {
  /** Short name: the pid file is run/<name>.pid, the log logs/<name>.log. */
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Directories the process needs, created when it starts (describing a daemon touches nothing). */
  readonly dirs?: readonly string[];
  /** Variables of `env` holding secrets whose change means another start (a key generated per start of the demo). */
  readonly secretEnv?: readonly string[];
}

export interface DaemonState {
  readonly name: string;
  readonly pid?: number;
  readonly running: boolean;
  readonly log: string;
}

interface PidRecord {
  pid: number;
  command: string;
  startedAt: string;
  /**
   * The process's start as the kernel keeps it (processStart), read at spawn. Absent in pid files
   * written before it was recorded: such a file is stale, as its pid may be anyone's now.
   */
  start?: string;
  /** What the process was started as (specKey); absent in pid files written before it was recorded. */
  spec?: string;
}

/**
 * When `pid` started: /proc/<pid>/stat's field 22 (clock ticks after boot) with the boot's id, so
 * that a pid reused by another process, after this boot or another, reads otherwise. Undefined
 * when the process is gone or a zombie.
 */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command's name in parentheses (which may hold spaces): field 3, the state, then the rest.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[19] === undefined) return undefined;
    return `${readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()}/${fields[19]}`;
  } catch {
    return undefined;
  }
}

/**
 * What tells two starts of a daemon apart: its program, arguments, the config file it reads
 * (CODA_CONFIG) with a digest of its text, and a digest of its secrets (never the secrets; the pid
 * file is the user's alone).
 */
function specKey(spec: DaemonSpec): string {
  const file = spec.env?.CODA_CONFIG;
  let text = '';
  try {
    text = file === undefined ? '' : readFileSync(file, 'utf8');
  } catch {
    text = '(unreadable)';
  }
  const digest = (value: string): string => createHash('sha256').update(value).digest('hex').slice(0, 16);
  const secrets = spec.secretEnv === undefined ? [] : [digest(JSON.stringify(spec.secretEnv.map((name) => spec.env?.[name] ?? null)))];
  return JSON.stringify([spec.command, spec.args, file ?? null, digest(text), ...secrets]);
}

/**
 * True when the daemon runs but was started otherwise than `spec` says (another config file, the
 * same file since edited, other arguments): `npm run demo -- --planner small` after `npm run demo`
 * must not keep the workers of the other config, nor `npm run up` after an edit of temporal.yaml
 * the workers of the text before it. A pid file that does not record its start is taken as matching.
 */
export function runsAnotherSpec(dataDir: string, spec: DaemonSpec): boolean {
  const record = readPid(dataDir, spec.name);
  return record !== undefined && record.spec !== undefined && record.spec !== specKey(spec) && isOurProcess(record);
}

const pidFile = (dataDir: string, name: string): string => path.join(dataDir, 'run', `${name}.pid`);
const logFile = (dataDir: string, name: string): string => path.join(dataDir, 'logs', `${name}.log`);

function readPid(dataDir: string, name: string): PidRecord | undefined {
  try {
    return JSON.parse(readFileSync(pidFile(dataDir, name), 'utf8')) as PidRecord;
  } catch {
    return undefined;
  }
}

/**
 * True when the process the record names is the one the daemon started: alive, and started when
 * the record says. A pid reused by any other process, even one running the same program, does not
 * count, nor a record without its start.
 */
function isOurProcess(record: PidRecord): boolean {
  return typeof record.start === 'string' && Number.isInteger(record.pid) && record.pid > 0 && processStart(record.pid) === record.start;
}

export function daemonState(dataDir: string, name: string): DaemonState {
  const record = readPid(dataDir, name);
  const running = record !== undefined && isOurProcess(record);
  return { name, pid: running ? record.pid : undefined, running, log: logFile(dataDir, name) };
}

/**
 * Starts the daemon unless it already runs (idempotent). A pid file whose process is gone, or
 * whose pid now belongs to another process (its start differs), is stale and replaced. The
 * process leads its own process group, so stopping it also stops whatever it started.
 */
export function startDaemon(dataDir: string, spec: DaemonSpec): DaemonState {
  const current = daemonState(dataDir, spec.name);
  if (current.running) return current;
  if (path.isAbsolute(spec.command) && !existsSync(spec.command)) throw notInstalled(spec.name, spec.command);
  for (const dir of [path.join(dataDir, 'run'), path.join(dataDir, 'logs'), ...(spec.dirs ?? [])]) mkdirSync(dir, { recursive: true });
  const log = logFile(dataDir, spec.name);
  const fd = openSync(log, 'a');
  writeFileSync(fd, `\n--- ${new Date().toISOString()} starting ${spec.command} ${spec.args.join(' ')}\n`);
  const child = spawn(spec.command, spec.args, {
    cwd: spec.cwd,
    env: { ...process.env, ...spec.env },
    detached: true,
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  if (child.pid === undefined) throw new Error(`could not start ${spec.name} (${spec.command}): see ${log}`);
  child.unref();
  // Read now: the child is ours until it is reaped, which happens no sooner than this function returns.
  const start = processStart(child.pid);
  const record: PidRecord = { pid: child.pid, command: spec.command, startedAt: new Date().toISOString(), ...(start !== undefined ? { start } : {}), spec: specKey(spec) };
  writeFileSync(pidFile(dataDir, spec.name), JSON.stringify(record), { mode: 0o600 });
  return { name: spec.name, pid: child.pid, running: true, log };
}

/** Stops the daemon's whole process group: SIGTERM, then SIGKILL after `graceMs`. Removes the pid file. */
export async function stopDaemon(dataDir: string, name: string, graceMs = 10_000): Promise<boolean> {
  const record = readPid(dataDir, name);
  const file = pidFile(dataDir, name);
  if (record === undefined || !isOurProcess(record)) {
    if (existsSync(file)) rmSync(file);
    return false;
  }
  // The group's id is the leader's pid, which the kernel gives no other process while one of the
  // group lives. The leader alone, when it leads no group, only while it is still ours.
  const signalGroup = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-record.pid, signal);
    } catch {
      try {
        if (isOurProcess(record)) process.kill(record.pid, signal);
      } catch {
        /* already gone */
      }
    }
  };
  signalGroup('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && isOurProcess(record)) await sleep(100);
  if (isOurProcess(record)) {
    signalGroup('SIGKILL');
    while (isOurProcess(record)) await sleep(50);
  }
  // Children that outlived their leader still belong to the group.
  signalGroup('SIGKILL');
  rmSync(file, { force: true });
  return true;
}

/**
 * Polls `check` until it resolves true. Throws with the daemon's last log lines when the daemon
 * exits first (no point waiting for a dead server) or after `timeoutMs`.
 */
export async function waitUntilHealthy(
  dataDir: string,
  name: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = '';
  const fail = (why: string): never => {
    const log = logFile(dataDir, name);
    const tail = existsSync(log) ? `\nlast lines of ${log}:\n${readFileSync(log, 'utf8').trimEnd().split('\n').slice(-15).join('\n')}` : '';
    throw new Error(`${name} ${why}${lastError ? ` (last check: ${lastError})` : ''}${tail}`);
  };
  while (Date.now() < deadline) {
    if (!daemonState(dataDir, name).running) fail('exited during start-up');
    try {
      if (await check()) return;
    } catch (err) {
      lastError = (err as Error).message;
    }
    await sleep(200);
  }
  fail(`did not become healthy within ${Math.round(timeoutMs / 1000)}s`);
}
