import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { daemonState, runsAnotherSpec, startDaemon, stopDaemon, type DaemonSpec } from '../../infra/daemon';

/**
 * The dev stack's pid files (infra/daemon.ts, issue 44 item 6): a pid is signalled only when its
 * process started when the pid file says. The "stranger" whose pid a stale file names is a
 * harmless node program of the test's own, in the test's process group; the test checks it lives.
 */
describe('daemons: a stale pid file signals no stranger', function () {
  this.timeout(30_000);
  let dataDir: string;
  let stranger: ChildProcess;
  /** The daemons the test started, killed after it whatever it asserted (a failed assertion stops it before stopDaemon), if still they. */
  let started: Array<{ pid: number; ticks: string | undefined }>;
  const idle: DaemonSpec = { name: 'idle', command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] };
  const pidFile = (): string => path.join(dataDir, 'run', 'idle.pid');
  const fields = (pid: number): string[] => {
    const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8') : '';
    return stat === '' ? [] : stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  };
  const alive = (pid: number): boolean => fields(pid).length > 0 && fields(pid)[0] !== 'Z';
  /** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks after boot. */
  const ticks = (pid: number): string | undefined => fields(pid)[19];

  beforeEach(async () => {
    started = [];
    dataDir = mkdtempSync(path.join(tmpdir(), 'coda-daemon-'));
    mkdirSync(path.join(dataDir, 'run'));
    // Another node program, as the daemon's would be: same executable, same kind of command line.
    stranger = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    await new Promise((resolve) => stranger.once('spawn', resolve));
  });
  afterEach(() => {
    stranger.kill('SIGKILL');
    for (const daemon of started) if (alive(daemon.pid) && ticks(daemon.pid) === daemon.ticks) process.kill(daemon.pid, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('records the start of the process it spawns, and stops it by that record', async () => {
    const daemon = startDaemon(dataDir, idle);
    started.push({ pid: daemon.pid!, ticks: ticks(daemon.pid!) });
    const record = JSON.parse(readFileSync(pidFile(), 'utf8')) as { pid: number; start?: string };
    assert.equal(record.pid, daemon.pid);
    assert.match(record.start ?? '', new RegExp(`^[0-9a-f-]{36}/${ticks(record.pid)}$`));
    assert.equal(daemonState(dataDir, 'idle').running, true);
    assert.equal(await stopDaemon(dataDir, 'idle', 5_000), true);
    assert.equal(alive(record.pid), false);
    assert.equal(existsSync(pidFile()), false);
  });

  it('takes a pid file without a start, or with another start, as stale: down and up signal nothing, up starts its own', async () => {
    const pid = stranger.pid!;
    const start = ticks(pid);
    const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const stale = [
      { pid, command: process.execPath, startedAt: '' },
      { pid, command: process.execPath, startedAt: '', start: `${bootId}/${Number(start) - 1}`, spec: 'another' },
      { pid, command: process.execPath, startedAt: '', start: `00000000-0000-0000-0000-000000000000/${start}` },
    ];
    for (const record of stale) {
      writeFileSync(pidFile(), JSON.stringify(record));
      assert.deepEqual(daemonState(dataDir, 'idle'), { name: 'idle', pid: undefined, running: false, log: path.join(dataDir, 'logs', 'idle.log') });
      assert.equal(runsAnotherSpec(dataDir, idle), false, 'up would restart the stranger');
      assert.equal(await stopDaemon(dataDir, 'idle', 1_000), false);
      assert.equal(existsSync(pidFile()), false, 'the stale file is removed');
    }
    writeFileSync(pidFile(), JSON.stringify(stale[0]));
    const own = startDaemon(dataDir, idle);
    started.push({ pid: own.pid!, ticks: ticks(own.pid!) });
    assert.notEqual(own.pid, pid);
    assert.equal(await stopDaemon(dataDir, 'idle', 5_000), true);
    // A stranger taken for the daemon would be gone or a zombie here: stopDaemon returns only once its process is.
    assert.equal(alive(pid), true, 'the stranger was signalled');
  });
});
