import { existsSync, lstatSync, mkdirSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { commandLine } from '../core/task-common';

/**
 * The VM commands of ScienceBoard's tasks that a local desktop carries out itself. A VM is
 * thrown away after each task, so its tasks run anything; a local desktop runs on a shared
 * machine, so it takes only what the tasks need and can do no harm: removing files in the
 * desktop's own HOME (`rm [-f] [-r] path...`, shell globs `*` and `?` expanded there). Any other
 * command is refused with the reason.
 */

/** A command a local desktop will not run, and why. */
export class RefusedCommandError extends Error {
  constructor(command: string | readonly string[], why: string) {
    super(`refused to run ${JSON.stringify(commandLine(command))}: ${why}`);
    this.name = 'RefusedCommandError';
  }
}

/** Characters that make a shell do more than split words and expand globs. */
const SHELL_SYNTAX = /[;&|<>`$(){}'"\\\n#!]/;

/**
 * The words of a command line: an argv list as it is; a string split on blanks, as the VM's
 * server (shlex, or a shell) would, refusing quotes, variables, redirections and other syntax.
 */
export function commandWords(command: string | readonly string[]): string[] {
  if (typeof command !== 'string') return [...command];
  const syntax = SHELL_SYNTAX.exec(command);
  if (syntax !== null) throw new RefusedCommandError(command, `${JSON.stringify(syntax[0])} is shell syntax a local desktop does not interpret`);
  return command.split(/\s+/).filter((w) => w !== '');
}

const RM = new Set(['rm', '/bin/rm', '/usr/bin/rm']);
const RM_FLAGS: Readonly<Record<string, 'force' | 'recursive' | 'both'>> = {
  '-f': 'force',
  '--force': 'force',
  '-r': 'recursive',
  '-R': 'recursive',
  '--recursive': 'recursive',
  '-rf': 'both',
  '-fr': 'both',
  '-Rf': 'both',
  '-fR': 'both',
};

/**
 * Carries out an `execute` step in `home`. Like the VM, a file that is not there is no failure
 * (ScienceBoard does not check the command's exit code), and a folder stays without -r.
 */
export function runVmCommand(step: { readonly command: string | readonly string[]; readonly shell?: boolean }, home: string): void {
  const [program, ...args] = commandWords(step.command);
  if (program === undefined || !RM.has(program)) {
    throw new RefusedCommandError(step.command, `only rm of files in the desktop's HOME runs here, not ${JSON.stringify(program ?? '')}`);
  }
  let recursive = false;
  const targets: string[] = [];
  let options = true;
  for (const arg of args) {
    if (options && arg === '--') {
      options = false;
    } else if (options && arg.startsWith('-')) {
      const flag = RM_FLAGS[arg];
      if (flag === undefined) throw new RefusedCommandError(step.command, `rm option ${JSON.stringify(arg)} is not one of ${Object.keys(RM_FLAGS).join(' ')}`);
      recursive ||= flag !== 'force';
    } else {
      targets.push(arg);
    }
  }
  if (targets.length === 0) throw new RefusedCommandError(step.command, 'rm names no file');
  let files: string[];
  try {
    files = targets.flatMap((target) => {
      const local = homePath(target, home);
      return step.shell === true && /[*?]/.test(target) ? expandGlob(local, home) : [local];
    });
  } catch (err) {
    throw new RefusedCommandError(step.command, (err as Error).message);
  }
  const realHome = realpathSync(home);
  for (const file of files) {
    const stat = lstatSync(file, { throwIfNoEntry: false });
    if (stat === undefined || (stat.isDirectory() && !recursive)) continue;
    // A folder on the way may be a link that leads out of HOME: the file's real place must be inside.
    const place = path.join(realpathSync(path.dirname(file)), path.basename(file));
    if (!isInside(place, realHome)) throw new RefusedCommandError(step.command, `${file} is really ${place}, outside the desktop's HOME`);
    rmSync(file, { recursive, force: true });
  }
}

const isInside = (place: string, realHome: string): boolean => place.startsWith(`${realHome}${path.sep}`);

/**
 * Carries out a `touch` step: writes `text` to the VM path in `home`, creating its folders. What
 * the desktop's apps left in HOME is followed only where it stays there: refused when a folder on
 * the way, or the file itself, is a link whose real place is outside HOME (or a link to nothing,
 * whose place cannot be told), before anything is created or written.
 */
export function writeHomeFile(vmPath: string, home: string, text: string): void {
  const file = homePath(vmPath, home);
  const realHome = realpathSync(home);
  const refuse = (why: string): never => {
    throw new Error(`refused to write ${JSON.stringify(vmPath)}: ${why}`);
  };
  // The nearest folder on the way that exists: every folder to be created goes under its real place.
  let existing = path.dirname(file);
  while (!existsSync(existing)) {
    if (lstatSync(existing, { throwIfNoEntry: false })?.isSymbolicLink()) refuse(`${existing} is a link to nothing`);
    existing = path.dirname(existing);
  }
  const folder = realpathSync(existing);
  if (folder !== realHome && !isInside(folder, realHome)) refuse(`${existing} is really ${folder}, outside the desktop's HOME`);
  mkdirSync(path.dirname(file), { recursive: true });
  if (lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink()) {
    let target = '';
    try {
      target = realpathSync(file);
    } catch {
      refuse(`${file} is a link to nothing`);
    }
    if (!isInside(target, realHome)) refuse(`${file} is a link to ${target}, outside the desktop's HOME`);
  }
  writeFileSync(file, text);
}

/** The paths a shell glob (`*`, `?` within a name) matches under `home`; none when nothing matches. */
function expandGlob(pattern: string, home: string): string[] {
  const parts = path.relative(home, pattern).split(path.sep);
  let matches = [home];
  for (const part of parts) {
    if (!/[*?]/.test(part)) {
      matches = matches.map((dir) => path.join(dir, part));
      continue;
    }
    const name = new RegExp(`^${part.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
    matches = matches.flatMap((dir) => {
      const entries = statSync(dir, { throwIfNoEntry: false })?.isDirectory() ? readdirSync(dir) : [];
      // As in a shell, * and ? do not match a leading dot.
      return entries.filter((entry) => name.test(entry) && !(entry.startsWith('.') && !part.startsWith('.'))).map((entry) => path.join(dir, entry));
    });
  }
  return matches;
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
