import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runsAnotherSpec, startDaemon, stopDaemon, type DaemonSpec } from '../../infra/daemon';

/**
 * A daemon started with one key is "another start" for a spec holding another (infra/daemon.ts
 * secretEnv): the demo's planner key, made per start, reaches workers a previous run left running.
 * The pid file keeps a digest, never the key, and is readable by its user alone.
 */
describe('the dev stack restarts a process given another secret', () => {
  let dataDir: string;
  before(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'coda-daemon-secrets-'));
  });
  after(async () => {
    await stopDaemon(dataDir, 'sleeper', 2_000);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('tells a start with another key apart, from a digest in a pid file of mode 0600', () => {
    const spec = (key: string): DaemonSpec => ({ name: 'sleeper', command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], env: { CODA_TEST_KEY: key }, secretEnv: ['CODA_TEST_KEY'] });
    const key = 'first-key-of-this-start-0123456789';
    startDaemon(dataDir, spec(key));
    assert.equal(runsAnotherSpec(dataDir, spec(key)), false, 'the same key: the same start');
    assert.equal(runsAnotherSpec(dataDir, spec('second-key-of-another-start-012345')), true, 'another key: restart');
    const pidFile = path.join(dataDir, 'run', 'sleeper.pid');
    assert.ok(!readFileSync(pidFile, 'utf8').includes(key), 'no key in the pid file');
    assert.equal(statSync(pidFile).mode & 0o777, 0o600);
  });
});
