import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chooseAccelerator } from '../../activities/desktop/qemu/accelerator';
import { projectVmImage } from '../../activities/desktop/qemu/image';
import { QemuProvider } from '../../activities/desktop/qemu/qemu-provider';
import { vmSnapshot, type VmShape } from '../../activities/desktop/qemu/snapshot';
import { freePort } from '../../infra/ephemeral';
import { runCommand } from '../../io/process';
import { VmHttpError } from '../../io/vm-http-error';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { Registry } from 'prom-client';
import { createDesktopActivities, type Observation } from '../../activities/desktop/activities';
import { DesktopPool } from '../../activities/desktop/pool';
import { desktopMetrics } from '../../activities/metrics';
import { s3TaskReader, stageTasks } from '../../activities/tasks/library';
import { testStack } from '../stack';
import { rejectsWith, taskOf } from '../support/desktop';
import type { QemuHostConfig } from '../../config/schema';
import { QemuDesktop } from '../../activities/desktop/qemu/qemu-desktop';

/**
 * Real QEMU VMs of the project's image (infra/vm-image: Debian 12, its apps, the project's in-VM
 * server), under TCG on these machines (their /dev/kvm boots no stock kernel). The image and its
 * snapshot come from the artifact cache, built on a cold one (minutes, said on stderr).
 */

const digest = (png: Buffer): string => createHash('sha256').update(png).digest('hex');

