import { startUnitServer, UNIT_SERVER_VAR } from './unit/workflow-env';
import { startRunClock, stopRunClock, type RunClock } from './file-times';

/**
 * The unit tier's global fixtures (.mocharc.unit.js), run once in mocha's main process before its
 * worker processes start: the Temporal CLI's dev server in memory, whose address the workers
 * inherit (UNIT_SERVER_VAR; test/unit/workflow-env.ts connects to it). No MinIO. After the run:
 * each file's wall and CPU time and the machine's core-minutes busy, as the whole suite prints them.
 */

let server: Awaited<ReturnType<typeof startUnitServer>> | undefined;
let clock: RunClock | undefined;

export async function mochaGlobalSetup(): Promise<void> {
  clock = startRunClock();
  server = await startUnitServer();
  process.env[UNIT_SERVER_VAR] = server.address;
}

export async function mochaGlobalTeardown(): Promise<void> {
  await server?.teardown();
  if (clock !== undefined) stopRunClock(clock);
}
