import { appendFileSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { closeCommandHelper } from '../io/process';
import { stopTestStack } from './stack';
import { startUnitEnv, stopUnitEnv } from './unit/workflow-env';
import { FILE_TIMES_VAR, printFileTimes, type FileTime } from './file-times';

// Workers in tests log errors only: state changes and the activity failures that tests provoke on
// purpose would drown the report.
Runtime.install({ logger: new DefaultLogger('ERROR') });

/**
 * In the whole suite's worker processes (mocha --parallel sets MOCHA_WORKER_ID), each worker takes
 * its own slot of the ports and X displays (infra/ephemeral.ts claimSlot), so that two files
 * running at once never pick the same one. CODA_TEST_JOBS is the number of workers (.mocharc.js).
 */
const workerId = process.env.MOCHA_WORKER_ID;
if (workerId !== undefined) {
  const jobs = Number(process.env.CODA_TEST_JOBS ?? 2);
  process.env.CODA_CLAIM_SLOT = `${Number(workerId) % jobs}/${jobs}`;
}

/** CPU time of this process and of the children it has reaped, in ms (/proc/self/stat's cutime, cstime). */
function cpuMs(): number {
  const own = process.cpuUsage();
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const children = Number(fields[13]) + Number(fields[14]); // cutime, cstime: fields 16 and 17 of stat
  return (own.user + own.system) / 1000 + children * 10;
}

/**
 * Wall and CPU time per test file, hooks included: from the end of the test before its first one
 * (or the file's start) to the end of its last one, its `after` hooks added at the end of the file
 * (in a worker, each file is a run of its own). Printed after the run, slowest first.
 */
const fileTimes = new Map<string, FileTime>();
let last = { ms: Date.now(), cpuMs: cpuMs() };
let lastFile: string | undefined;

function recordTest(file: string | undefined): void {
  const now = { ms: Date.now(), cpuMs: cpuMs() };
  const name = file === undefined ? '(unknown file)' : path.relative(path.resolve(__dirname, '..', '..'), file);
  const seen = fileTimes.get(name) ?? { file: name, wallMs: 0, cpuMs: 0 };
  fileTimes.set(name, { file: name, wallMs: seen.wallMs + now.ms - last.ms, cpuMs: seen.cpuMs + now.cpuMs - last.cpuMs });
  last = now;
  lastFile = file;
}

/** The test files of a suite and of the suites in it. */
function filesOf(suite: Mocha.Suite): string[] {
  return [...(suite.file === undefined ? [] : [suite.file]), ...suite.suites.flatMap(filesOf)];
}

/**
 * Mocha root hooks. In both tiers (mocha --parallel) they run around each file in its worker: the
 * records go to the global setup's folder, and the shared servers stay up for the next file (the
 * global setup, test/global.ts or test/unit-global.ts, stops them after the run); a file with
 * unit-tier tests (test/unit/) connects the worker to the Temporal server and bundles the workflows
 * at once, beside the tests before it. In a run of one process (a file run with --no-config), they
 * run once, and that process's servers stop after every test.
 */
export const mochaHooks = {
  beforeAll(this: Mocha.Context): void {
    last = { ms: Date.now(), cpuMs: cpuMs() };
    const root = this.test?.parent;
    const unitDir = `${path.sep}test${path.sep}unit${path.sep}`;
    if (root !== undefined && filesOf(root).some((file) => file.includes(unitDir))) startUnitEnv();
  },
  afterEach(this: Mocha.Context): void {
    recordTest(this.currentTest?.file);
  },
  async afterAll(this: Mocha.Context): Promise<void> {
    this.timeout(60_000);
    // The command helper's CPU (and its commands') counts as this process's once it is reaped.
    await closeCommandHelper();
    if (lastFile !== undefined) recordTest(lastFile);
    const dir = process.env[FILE_TIMES_VAR];
    if (dir !== undefined && workerId !== undefined) {
      appendFileSync(path.join(dir, `${process.pid}.jsonl`), [...fileTimes.values()].map((t) => `${JSON.stringify(t)}\n`).join(''));
      fileTimes.clear();
      lastFile = undefined;
      return;
    }
    await Promise.all([stopTestStack(), stopUnitEnv()]);
    if (fileTimes.size > 1) printFileTimes([...fileTimes.values()]);
  },
};
