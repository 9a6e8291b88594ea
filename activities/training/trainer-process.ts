import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

/**
 * A trainer as a child process of the GPU worker: in its own process group (so stopping it stops
 * everything it started) and started through util-linux's `setpriv --pdeathsig SIGKILL`, so the
 * kernel kills it when the worker dies, even by SIGKILL: a retry on another worker must not race a
 * trainer left behind. Its output goes to a log file and, line by line, to `onLine`, with the
 * command's hidden texts written `***` (the log is uploaded to S3 and its tail goes into errors).
 */

export interface TrainerCommand {
  readonly program: readonly string[];
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  /** Texts its log never shows, written `***` (the reward service's token, should a trainer print its environment or the URL its launcher completed). */
  readonly hidden?: readonly string[];
}

export interface TrainerProcess {
  readonly pid: number;
  /** The exit code (or the signal that ended it). */
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>;
  /** SIGTERM to the process group, SIGKILL after `graceMs`; resolves once the leader is gone and the group is killed. */
  stop(graceMs: number): Promise<void>;
}

const SETPRIV = ['setpriv', '--pdeathsig', 'SIGKILL', '--'];

/** Throws when setpriv is missing: without it a trainer would outlive a killed worker. */
export function checkSetpriv(): void {
  const probe = spawnSync('setpriv', ['--version'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error('setpriv (util-linux) is not available: the GPU worker needs it so that trainers die with the worker');
  }
}

const signalGroup = (pid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pid, signal);
  } catch {
    /* the group is gone */
  }
};

export function startTrainer(command: TrainerCommand, logFile: string, onLine: (line: string) => void): TrainerProcess {
  const [program, ...programArgs] = command.program;
  if (program === undefined) throw new Error('the trainer program is empty');
  const log = createWriteStream(logFile, { flags: 'a' });
  const shown = (text: string): string => (command.hidden ?? []).reduce((t, secret) => t.split(secret).join('***'), text);
  log.write(`--- ${new Date().toISOString()} ${shown([...command.program, ...command.args].join(' '))}\n`);
  const child: ChildProcess = spawn(SETPRIV[0] as string, [...SETPRIV.slice(1), program, ...programArgs, ...command.args], {
    cwd: command.cwd,
    env: command.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start the trainer ${program}`);
  for (const stream of [child.stdout, child.stderr]) {
    if (stream === null) continue;
    createInterface({ input: stream }).on('line', (raw) => {
      const line = shown(raw);
      log.write(`${line}\n`);
      onLine(line);
    });
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => log.end(() => resolve({ code, signal })));
  });
  return {
    pid,
    exited,
    async stop(graceMs) {
      signalGroup(pid, 'SIGTERM');
      const timer = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), graceMs).unref());
      if ((await Promise.race([exited, timer])) === 'late') signalGroup(pid, 'SIGKILL');
      await exited;
      // What the trainer started and left behind is still in its group.
      signalGroup(pid, 'SIGKILL');
    },
  };
}

/** The last lines of a log, for an error message. */
export function logTail(logFile: string, lines = 20): string {
  return existsSync(logFile) ? readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n') : '(no log)';
}
