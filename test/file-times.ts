import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

/**
 * What each test file cost: its wall time (hooks included) and the CPU time of the mocha process
 * that ran it plus the processes it started and reaped meanwhile (desktops, python, trainers). The
 * shared Temporal and MinIO are counted only in the run's total (the machine's busy core-minutes).
 * Worker processes append their files' records to a folder the global setup names (startRunClock, in
 * test/global.ts and test/unit-global.ts); the main process prints them after the run (stopRunClock)
 * and the whole suite writes them for the next run's file order.
 */

export interface FileTime {
  readonly file: string;
  readonly wallMs: number;
  readonly cpuMs: number;
}

/** The folder the workers write their records to, named by the global setup. */
export const FILE_TIMES_VAR = 'CODA_TEST_TIMES_DIR';

/** Where the latest run's times are written, to copy to RECORDED_TIMES when the order should follow. */
const LATEST_TIMES = path.resolve(__dirname, '..', '..', 'test-artifacts', 'file-times.json');

/** Each file's seconds in a recent run, which .mocharc.js starts slowest first (see docs/tests.md). */
export const RECORDED_TIMES = path.resolve(__dirname, '..', '..', 'test', 'file-times.json');

/** The records in JSON-lines texts, one record per file (a file's parts added up). */
export function readFileTimes(texts: readonly string[]): FileTime[] {
  const byFile = new Map<string, FileTime>();
  for (const line of texts.flatMap((text) => text.split('\n')).filter((l) => l.trim() !== '')) {
    const record = JSON.parse(line) as FileTime;
    const seen = byFile.get(record.file);
    byFile.set(record.file, seen === undefined ? record : { file: record.file, wallMs: seen.wallMs + record.wallMs, cpuMs: seen.cpuMs + record.cpuMs });
  }
  return [...byFile.values()];
}

const minutes = (ms: number): string => (ms / 60_000).toFixed(1);

/** The table printed after a run: every file, slowest first, then the totals. */
export function printFileTimes(times: readonly FileTime[], run?: { readonly coreMinutesBusy: number; readonly wallMinutes: number }): void {
  const rows = [...times].sort((a, b) => b.wallMs - a.wallMs);
  const wall = rows.reduce((sum, t) => sum + t.wallMs, 0);
  const cpu = rows.reduce((sum, t) => sum + t.cpuMs, 0);
  console.log(`\n  per test file, hooks included: wall s, CPU s (the mocha process and what it started); ${rows.length} files, ${minutes(wall)} min of wall, ${minutes(cpu)} min of CPU in all`);
  for (const t of rows) console.log(`    ${(t.wallMs / 1000).toFixed(0).padStart(5)} s ${(t.cpuMs / 1000).toFixed(0).padStart(6)} s  ${t.file}`);
  if (run !== undefined) {
    console.log(`  the run: ${run.wallMinutes.toFixed(1)} min, the machine's cores busy ${run.coreMinutesBusy.toFixed(1)} core-minutes (the shared servers included)`);
  }
}

/** Writes the run's seconds per file to test-artifacts/file-times.json. */
export function writeRecordedTimes(times: readonly FileTime[]): void {
  const seconds = Object.fromEntries([...times].sort((a, b) => b.wallMs - a.wallMs).map((t) => [t.file, Math.round(t.wallMs / 1000)]));
  mkdirSync(path.dirname(LATEST_TIMES), { recursive: true });
  writeFileSync(LATEST_TIMES, `${JSON.stringify(seconds, null, 2)}\n`);
}

/** The recorded seconds per file (empty when there is no record). */
export function recordedTimes(file = RECORDED_TIMES): Record<string, number> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

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
