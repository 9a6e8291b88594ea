import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { threadStates, untilIdle } from '../../../io/process';

/**
 * untilIdle, what a settle pause of typed input waits on (activities/desktop/local/input.ts): a
 * process whose threads all sleep is idle at once; one that keeps a thread running never is, and
 * the wait gives up at its limit; a process that is gone is not waited for.
 */
describe('untilIdle: waiting for an app to catch up with its input', () => {
  const children: ChildProcess[] = [];
  const start = (args: string[]): number => {
    const child = spawn(process.execPath, args, { stdio: 'ignore' });
    children.push(child);
    assert.ok(child.pid !== undefined);
    return child.pid;
  };
  after(() => children.forEach((c) => c.kill('SIGKILL')));

  it('is true within a few looks for a sleeping process, false at its limit for a busy one, false at once for a gone one', async () => {
    const sleeping = start(['-e', 'setTimeout(() => {}, 60_000)']);
    const busy = start(['-e', 'for (;;) {}']);
    assert.equal(await untilIdle(sleeping, 5_000), true);
    const began = Date.now();
    assert.equal(await untilIdle(busy, 300), false);
    assert.ok(Date.now() - began >= 300, 'a busy process is waited for until the limit');
    assert.ok(threadStates(busy).includes('R'), `the busy process has a running thread: ${threadStates(busy).join('')}`);
    const gone = spawn('true');
    await new Promise((resolve) => gone.once('exit', resolve));
    assert.deepEqual(threadStates(gone.pid ?? 0), []);
    assert.equal(await untilIdle(gone.pid ?? 0, 5_000), false);
  });
});
