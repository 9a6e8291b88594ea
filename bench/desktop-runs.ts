import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config, LocalHostConfig } from '../config/schema';
import { stopReasonOf } from '../core/episode';
import { referencePlanFor } from '../apps/policies';
import type { Task } from '../core/task';
import type { GuiAction } from '../core/actions';
import { TaskLibrary } from '../activities/tasks/library';
import type { LocalDesktop } from '../activities/desktop/local/local-desktop';
import { commandHelperPid, processesOf } from '../io/process';
import { cpuSeconds, median, procKib } from './stats';

/** What the desktop benchmarks share: their host, timing a call, its CPU, their tasks, resets by kind, replaying a reference plan, memory. */

/** temporal.yaml's first local host, as a one-desktop host `id` on `displayBase`. */
export function benchHost(config: Config, id: string, displayBase?: number): LocalHostConfig {
  const local = config.hosts.find((h): h is LocalHostConfig => h.kind === 'local');
  if (local === undefined) throw new Error('temporal.yaml has no local host');
  return { ...local, id, desktops: 1, displayBase: displayBase ?? local.displayBase };
}

export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** `times` timings of `fn`, one after the other, in ms. */
export async function series(times: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < times; i += 1) out.push(await timed(fn));
  return out;
}

/**
 * CPU seconds this benchmark and its desktop have used so far: this process (every thread, sharp's
 * included), what it has waited for (short commands, ImageMagick's `import` before, the AT-SPI
 * readers, apps that a reset replaced), its command helper (which starts the short commands, and
 * waits for them), and the desktop's live processes (Xvfb, the buses,
 * openbox, the app) with what they have waited for. A process that exits between two readings
 * moves from the live sum into its parent's waited-for sum, so a difference counts it once.
 */
export function desktopCpuSeconds(desktopId: string): number {
  let total = cpuSeconds('self', true);
  const helper = commandHelperPid();
  for (const pid of [...(helper === undefined ? [] : [helper]), ...processesOf(desktopId).map((p) => p.pid)]) {
    try {
      total += cpuSeconds(pid, true);
    } catch {
      /* exited while we looked: its parent's waited-for sum has it */
    }
  }
  return total;
}

/** The mean CPU seconds (desktopCpuSeconds) of one call of `fn`, over `times` calls one after the other. */
export async function cpuPerCall(desktopId: string, times: number, fn: () => Promise<unknown>): Promise<number> {
  const before = desktopCpuSeconds(desktopId);
  for (let i = 0; i < times; i += 1) await fn();
  return Number(((desktopCpuSeconds(desktopId) - before) / times).toFixed(4));
}

/** The tasks of a software, validated once before anything is timed, by id. */
export function taskLookup(software: string): (id: string) => Task {
  const tasks = new Map(new TaskLibrary().load(software).map((t) => [t.id, t]));
  return (id) => {
    const found = tasks.get(id);
    if (found === undefined) throw new Error(`the bench did not load ${software} task ${id}`);
    return found;
  };
}

/** The median reset time of each kind of task (`runs` resets each), and over all of them, in ms. */
export async function resetMedians(desktop: LocalDesktop, kinds: Readonly<Record<string, Task>>, runs: number): Promise<Record<string, number>> {
  const resets: Record<string, number> = {};
  const all: number[] = [];
  for (const [kind, task] of Object.entries(kinds)) {
    const times = await series(runs, () => desktop.reset(task));
    resets[kind] = median(times);
    all.push(...times);
  }
  return { all: median(all), ...resets };
}

/** Plays the task's reference plan as a rollout does, `settleMs` after each action. */
export async function playReference(desktop: LocalDesktop, task: Task, settleMs: number): Promise<void> {
  const plan = referencePlanFor(task, desktop.screen);
  if (!plan.replayable) throw new Error(plan.reason);
  for (const action of plan.actions) {
    await desktop.act(action);
    if (stopReasonOf(action) !== undefined) return;
    await sleep(settleMs);
  }
}

/** Resident and proportional set size of each process the desktop runs, in MiB. */
export function memory(desktopId: string): { program: string; rssMiB: number; pssMiB: number }[] {
  return processesOf(desktopId).map((p) => ({
    program: path.basename(p.command.split(' ')[0] ?? '?'),
    rssMiB: procKib(p.pid, 'VmRSS') / 1024,
    pssMiB: procKib(p.pid, 'Pss', 'smaps_rollup') / 1024,
  }));
}

/** What a CPU figure of one app measures: its reset task, the action of a step, and their labels. */
export interface CpuWork {
  readonly task: Task;
  readonly resetLabel: string;
  readonly step: { readonly label: string; readonly action: GuiAction };
  readonly evaluateLabel: string;
}

/** What a rollout's activities do, in CPU seconds: a reset and its screenshot; an action, the settle, a screenshot; the checks. */
export async function cpuFigures(desktop: LocalDesktop, work: CpuWork, settleMs: number, runs: number): Promise<Record<string, number>> {
  // The screenshots last, on an app at rest: right after a launch the app's own start-up work would count.
  const figures: Record<string, number> = {
    [work.resetLabel]: await cpuPerCall(desktop.id, runs, async () => {
      await desktop.reset(work.task);
      await desktop.screenshot();
    }),
    [work.step.label]: await cpuPerCall(desktop.id, 10, async () => {
      await desktop.act(work.step.action);
      await sleep(settleMs);
      await desktop.screenshot();
    }),
    [work.evaluateLabel]: await cpuPerCall(desktop.id, runs, () => desktop.evaluate(work.task, { reason: 'DONE' })),
  };
  figures.screenshot = await cpuPerCall(desktop.id, 20, () => desktop.screenshot());
  return figures;
}
