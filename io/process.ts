import { fork, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HelperFailure, HelperReply, HelperRequest } from './command-helper';

/**
 * The processes a local desktop runs (Xvfb, buses, window manager, the app) and the short
 * commands it calls (xdotool, xprop, the AT-SPI reader). Every argument travels in argv, never
 * through a shell, and every long-running process leads its own process group, so stopping it
 * also stops what it started.
 */

export type Env = Readonly<Record<string, string>>;

export interface ProcessSpec {
  /** Short name used in messages, e.g. `Xvfb :90`. */
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Env;
  readonly cwd?: string;
  /** stdout and stderr are appended here. */
  readonly log: string;
}

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export const describeExit = (exit: Exit): string =>
  exit.signal !== null ? `killed by ${exit.signal}` : `exited with code ${exit.code ?? '?'}`;

/** A started process: whether it still runs, how it ended, and how to stop its whole group. */
export class ManagedProcess {
  private exitInfo: Exit | undefined;
  readonly exited: Promise<Exit>;

  private constructor(
    readonly spec: ProcessSpec,
    private readonly child: ChildProcess,
    readonly pid: number,
  ) {
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
    });
  }

  static start(spec: ProcessSpec): ManagedProcess {
    const fd = openSync(spec.log, 'a');
    let child: ChildProcess;
    try {
      child = spawn(spec.command, [...spec.args], {
        cwd: spec.cwd,
        env: { ...spec.env },
        detached: true,
        stdio: ['ignore', fd, fd],
      });
    } finally {
      closeSync(fd);
    }
    // spawn also reports a missing binary as an 'error' event: the pid check below says it instead.
    child.once('error', () => undefined);
    if (child.pid === undefined) throw new Error(`${spec.name}: cannot start ${spec.command} (is it installed?)`);
    return new ManagedProcess(spec, child, child.pid);
  }

  /** Undefined while running; how it ended afterwards. */
  get exit(): Exit | undefined {
    return this.exitInfo;
  }

  get running(): boolean {
    return this.exitInfo === undefined;
  }

  /**
   * Undefined while the process runs; else what happened to it, in words: how it exited (also
   * before Node has reaped it), or that it is stopped (SIGSTOP: alive, but answering nothing).
   */
  problem(): string | undefined {
    if (this.exitInfo !== undefined) return describeExit(this.exitInfo);
    const state = processState(this.pid);
    if (state === undefined || state === 'Z') return 'has exited';
    if (state === 'T' || state === 't') return 'is stopped (not responding)';
    return undefined;
  }

  /** SIGTERM to the group, SIGKILL after `graceMs`; resolves once the leader has exited. */
  async stop(graceMs = 3_000): Promise<void> {
    signalGroup(this.pid, 'SIGCONT');
    signalGroup(this.pid, 'SIGTERM');
    const timer = setTimeout(() => signalGroup(this.pid, 'SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
    // Children that outlived their leader still belong to the group.
    signalGroup(this.pid, 'SIGKILL');
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    /* the group is empty */
  }
}

export interface CommandOptions {
  readonly env: Env;
  readonly timeoutMs: number;
  readonly input?: string;
  readonly cwd?: string;
}

/** A short command that failed: its argv, how it ended and what it printed. */
export class CommandError extends Error {
  constructor(
    readonly argv: readonly string[],
    readonly detail: string,
    readonly stderr: string,
    /** Some programs say why they failed on stdout (TeX does). */
    readonly stdout = '',
  ) {
    super(`${argv[0]} ${detail}${stderr.trim() === '' ? '' : `: ${stderr.trim().slice(-500)}`}`);
    this.name = 'CommandError';
  }
}

export interface CommandOutput {
  readonly stdout: Buffer;
  readonly stderr: Buffer;
}

/** Runs a short command to completion and returns its stdout; a non-zero exit or a timeout throws CommandError. */
export async function runCommand(command: string, args: readonly string[], options: CommandOptions): Promise<Buffer> {
  return (await runCommandOutput(command, args, options)).stdout;
}

/**
 * Same as runCommand, with stderr too (some programs print their results there). The command is
 * started by the command helper (io/command-helper.ts), a small process of this one's, which
 * reports exactly what execFile reports.
 */
export function runCommandOutput(command: string, args: readonly string[], options: CommandOptions): Promise<CommandOutput> {
  return helper.run({ command, args, env: options.env, ...(options.cwd === undefined ? {} : { cwd: options.cwd }), timeoutMs: options.timeoutMs, input: options.input ?? '' });
}

/** What execFile's failure means, in words. */
function failureDetail(failure: HelperFailure, timeoutMs: number): string {
  if (failure.code === 'ENOENT') return 'is not installed';
  if (failure.killed === true) return `timed out after ${timeoutMs} ms`;
  return typeof failure.code === 'number' ? `exited with code ${failure.code}` : `failed (${failure.signal ?? failure.message})`;
}

const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);