/** The pids of the QEMU processes whose command line names `dir` (from /proc, as the issue asks). */
function qemusIn(dir: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return argv[0]?.endsWith('qemu-system-x86_64') === true && argv.some((a) => a.includes(dir));
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('QEMU VMs a vm-host runs itself: the project image, its cached snapshot, loadvm resets', function () {
  this.timeout(1_800_000);
  let dir: string;
  let shape: VmShape;
  let provider: QemuProvider;
  const snapshotOf = (s: VmShape) => () => vmSnapshot(s, { bootTimeoutMs: 900_000, port: freePort });

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'coda-qemu-'));
    const image = await projectVmImage();
    const { accelerator } = await chooseAccelerator('auto', image.kernel);
    shape = { image, memoryMiB: 2048, cpus: 2, accelerator, screen: { width: 1280, height: 800 } };
    await snapshotOf(shape)();
    provider = new QemuProvider({ ...shape, name: 'qemu-test/0', dir: path.join(dir, 'vm-0'), serverPort: await freePort(), appPort: await freePort() }, snapshotOf(shape), 120_000);
  });

  after(async () => {
    await provider?.stop();
    assert.deepEqual(qemusIn(dir), [], 'no QEMU is left running after stop');
    rmSync(dir, { recursive: true, force: true });
  });

  it('decides the accelerator once per machine and says why', async () => {
    const first = await chooseAccelerator('auto', shape.image.kernel);
    const again = await chooseAccelerator('auto', shape.image.kernel);
    assert.deepEqual(again, first);
    assert.equal(first.accelerator, shape.accelerator);
    assert.match(first.reason, /KVM|kvm/);
    assert.deepEqual(await chooseAccelerator('tcg', shape.image.kernel), { accelerator: 'tcg', reason: "named in the host's config" });
  });

  it('starts from the snapshot, and a loadvm reset brings back its screen and its files, in the same QEMU', async () => {
    await provider.revert();
    const clean = digest(await provider.client.screenshot());
    await provider.client.writeFile('/home/user/Downloads/left-by-the-agent.txt', 'dirty\n');
    await provider.client.launch(['xmessage', '-geometry', '+200+200', 'left by the agent']);
    let dirty = clean;
    for (let i = 0; i < 60 && dirty === clean; i++) {
      await sleep(1000);
      dirty = digest(await provider.client.screenshot());
    }
    assert.notEqual(dirty, clean, 'the window the agent opened shows');
    assert.equal(await provider.client.readFile('/home/user/Downloads/left-by-the-agent.txt'), 'dirty\n');

    await provider.revert();
    assert.equal(digest(await provider.client.screenshot()), clean, "the snapshot's screen");
    const gone = await rejectsWith(provider.client.readFile('/home/user/Downloads/left-by-the-agent.txt'), VmHttpError);
    assert.equal(gone.status, 500);
    assert.equal(provider.starts, 1, 'reset by loadvm, not by a new QEMU');
  });

  it("runs the image's own server on the image's desktop: pyautogui moves the pointer, AT-SPI answers, pdflatex compiles (a failing compile is the host-run server's test)", async () => {
    await provider.revert();
    const clicked = await provider.client.execute(['python', '-c', 'import pyautogui; pyautogui.FAILSAFE = False; pyautogui.moveTo(321, 234)']);
    assert.equal(clicked.returncode, 0, clicked.error);
    assert.deepEqual(await provider.client.cursorPosition(), { x: 321, y: 234 });
    assert.match(await provider.client.accessibilityTree(), /^<\?xml|^<desktop-frame|<desktop/);
    await provider.client.writeFile('/home/user/doc.tex', '\\documentclass{article}\\begin{document}Hello\\end{document}\n');
    assert.equal(await provider.client.texCheck('/home/user', 'doc', false), true);
  });

  it('brings back a VM whose QEMU was killed (kill -9): the next revert starts it from the snapshot', async () => {
    const pid = provider.pid;
    assert.ok(pid !== undefined);
    process.kill(pid, 'SIGKILL');
    await sleep(500);
    assert.equal(await provider.running(), false);
    await provider.revert();
    assert.equal(provider.starts, 2);
    assert.notEqual(provider.pid, pid);
    assert.equal(await provider.client.platform(), 'Linux');
    assert.deepEqual(qemusIn(dir), [provider.pid]);
  });

  it('leaves no QEMU behind when the process that started it is killed (kill -9 of a vm-host): QEMU gets its parent-death signal', async () => {
    const childDir = path.join(dir, 'child-vm');
    // A vm-host in miniature: a Node process that starts a VM from the snapshot, says so, and waits.
    const script = `
      const { QemuProvider } = require(${JSON.stringify(path.resolve(__dirname, '../../activities/desktop/qemu/qemu-provider'))});
      const shape = ${JSON.stringify(shape)};
      const spec = { ...shape, name: 'qemu-test/child', dir: ${JSON.stringify(childDir)}, serverPort: ${await freePort()}, appPort: ${await freePort()} };
      const provider = new QemuProvider(spec, async () => ${JSON.stringify(await snapshotOf(shape)())}, 120000);
      provider.revert().then(() => console.log('started ' + provider.pid), (err) => { console.error(err); process.exit(1); });
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const started = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => resolve(chunk.toString()));
      child.once('exit', (code) => reject(new Error(`the child exited with ${code} before its VM started`)));
    });
    assert.match(started, /^started \d+/);
    assert.equal(qemusIn(childDir).length, 1);
    child.kill('SIGKILL');
    for (let i = 0; i < 50 && qemusIn(childDir).length > 0; i++) await sleep(100);
    assert.deepEqual(qemusIn(childDir), []);
  });

  it("is a desktop of a qemu host's pool: the vm-host's reset activity resets TeXstudio D-01 on its VM and records QEMU's CPU over a loadvm reset; D-01 is scored there; a dead QEMU makes it unhealthy; close stops it", async () => {
    const host: QemuHostConfig = {
      id: 'qemu-test', kind: 'qemu', taskQueue: 'coda-vm-qemu-test', vms: 1, memoryMiB: shape.memoryMiB, cpus: shape.cpus, accelerator: shape.accelerator,
      image: 'project', screen: shape.screen, bootTimeoutSeconds: 900, readyTimeoutSeconds: 120, initializePauseSeconds: 0, initializeWaitScale: 0,
      downloads: { allowHosts: [], maxBytes: 1 << 20 }, appTimeoutSeconds: 60,
    };
    const desktop = new QemuDesktop(host, 0, { dir: path.join(dir, 'pool'), port: freePort });
    const pool = new DesktopPool({ hostId: host.id, hostQueue: host.taskQueue, size: 1, leaseTtlMs: 600_000, serves: 'any', deploymentServes: 'any', createDesktop: () => desktop });
    const { store } = await testStack();
    const prefix = `test/qemu-vm/${Date.now()}`;
    const registry = new Registry();
    const activities = createDesktopActivities({ pool, store, prefix, tasks: s3TaskReader(store), settleMs: 0, metrics: desktopMetrics(registry) });
    const task = taskOf('TeXstudio', 'D-01');
    const [entry] = await stageTasks(store, prefix, [task]);
    const lease = pool.lease({ requestId: 'qemu-test#0', software: 'TeXstudio' });
    const env = new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });
    const reset = (): Promise<Observation> => env.run(activities.resetDesktop, { leaseId: lease.leaseId, taskKey: entry!.key, ref: { run: 'qemu-test', software: 'TeXstudio', task: 'D-01', attempt: 0 }, replay: [], step: 0 });
    try {
      assert.equal(await desktop.healthy(), true, 'a desktop whose VM is not started yet is not a fault');
      await reset(); // starts the VM from the snapshot: no CPU figure (no QEMU before it)
      assert.ok(await store.exists((await reset()).screenshotKey));
      const text = await registry.metrics();
      const figure = (name: string) => Number(new RegExp(`^${name}\\{host="qemu-test",kind="fresh"\\} (\\S+)$`, 'm').exec(text)?.[1]);
      const [count, sum] = [figure('coda_desktop_reset_cpu_seconds_count'), figure('coda_desktop_reset_cpu_seconds_sum')];
      assert.equal(count, 1, 'one loadvm reset measured');
      assert.ok(sum > 0, `QEMU's CPU over the reset: ${sum} s`);
      assert.equal((await desktop.evaluate(task, { reason: 'ANS', answer: '13' })).passed, true);
      assert.equal((await desktop.evaluate(task, { reason: 'ANS', answer: '14' })).passed, false);
      process.kill(desktop.provider?.pid ?? -1, 'SIGKILL');
      await sleep(500);
      assert.equal(await desktop.healthy(), false);
    } finally {
      await desktop.close();
    }
    assert.deepEqual(qemusIn(path.join(dir, 'pool')), []);
  });

  it('refuses an image whose in-VM server will never answer (it cannot boot), as soon as its console says so, with the reason', async () => {
    // No root file system on the disk and an initrd that is not one: the kernel panics about 3 s into its boot.
    const initrd = path.join(dir, 'not-an-initrd.img');
    writeFileSync(initrd, 'not an initramfs\n'.repeat(32));
    const broken = { ...shape, image: { ...shape.image, id: `${shape.image.id}-unbootable`, disk: path.join(dir, 'empty.qcow2'), initrd } };
    await runCommand('qemu-img', ['create', '-q', '-f', 'qcow2', broken.image.disk, '64M'], { env: { PATH: process.env.PATH ?? '' }, timeoutMs: 30_000 });
    // The boot timeout is far away: the refusal comes from the console (its message says so), not from the clock.
    const err = await rejectsWith(vmSnapshot(broken, { bootTimeoutMs: 600_000, port: freePort, root: path.join(dir, 'cache') }), Error);
    assert.match(err.message, /will not answer: its boot failed \(Kernel panic - not syncing: VFS: Unable to mount root fs/);
    assert.match(err.message, /console's last lines: .+/);
    assert.deepEqual(qemusIn(dir).filter((pid) => pid !== provider.pid), [], 'the refused boot leaves no QEMU');
  });
});
