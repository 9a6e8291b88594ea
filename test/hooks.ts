import * as path from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { stopTestStack } from './stack';
import { startUnitEnv, stopUnitEnv } from './unit/workflow-env';

// Workers in tests log errors only: state changes and the activity failures that tests provoke on
// purpose would drown the report.
Runtime.install({ logger: new DefaultLogger('ERROR') });

/**
 * Wall time per test file, hooks included: from the end of the test before its first one (or the
 * run's start) to the end of its last one. Printed after the run, slowest first, so the suite's
 * time (kept under 30 minutes) can be read file by file.
 */
const fileTimes = new Map<string, number>();
let lastEnd = Date.now();

function recordTest(file: string | undefined): void {
  const now = Date.now();
  const name = file === undefined ? '(unknown file)' : path.relative(path.resolve(__dirname, '..', '..'), file);
  fileTimes.set(name, (fileTimes.get(name) ?? 0) + (now - lastEnd));
  lastEnd = now;
}

function printFileTimes(): void {
  const rows = [...fileTimes].sort(([, a], [, b]) => b - a);
  const total = rows.reduce((sum, [, ms]) => sum + ms, 0);
  console.log(`\n  wall time per test file, hooks included (${(total / 60_000).toFixed(1)} min in all; the 15 slowest):`);
  for (const [file, ms] of rows.slice(0, 15)) console.log(`    ${(ms / 1000).toFixed(0).padStart(5)} s  ${file}`);
}

/** The test files of a suite and of the suites in it. */
function filesOf(suite: Mocha.Suite): string[] {
  return [...(suite.file === undefined ? [] : [suite.file]), ...suite.suites.flatMap(filesOf)];
}

/**
 * Mocha root hooks: when the run holds unit-tier files (test/unit/), their Temporal server starts
 * and the workflows are bundled at once, beside the tests before them (on a second core); the
 * shared test stack starts on first use. Both stop once, after every test.
 */
export const mochaHooks = {
  beforeAll(this: Mocha.Context): void {
    const root = this.test?.parent;
    const unitDir = `${path.sep}test${path.sep}unit${path.sep}`;
    if (root !== undefined && filesOf(root).some((file) => file.includes(unitDir))) startUnitEnv();
  },
  afterEach(this: Mocha.Context): void {
    recordTest(this.currentTest?.file);
  },
  async afterAll(this: Mocha.Context): Promise<void> {
    this.timeout(60_000);
    await Promise.all([stopTestStack(), stopUnitEnv()]);
    if (fileTimes.size > 1) printFileTimes();
  },
};
