import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { freeDisplay } from '../../infra/ephemeral';
import { listenLocally, send } from '../../apps/double-server';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../config/load';
import type { LocalHostConfig } from '../../config/schema';
import type { GuiAction } from '../../core/actions';
import { stopReasonOf } from '../../core/episode';
import type { StopInfo } from '../../core/evaluation';
import { parseTaskText, type Task } from '../../core/task';
import { createLocalDesktops, type LocalDesktop } from '../../activities/desktop/local/local-desktop';
import { isAlive, processesOf, type TaggedProcess } from '../../io/process';
import { readKAlgebraState, type RunningKAlgebraState } from '../../apps/kalgebra/local/state';
import { APPS } from '../../apps/index';

export const REPO = path.resolve(__dirname, '..', '..', '..');

/** The repository's ScienceBoard tasks of one software, sorted by id. */
export function loadTasks(software: string): Task[] {
  const dir = path.join(REPO, 'data', 'scienceboard', software);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => parseTaskText(APPS, readFileSync(path.join(dir, f), 'utf8'), f.slice(0, -'.json'.length)));
}

export const taskOf = (software: string, id: string): Task => {
  const task = loadTasks(software).find((t) => t.id === id);
  if (task === undefined) throw new Error(`no ${software} task ${id}`);
  return task;
};

export const loadKAlgebraTasks = (): Task[] => loadTasks('KAlgebra');
export const kalgebraTask = (id: string): Task => taskOf('KAlgebra', id);
export const texstudioTask = (id: string): Task => taskOf('TeXstudio', id);


/** One real desktop as the repo's temporal.yaml describes a local host, on a free display, in a temp dir. */
export function testDesktop(name: string, displayFrom: number): { desktop: LocalDesktop; host: LocalHostConfig; dir: string } {
  const config = loadConfig(path.join(REPO, 'temporal.yaml'));
  const local = config.hosts.find((h): h is LocalHostConfig => h.kind === 'local');
  if (local === undefined) throw new Error('temporal.yaml has no local host');
  const host: LocalHostConfig = { ...local, id: name, desktops: 1, displayBase: freeDisplay(displayFrom) };
  const dir = mkdtempSync(path.join(tmpdir(), `coda-${name}-`));
  const [desktop] = createLocalDesktops(host, config.localApps, { dir });
  if (desktop === undefined) throw new Error('no desktop');
  return { desktop, host, dir };
}

export function processOf(desktopId: string, program: RegExp): TaggedProcess {
  const match = processesOf(desktopId).find((p) => program.test(p.command.split(' ')[0] ?? ''));
  if (match === undefined) throw new Error(`desktop ${desktopId} runs no ${program}: ${processesOf(desktopId).map((p) => p.command).join('; ')}`);
  return match;
}

/** Width and height from a PNG's IHDR chunk. */
export function pngSize(png: Buffer): { width: number; height: number } {
  if (png.readUInt32BE(0) !== 0x89504e47 || png.toString('latin1', 12, 16) !== 'IHDR') throw new Error('not a PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/**
 * Plays actions as a rollout does: each action, then the pause the config gives the app to
 * repaint and a screenshot; a terminal action ends the episode. Returns how it ended.
 */
export async function play(desktop: LocalDesktop, actions: readonly GuiAction[], settleMs: number): Promise<StopInfo> {
  for (const action of actions) {
    await desktop.act(action);
    const reason = stopReasonOf(action);
    if (reason !== undefined) return { reason, answer: action.type === 'answer' ? action.text : undefined };
    await sleep(settleMs);
    await desktop.screenshot();
  }
  return { reason: 'TIMEOUT' };
}

/** KAlgebra's state on the test desktop, read through the desktop's AT-SPI reader as the evaluators read it. */
export async function appState(desktop: LocalDesktop): Promise<RunningKAlgebraState> {
  const pid = processOf(desktop.id, /kalgebra$/).pid;
  const state = await readKAlgebraState({ reader: desktop.atspiReader(), pid, timeoutMs: 10_000 });
  if (!state.app) throw new Error('KAlgebra is not on the accessibility bus');
  return state;
}

/** Waits until the kernel shows `pid` stopped (SIGSTOP is delivered when the process next runs). */
export async function untilStopped(pid: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('T')) return;
    if (Date.now() > deadline) throw new Error(`process ${pid} did not stop`);
    await sleep(20);
  }
}

/**
 * Waits until `pid` has died and Node has had a moment to hear of it (the exit event of a child we
 * started). Up to 30 s: TeXstudio quitting took over 10 s once with a benchmark's desktops beside it.
 */
export async function untilGone(pid: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (isAlive(pid)) {
    if (Date.now() > deadline) throw new Error(`process ${pid} did not die`);
    await sleep(20);
  }
  await sleep(100);
}

/** Awaits a promise that must reject with an instance of `kind`, and returns that error for further checks. */
export async function rejectsWith<E extends Error>(promise: Promise<unknown>, kind: new (...args: never[]) => E): Promise<E> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof kind) return err;
    throw new Error(`expected a ${kind.name}, got ${String(err)}`);
  }
  throw new Error(`expected a ${kind.name}, but the promise resolved`);
}


/** Closes a desktop from `testDesktop`, checks that none of its processes outlive it, and removes its directory. */
export async function closeTestDesktop(desktop: LocalDesktop, dir: string): Promise<void> {
  try {
    await desktop.close();
    const left = processesOf(desktop.id);
    if (left.length > 0) throw new Error(`desktop ${desktop.id} left processes behind: ${left.map((p) => p.command).join('; ')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export { listenLocally, send };
