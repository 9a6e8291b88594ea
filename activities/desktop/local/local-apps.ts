import * as path from 'node:path';
import type { LocalApp } from '../../../config/schema';
import { commandLine, type Task } from '../../../core/task';

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

/**
 * The config.localApps entry that runs a task: its software must be the task's `type`, and every
 * `launch` command of the task must contain the entry's launchMatch (the VM's binary path).
 */
export function localAppFor(task: Task, apps: readonly LocalApp[]): LocalApp {
  const forSoftware = apps.filter((a) => a.software === task.type);
  if (forSoftware.length === 0) {
    const known = [...new Set(apps.map((a) => a.software))].join(', ') || 'none';
    throw new UnknownAppError(`no localApps entry runs software "${task.type}" (configured: ${known})`, 'launch');
  }
  let chosen: LocalApp | undefined;
  for (const [i, step] of task.initialize.entries()) {
    if (step.func !== 'launch') continue;
    const line = commandLine(step.command);
    const app = forSoftware.find((a) => line.includes(a.launchMatch));
    if (app === undefined) {
      const expected = forSoftware.map((a) => JSON.stringify(a.launchMatch)).join(' or ');
      throw new UnknownAppError(`launch command ${JSON.stringify(line)} matches no localApps entry (expected it to contain ${expected})`, `initialize[${i}] launch`);
    }
    chosen ??= app;
  }
  if (chosen === undefined) throw new UnknownAppError('the task launches no app', 'launch');
  return chosen;
}

/** Where ScienceBoard's VMs keep the user's files; on a local desktop that is the desktop's own HOME. */
const VM_HOME = '/home/user';

/**
 * A VM path (`/home/user/script.kal`, `~/script.kal`) inside the desktop's HOME. Paths outside
 * the VM user's home are refused: a task must not write anywhere on the host.
 */
export function homePath(vmPath: string, home: string): string {
  const relative = vmPath.startsWith('~/') ? vmPath.slice(2) : vmPath.startsWith(`${VM_HOME}/`) ? vmPath.slice(VM_HOME.length + 1) : undefined;
  if (relative === undefined) throw new Error(`${JSON.stringify(vmPath)} is outside the VM user's home (${VM_HOME})`);
  const local = path.resolve(home, relative);
  if (!local.startsWith(`${path.resolve(home)}${path.sep}`)) throw new Error(`${JSON.stringify(vmPath)} leaves the user's home`);
  return local;
}
