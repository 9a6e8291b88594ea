import type { LocalApp } from '../../../config/schema';
import { funcDrives, type Task } from '../../../core/task';
import { commandLine } from '../../../core/task-common';
import { APPS } from '../../../apps/index';

/** A task's app could not be mapped to a local binary; `step` names the initialize step at fault. */
export class UnknownAppError extends Error {
  constructor(
    message: string,
    readonly step: string,
  ) {
    super(message);
    this.name = 'UnknownAppError';
  }
}

/** The localApps entries a task's launches start: the task's own app (its `type`) and, for each launch step, the entry it starts. */
export interface TaskApps {
  /** The entry of the task's software, whose driver runs the checks. */
  readonly main: LocalApp;
  /** Per `initialize` index of a launch step, the entry it starts. */
  readonly launches: ReadonlyMap<number, LocalApp>;
}

/**
 * The config.localApps entries that run a task on one desktop. The task's software (`type`) must
 * have an entry; every `launch` command must contain the launchMatch (the VM's binary path) of
 * some entry, of any software: a TeXstudio task that also launches `/app/bin/kalgebra` gets
 * KAlgebra beside TeXstudio. When several entries match, the task's own software wins.
 */
export function localAppsFor(task: Task, apps: readonly LocalApp[]): TaskApps {
  const configured = (): string => apps.map((a) => `${a.software} ${JSON.stringify(a.launchMatch)}`).join(', ') || 'none';
  const main = apps.find((a) => a.software === task.type);
  if (main === undefined) {
    const known = [...new Set(apps.map((a) => a.software))].join(', ') || 'none';
    throw new UnknownAppError(`no localApps entry runs software "${task.type}" (configured: ${known})`, 'launch');
  }
  const launches = new Map<number, LocalApp>();
  for (const [i, step] of task.initialize.entries()) {
    if (step.func !== 'launch') continue;
    const line = commandLine(step.command);
    const matching = apps.filter((a) => line.includes(a.launchMatch));
    const app = matching.find((a) => a.software === task.type) ?? matching[0];
    if (app === undefined) throw new UnknownAppError(`launch command ${JSON.stringify(line)} matches no localApps entry (configured: ${configured()})`, `initialize[${i}] launch`);
    launches.set(i, app);
  }
  if (launches.size === 0) throw new UnknownAppError('the task launches no app', 'launch');
  if (![...launches.values()].includes(main)) throw new UnknownAppError(`the task never launches ${task.type}, its own software`, 'launch');
  return { main, launches };
}

/**
 * The software whose driver performs an app step: the app the func drives (apps/index.ts: an
 * app's own funcs drive it; ScienceBoard writes another app's funcs with its prefix, `chimerax_open`
 * in a TeXstudio task), else the task's own.
 */
export function stepSoftware(func: string, task: Task): string {
  return funcDrives(APPS, task.type, func) ?? task.type;
}
