import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Command } from 'commander';
import { registerRuns } from '../../../cli/commands/runs';
import { registerView } from '../../../cli/commands/view';
import { UsageError, type LazyContext } from '../../../cli/context';

/**
 * The coda CLI's usage errors, checked before anything starts or connects: no server (the CLI
 * against the real stack: test/cli/coda.test.ts). One bad value per option runs as its own coda
 * process, for the exit code 2 and the message on stderr; the other values go through the same
 * command's code in this process: a coda process loads every command's modules, most of a second
 * of CPU each.
 */
const CODA = path.resolve(__dirname, '..', '..', '..', 'cli', 'coda.js');
const run = promisify(execFile);

/** `coda ...args` as its own process: it must fail with exit code 2 and exactly `message` on stderr. */
async function refusedByCoda(args: string[], message: string): Promise<void> {
  await assert.rejects(run(process.execPath, [CODA, ...args], { timeout: 60_000 }), (err: { code?: number; stderr?: string }) => {
    assert.equal(err.code, 2, `${args.join(' ')}: ${err.stderr}`);
    assert.equal(err.stderr, `${message}\n`);
    return true;
  });
}

/** The usage error of `args` through the command `register` adds, with a context that fails the test if anything asks for it. */
async function usageError(register: (program: Command, ctx: LazyContext) => void, args: string[]): Promise<string> {
  const program = new Command('coda').exitOverride();
  register(program, () => assert.fail(`${args.join(' ')} reached for the deployment`));
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch (err) {
    assert.ok(err instanceof UsageError, String(err));
    return err.message;
  }
  return assert.fail(`${args.join(' ')} was accepted`);
}

describe('coda view: --port checked before anything starts (no stack needed)', function () {
  this.timeout(120_000);

  it('refuses a port outside 1 to 65535 with the usage error, exit code 2, and starts nothing', async () => {
    const expected = (port: string) => `--port: expected a port number from 1 to 65535, got "${port}"`;
    await refusedByCoda(['view', '--port', '70000'], expected('70000'));
    for (const port of ['65536', '99999', '123456', '8o80']) assert.equal(await usageError(registerView, ['view', '--port', port]), expected(port));
  });
});

describe('coda runs: --limit checked before anything connects (no stack needed)', function () {
  this.timeout(120_000);

  it('refuses a limit that is not a number of rows with the usage error and exit code 2', async () => {
    const expected = (limit: string) => `--limit: expected a number of rows from 1 to 999999, got "${limit}"`;
    await refusedByCoda(['runs', '--limit', '0'], expected('0'));
    for (const limit of ['all', '-5', '1e3']) assert.equal(await usageError(registerRuns, ['runs', '--limit', limit]), expected(limit));
  });
});
