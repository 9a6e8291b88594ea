import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { FILE_TIMES_VAR, printFileTimes, readFileTimes, type FileTime } from './file-times';

/**
 * A mocha run's clock, kept by its global setup in the main process: a folder for the workers'
 * per-file times (handed to them through FILE_TIMES_VAR) and the machine's busy CPU at the start.
 */
export interface RunClock {
  readonly dir: string;
  readonly ms: number;
  readonly busyTicks: number;
}

/** The machine's busy CPU time so far, in clock ticks (USER_HZ, 100 a second), from /proc/stat. */
function busyTicks(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0); // idle and iowait
  return fields.reduce((sum, n) => sum + n, 0) - idle;
}

/** Starts the clock: the workers write each file's times into its folder (test/hooks.ts). */
export function startRunClock(): RunClock {
  const dir = mkdtempSync(path.join(tmpdir(), 'coda-test-times-'));
  process.env[FILE_TIMES_VAR] = dir;
  return { dir, ms: Date.now(), busyTicks: busyTicks() };
}

/** Prints every file's wall and CPU time, the run's minutes and the machine's core-minutes busy; returns the files' times. */
export function stopRunClock(clock: RunClock): FileTime[] {
  const times = readFileTimes(readdirSync(clock.dir).map((name) => readFileSync(path.join(clock.dir, name), 'utf8')));
  rmSync(clock.dir, { recursive: true, force: true });
  printFileTimes(times, { coreMinutesBusy: (busyTicks() - clock.busyTicks) / 6_000, wallMinutes: (Date.now() - clock.ms) / 60_000 });
  return times;
}
