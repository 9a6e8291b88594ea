import { createHash } from 'node:crypto';
import { readFileSync, renameSync } from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cachedArtifact, type CacheOptions } from '../../../io/artifact-cache';
import { createOsworldClient, type OsworldClient } from '../../../io/osworld-client';
import { runCommand } from '../../../io/process';
import { hostEnv, overlayOf, QemuVm, qemuArgs, type Accelerator, type QemuVmSpec, type VmImage } from './qemu-vm';

/**
 * The memory snapshot VMs start from and reset to: the image booted once, its in-VM server
 * answering and its screen settled, saved by `savevm` into the boot's overlay. Kept in the
 * artifact cache by the image and everything the snapshot's memory depends on (the accelerator:
 * a snapshot taken under TCG does not load under KVM; memory, CPUs, the screen, QEMU's version).
 */

/** What a VM is made of, besides its name, folder and ports. */
export interface VmShape {
  readonly image: VmImage & { readonly id: string };
  readonly memoryMiB: number;
  readonly cpus: number;
  readonly accelerator: Accelerator;
  readonly screen: { readonly width: number; readonly height: number };
}

export interface SnapshotOptions extends CacheOptions {
  /** How long a first boot may take until the in-VM server answers with a settled screen. */
  readonly bootTimeoutMs: number;
  /** Free loopback ports for the booting VM's forwards. */
  readonly port: () => Promise<number>;
}

let version: Promise<string> | undefined;

/** QEMU's version line, asked once per process (every snapshot lookup is keyed by it). */
export function qemuVersion(): Promise<string> {
  version ??= runCommand('qemu-system-x86_64', ['--version'], { env: hostEnv(), timeoutMs: 30_000 }).then((out) => out.toString('utf8').split('\n')[0]!.trim());
  return version;
}

/** The snapshot overlay's path, from the cache or made now by booting the image once (`log` says so). */
export async function vmSnapshot(shape: VmShape, options: SnapshotOptions): Promise<string> {
  const log = options.log ?? ((line: string) => console.error(line));
  const { image, memoryMiB, cpus, accelerator, screen } = shape;
  // The command line as any VM of this shape gets it (its folder and ports aside): a snapshot loads only on the line it was taken on.
  const line = qemuArgs({ ...shape, name: 'vm', dir: '/vm', serverPort: 1, appPort: 2 }, '/vm/disk.qcow2').join(' ');
  const inputs = { image: image.id, memoryMiB, cpus, accelerator, screen: `${screen.width}x${screen.height}`, qemu: await qemuVersion(), line };
  const entry = await cachedArtifact(
    {
      kind: 'vm-snapshot',
      inputs,
      build: async (dir) => {
        log(`VM snapshot: booting the image once under ${accelerator.toUpperCase()} to snapshot it (${accelerator === 'tcg' ? 'about 2 minutes here' : 'seconds'})`);
        const spec: QemuVmSpec = { ...shape, name: 'snapshot', dir: path.join(dir, 'boot'), serverPort: await options.port(), appPort: await options.port() };
        const began = Date.now();
        const vm = await QemuVm.start(spec);
        try {
          const client = createOsworldClient(`http://127.0.0.1:${spec.serverPort}`, { retries: 0 });
          await untilSettled(client, options.bootTimeoutMs, () => vm.process.problem(), spec);
          const bootSeconds = (Date.now() - began) / 1000;
          await vm.qmp.execute('stop');
          await vm.saveSnapshot();
          await vm.qmp.execute('quit').catch(() => undefined);
          await vm.process.exited;
          renameSync(overlayOf(spec), path.join(dir, 'snapshot.qcow2'));
          return { bootSeconds };
        } finally {
          await vm.stop();
        }
      },
    },
    options,
  );
  return path.join(entry.dir, 'snapshot.qcow2');
}

/**
 * Waits until the in-VM server answers and two screenshots a second apart are the same image:
 * the guest's screen lags its input by seconds under TCG, so a reset is over only once it stops
 * changing. Fails with what the server last said, and the console's last lines, when `timeoutMs`
 * passes or QEMU is gone (`problem`).
 */
export async function untilSettled(client: OsworldClient, timeoutMs: number, problem: () => string | undefined, spec: QemuVmSpec): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  let lastError = 'no answer yet';
  while (Date.now() < deadline) {
    const gone = problem();
    if (gone !== undefined) throw new Error(`QEMU ${spec.name} ${gone} before its in-VM server answered; ${consoleTail(spec)}`);
    const fatal = bootFailure(spec);
    if (fatal !== undefined) throw new Error(`the in-VM server of ${spec.name} (${client.url}) will not answer: its boot failed (${fatal}); ${consoleTail(spec)}`);
    try {
      const shot = createHash('sha256').update(await client.screenshot({ timeoutMs: 10_000, retries: 0 })).digest('hex');
      if (shot === last) return;
      last = shot;
    } catch (err) {
      lastError = (err as Error).message;
      last = '';
    }
    await sleep(1000);
  }
  throw new Error(`the in-VM server of ${spec.name} (${client.url}) did not answer with a settled screen within ${timeoutMs / 1000} s: ${lastError}; ${consoleTail(spec)}`);
}

/** What the console says of a boot that cannot go on (no root file system, a kernel panic, systemd's emergency shell), or undefined. */
const BOOT_FAILURES = /Kernel panic[^\n]*|ALERT![^\n]*|Dropping to a shell[^\n]*|You are in emergency mode[^\n]*/;

function bootFailure(spec: QemuVmSpec): string | undefined {
  try {
    return BOOT_FAILURES.exec(readFileSync(path.join(spec.dir, 'console.log'), 'utf8'))?.[0]?.trim();
  } catch {
    return undefined;
  }
}

function consoleTail(spec: QemuVmSpec): string {
  let text = '';
  try {
    text = readFileSync(path.join(spec.dir, 'console.log'), 'utf8');
  } catch {
    return 'no console output';
  }
  const lines = text.trim().split('\n').filter((l) => l.trim() !== '');
  return `the console's last lines: ${lines.slice(-3).join(' | ') || '(empty)'}`;
}
