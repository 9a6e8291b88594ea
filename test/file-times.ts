import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

/**
 * What each test file cost: its wall time (hooks included) and the CPU time of the mocha process
 * that ran it plus the processes it started and reaped meanwhile (desktops, python, trainers). The
 * shared Temporal and MinIO are counted only in the run's total (the machine's busy core-minutes).
 * Worker processes append their files' records to a folder the global setup names (test/global.ts);
 * the main process prints them after the run and writes them for the next run's file order.
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
