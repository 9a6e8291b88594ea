import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { closeCommandHelper, commandHelperPid, runCommand, runCommandOutput } from '../../io/process';

/**
 * Short commands run by the worker's command helper (io/command-helper.ts): what they print and
 * how they fail is what Node's own execFile, run in the worker, reports; a helper that dies fails
 * the commands it held, and the next command starts another.
 */
const env = { PATH: process.env.PATH ?? '' };

/** How execFile in this process reports the same command: its exit code, or the error's code. */
function direct(command: string, args: string[]): Promise<{ code: unknown; stdout: string; stderr: string }> {
  return new Promise((resolve) => execFile(command, args, { env }, (error, stdout, stderr) => resolve({ code: (error as NodeJS.ErrnoException | null)?.code ?? 0, stdout, stderr })));
}

describe('short commands through the command helper', () => {
  after(() => closeCommandHelper());

  it('gives what the command printed, its input passed, and runs commands side by side', async () => {
    const { stdout, stderr } = await runCommandOutput('sh', ['-c', 'cat; echo err >&2'], { env, timeoutMs: 5_000, input: 'in\n' });
    assert.deepEqual([stdout.toString(), stderr.toString()], ['in\n', 'err\n']);
    const outputs = await Promise.all(Array.from({ length: 8 }, (_, i) => runCommand('echo', [String(i)], { env, timeoutMs: 5_000 })));
    assert.deepEqual(outputs.map((o) => o.toString().trim()), ['0', '1', '2', '3', '4', '5', '6', '7']);
    assert.notEqual(commandHelperPid(), undefined, 'a helper runs');
    assert.notEqual(commandHelperPid(), process.pid);
  });

  it("fails as execFile in the worker fails: a missing program, an exit code with the program's words, a timeout, a signal", async () => {
    assert.equal((await direct('no-such-program-coda', [])).code, 'ENOENT');
    await assert.rejects(runCommand('no-such-program-coda', [], { env, timeoutMs: 5_000 }), { name: 'CommandError', message: 'no-such-program-coda is not installed' });
    const three = await direct('sh', ['-c', 'echo out; echo why >&2; exit 3']);
    assert.deepEqual(three, { code: 3, stdout: 'out\n', stderr: 'why\n' });
    await assert.rejects(runCommand('sh', ['-c', 'echo out; echo why >&2; exit 3'], { env, timeoutMs: 5_000 }), { message: 'sh exited with code 3: why', stdout: 'out\n', stderr: 'why\n' });
    await assert.rejects(runCommand('sleep', ['5'], { env, timeoutMs: 200 }), { message: 'sleep timed out after 200 ms' });
    await assert.rejects(runCommand('sh', ['-c', 'kill -KILL $$'], { env, timeoutMs: 5_000 }), { message: 'sh failed (SIGKILL)' });
  });

  it('a helper that dies fails the commands it held, not repeated; the next command starts another helper', async () => {
    await runCommand('true', [], { env, timeoutMs: 5_000 });
    const first = commandHelperPid()!;
    const held = runCommand('sleep', ['5'], { env, timeoutMs: 10_000 });
    process.kill(first, 'SIGKILL');
    await assert.rejects(held, { name: 'CommandError', message: 'sleep failed (the command helper killed by SIGKILL)' });
    assert.equal((await runCommand('echo', ['again'], { env, timeoutMs: 5_000 })).toString(), 'again\n');
    assert.notEqual(commandHelperPid(), first, 'another helper');
  });
});