/**
 * The command helper of this process: started at the first command, started again after it dies
 * (the commands it was running then fail, and are not run again: they may have acted). It never
 * keeps this process alive, unless a command is under way.
 */
class CommandHelper {
  private child: ChildProcess | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, { request: HelperRequest; helper: ChildProcess; resolve: (output: CommandOutput) => void; reject: (err: Error) => void }>();

  run(fields: Omit<HelperRequest, 'id'>): Promise<CommandOutput> {
    const request: HelperRequest = { id: (this.nextId += 1), ...fields };
    return new Promise((resolve, reject) => {
      const child = this.started();
      this.pending.set(request.id, { request, helper: child, resolve, reject });
      child.channel?.ref();
      child.send(request, (err) => {
        if (err !== null) this.settle(request.id, { failure: { message: `the command helper took no command: ${err.message}` } });
      });
    });
  }

  get pid(): number | undefined {
    return this.child?.connected === true ? this.child.pid : undefined;
  }

  /** Ends the helper (its CPU then counts as this process's reaped children); the next command starts another. */
  close(): Promise<void> {
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.ref(); // until it has exited
    child.disconnect();
    return exited;
  }

  private started(): ChildProcess {
    if (this.child !== undefined && this.child.connected) return this.child;
    const child = fork(path.join(__dirname, 'command-helper.js'), [], { execArgv: [], env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' });
    child.on('message', (reply: HelperReply) => this.settle(reply.id, reply));
    child.once('exit', (code, signal) => {
      if (this.child === child) this.child = undefined;
      // Only its own commands: another helper may have started already and taken new ones.
      const its = [...this.pending].filter(([, entry]) => entry.helper === child).map(([id]) => id);
      for (const id of its) this.settle(id, { failure: { message: `the command helper ${describeExit({ code, signal })}` } });
    });
    child.unref();
    child.channel?.unref();
    this.child = child;
    return child;
  }

  private settle(id: number, reply: Pick<HelperReply, 'failure'> & Partial<Pick<HelperReply, 'stdout' | 'stderr'>>): void {
    const entry = this.pending.get(id);
    if (entry === undefined) return;
    this.pending.delete(id);
    if (![...this.pending.values()].some((other) => other.helper === entry.helper)) entry.helper.channel?.unref();
    const stdout = asBuffer(reply.stdout ?? new Uint8Array());
    const stderr = asBuffer(reply.stderr ?? new Uint8Array());
    if (reply.failure === undefined) return entry.resolve({ stdout, stderr });
    const { command, args, timeoutMs } = entry.request;
    entry.reject(new CommandError([command, ...args], failureDetail(reply.failure, timeoutMs), stderr.toString('utf8'), stdout.toString('utf8')));
  }
}

const helper = new CommandHelper();

/** The pid of this process's command helper while it runs (a benchmark adds its CPU to this process's). */
export const commandHelperPid = (): number | undefined => helper.pid;

/** Ends this process's command helper, if it runs (the test hooks do, so that its CPU counts as this process's). */
export const closeCommandHelper = (): Promise<void> => helper.close();

/** The environment variable that tags every process a desktop starts. */
export const MARKER_VAR = 'CODA_DESKTOP_RUN';

/**
 * A desktop's marker: its id, then the pid of the worker that owns it, then a nonce. The owner
 * pid tells a crashed worker's leftovers from a live desktop's processes.
 */
export const desktopMarker = (desktopId: string): string => `${desktopId}.${process.pid}.${randomBytes(4).toString('hex')}`;

/**
 * Kills every process whose environment has MARKER_VAR=`marker`. Processes a desktop starts
 * inherit it, so this also finds daemons that left their process group. Resolves with the pids
 * that survived (none, unless a process is stuck in the kernel).
 */
export function killMarked(marker: string): Promise<number[]> {
  return killTagged((value) => value === marker);
}

/** Kills what a desktop of this id left behind when its worker died (the owner pid in the marker is gone). */
export function killOrphans(desktopId: string): Promise<number[]> {
  return killTagged((value) => {
    if (!value.startsWith(`${desktopId}.`)) return false;
    const owner = Number(value.slice(desktopId.length + 1).split('.')[0]);
    return owner !== process.pid && !isAlive(owner);
  });
}

/**
 * SIGKILLs the tagged processes until none is left, looking again each round (a dying parent
 * may still start a child), for up to 20 s: a loaded machine can take seconds to tear down a
 * browser engine.
 */
async function killTagged(matches: (markerValue: string) => boolean): Promise<number[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const pids = taggedPids(matches).filter(isAlive);
    if (pids.length === 0 || Date.now() >= deadline) return pids;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    await sleep(50);
  }
}

/** The kernel's one-letter state (R, S, T, Z...) in a stat file of /proc, or undefined when there is no such process or thread. */
function stateIn(statPath: string): string | undefined {
  try {
    const stat = readFileSync(statPath, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
}

/** The kernel's one-letter state of a process (R, S, T, Z...), or undefined when there is no such process. */
function processState(pid: number): string | undefined {
  return stateIn(`/proc/${pid}/stat`);
}

/** True while `pid` runs; a zombie (exited, not yet reaped) counts as gone. */
export function isAlive(pid: number): boolean {
  const state = processState(pid);
  return state !== undefined && state !== 'Z';
}

/** How often untilIdle looks at a process's threads, and at how many looks in a row they must all be asleep. */
const IDLE_POLL_MS = 20;
const IDLE_LOOKS = 3;

/** The states of `pid`'s threads (R running or runnable, S asleep, D in a disk wait, ...); none once it is gone. */
export function threadStates(pid: number): string[] {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tids.flatMap((tid) => {
    const state = stateIn(`/proc/${pid}/task/${tid}/stat`);
    return state === undefined ? [] : [state];
  });
}

/**
 * Resolves true once no thread of `pid` has been running, runnable or in a disk wait at IDLE_LOOKS
 * looks in a row, IDLE_POLL_MS apart; false after `maxMs` without that (or at once when the
 * process is gone). A runnable thread is busy even while the CPU serves others: on a loaded
 * machine idle means that the app has caught up with its input, not that it got no CPU.
 */
export async function untilIdle(pid: number, maxMs: number): Promise<boolean> {
  const deadline = Date.now() + maxMs;
  let quiet = 0;
  for (;;) {
    const states = threadStates(pid);
    if (states.length === 0) return false;
    quiet = states.some((s) => s === 'R' || s === 'D') ? 0 : quiet + 1;
    if (quiet >= IDLE_LOOKS) return true;
    if (Date.now() >= deadline) return false;
    await sleep(IDLE_POLL_MS);
  }
}

export interface TaggedProcess {
  readonly pid: number;
  /** argv joined by spaces. */
  readonly command: string;
}

/**
 * The live processes (zombies excluded) that the desktop of this id started from this worker
 * (another worker on the machine may run a desktop of the same id).
 */
export function processesOf(desktopId: string): TaggedProcess[] {
  const found: TaggedProcess[] = [];
  for (const pid of taggedPids((value) => value.startsWith(`${desktopId}.${process.pid}.`))) {
    try {
      if (isAlive(pid)) found.push({ pid, command: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim() });
    } catch {
      /* exited while we looked */
    }
  }
  return found;
}

/**
 * The pids of processes tagged with a matching marker, and of every process in a group such a
 * process leads: some programs clear their children's environment (Chromium, inside
 * QtWebEngine, does), but the children stay in their parent's process group.
 */
function taggedPids(matches: (markerValue: string) => boolean): number[] {
  const prefix = `${MARKER_VAR}=`;
  const tagged = new Set<number>();
  const groups = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      groups.set(pid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]));
      const tag = readFileSync(`/proc/${pid}/environ`, 'latin1')
        .split('\0')
        .find((v) => v.startsWith(prefix));
      if (tag !== undefined && matches(tag.slice(prefix.length))) tagged.add(pid);
    } catch {
      /* exited while we looked */
    }
  }
  return [...groups].filter(([pid, group]) => tagged.has(pid) || tagged.has(group)).map(([pid]) => pid);
}

/** Polls `probe` until it returns a value other than undefined, or throws the message of `onTimeout` after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  onTimeout: () => string,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) throw new Error(onTimeout());
    await sleep(intervalMs);
  }
}
