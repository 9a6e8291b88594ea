import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { startEphemeralStack, type EphemeralStack } from '../infra/ephemeral';
import { SHARED_STACK_VAR } from './stack';
import { FILE_TIMES_VAR, printFileTimes, readFileTimes, writeRecordedTimes } from './file-times';

/**
 * The whole suite's global fixtures (.mocharc.js), run once in mocha's main process before its
 * worker processes start: one Temporal dev server and one MinIO for every test file, handed to the
 * workers through the environment they inherit (test/stack.ts reads it). After the run: each file's
 * wall and CPU time, and the core-minutes the whole machine was busy while the suite ran.
 */

let stack: EphemeralStack | undefined;
let timesDir: string | undefined;
let startedAt: { readonly ms: number; readonly busyTicks: number } | undefined;

/** The machine's busy CPU time so far, in clock ticks (USER_HZ, 100 a second), from /proc/stat. */
function busyTicks(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0); // idle and iowait
  return fields.reduce((sum, n) => sum + n, 0) - idle;
}

/** The entries of `env` that the current environment lacks or holds otherwise. */
function differences(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([name, value]) => process.env[name] !== value));
}

export async function mochaGlobalSetup(): Promise<void> {
  startedAt = { ms: Date.now(), busyTicks: busyTicks() };
  timesDir = mkdtempSync(path.join(tmpdir(), 'coda-test-times-'));
  process.env[FILE_TIMES_VAR] = timesDir;
  stack = await startEphemeralStack('coda-test');
  process.env[SHARED_STACK_VAR] = JSON.stringify(differences(stack.env));
}

export async function mochaGlobalTeardown(): Promise<void> {
  await stack?.stop();
  if (timesDir === undefined || startedAt === undefined) return;
  const times = readFileTimes(readdirSync(timesDir).map((name) => readFileSync(path.join(timesDir!, name), 'utf8')));
  rmSync(timesDir, { recursive: true, force: true });
  printFileTimes(times, { coreMinutesBusy: (busyTicks() - startedAt.busyTicks) / 6_000, wallMinutes: (Date.now() - startedAt.ms) / 60_000 });
  writeRecordedTimes(times);
}
