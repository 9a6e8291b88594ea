import { startEphemeralStack, type EphemeralStack } from '../infra/ephemeral';
import { SHARED_STACK_VAR } from './stack';
import { startRunClock, stopRunClock, writeRecordedTimes, type RunClock } from './file-times';

/**
 * The whole suite's global fixtures (.mocharc.js), run once in mocha's main process before its
 * worker processes start: one Temporal dev server and one MinIO for every test file, handed to the
 * workers through the environment they inherit (test/stack.ts reads it). After the run: each file's
 * wall and CPU time, and the core-minutes the whole machine was busy while the suite ran.
 */

let stack: EphemeralStack | undefined;
let clock: RunClock | undefined;

/** The entries of `env` that the current environment lacks or holds otherwise. */
function differences(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([name, value]) => process.env[name] !== value));
}

export async function mochaGlobalSetup(): Promise<void> {
  clock = startRunClock();
  stack = await startEphemeralStack('coda-test');
  process.env[SHARED_STACK_VAR] = JSON.stringify(differences(stack.env));
}

export async function mochaGlobalTeardown(): Promise<void> {
  await stack?.stop();
  if (clock !== undefined) writeRecordedTimes(stopRunClock(clock));
}
