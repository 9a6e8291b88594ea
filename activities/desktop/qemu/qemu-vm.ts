import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ManagedProcess, runCommand } from '../../../io/process';
import { QmpClient } from '../../../io/qmp';

/**
 * One QEMU VM of a vm-host: the image's kernel booted straight (no bootloader, no UEFI: the boots
 * that hang in OSWorld's QEMU provider hang there), its disk a qcow2 overlay of the VM's own over
 * the image's read-only base, QEMU's user network forwarding the in-VM server's port and the app
 * state port to this host's loopback, and QMP on a unix socket. Started from the image's memory
 * snapshot when there is one (`-loadvm`: seconds, not a boot), reset by `loadvm` of it.
 */

export type Accelerator = 'kvm' | 'tcg';

/** The image a VM runs (infra/vm-image builds it): a raw kernel and initrd, and the root disk. */
export interface VmImage {
  readonly disk: string;
  readonly kernel: string;
  readonly initrd: string;
}

export interface QemuVmSpec {
  /** e.g. `vm-host-1/0`: the VM's name in QEMU and in messages. */
  readonly name: string;
  /** The VM's own folder: its overlay, console log and QEMU's log. */
  readonly dir: string;
  readonly image: VmImage;
  readonly memoryMiB: number;
  readonly cpus: number;
  readonly accelerator: Accelerator;
  readonly screen: { readonly width: number; readonly height: number };
  /** This host's loopback port to the in-VM server's 5000. */
  readonly serverPort: number;
  /** The app state port, the same number in the VM and on this host's loopback (tasks name it in their launch commands). */
  readonly appPort: number;
  readonly qemu?: string;
}

/** The name of the memory snapshot a VM starts from and resets to. */
export const SNAPSHOT = 'clean';

/** The QEMU command line of a VM; `-loadvm` appended when it starts from the snapshot. Everything that shapes the guest's devices is here, so a snapshot loads only on the same line. */
export function qemuArgs(spec: QemuVmSpec, overlay: string): string[] {
  const accel = spec.accelerator === 'kvm' ? ['-accel', 'kvm', '-cpu', 'host'] : ['-accel', 'tcg,thread=multi', '-cpu', 'max'];
  const forwards = [`hostfwd=tcp:127.0.0.1:${spec.serverPort}-:5000`, `hostfwd=tcp:127.0.0.1:${spec.appPort}-:${spec.appPort}`];
  return [
    '-name', spec.name,
    '-machine', 'q35',
    ...accel,
    '-m', String(spec.memoryMiB),
    '-smp', String(spec.cpus),
    '-nodefaults', '-display', 'none', '-vga', 'none',
    '-kernel', spec.image.kernel,
    '-initrd', spec.image.initrd,
    // rootdelay: how long the initramfs waits for a root device that is not there (30 s by default); a virtio disk is there at once.
    '-append', `root=/dev/vda rw rootdelay=10 console=ttyS0 quiet coda.screen=${spec.screen.width}x${spec.screen.height}`,
    '-drive', `file=${overlay},if=virtio,format=qcow2,discard=unmap`,
    // The guest reaches nothing beyond its forwards (restrict=on): tasks' downloads are fetched on the host.
    '-netdev', `user,id=net0,restrict=on,${forwards.join(',')}`,
    '-device', 'virtio-net-pci,netdev=net0',
    '-device', 'virtio-rng-pci',
    '-serial', `file:${path.join(spec.dir, 'console.log')}`,
    '-qmp', `unix:${qmpSocket(spec)},server=on,wait=off`,
  ];
}

/** The environment of the commands QEMU's side runs (qemu-img, QEMU itself): this host's PATH only. */
export const hostEnv = (): { PATH: string } => ({ PATH: process.env.PATH ?? '/usr/bin:/bin' });

/** The QMP socket: in the temporary folder, named by the VM's folder, since a unix socket's path must be under 108 bytes and the VM's folder may be deep (the artifact cache's). */
export const qmpSocket = (spec: QemuVmSpec): string => path.join(tmpdir(), `coda-qmp-${createHash('sha256').update(spec.dir).digest('hex').slice(0, 16)}.sock`);
export const overlayOf = (spec: QemuVmSpec): string => path.join(spec.dir, 'disk.qcow2');

export class QemuVm {
  private constructor(
    readonly spec: QemuVmSpec,
    readonly process: ManagedProcess,
    readonly qmp: QmpClient,
  ) {}

  /**
   * Starts the VM: from `snapshot` (a qcow2 overlay holding the memory snapshot SNAPSHOT, copied
   * and pointed at the base), or booting a fresh overlay of the base when there is none. Its QEMU
   * dies with this process (setpriv's parent-death signal), so a killed worker leaves no VM behind.
   */
  static async start(spec: QemuVmSpec, snapshot?: string): Promise<QemuVm> {
    rmSync(spec.dir, { recursive: true, force: true });
    rmSync(qmpSocket(spec), { force: true });
    mkdirSync(spec.dir, { recursive: true });
    const overlay = overlayOf(spec);
    if (snapshot === undefined) await runCommand('qemu-img', ['create', '-q', '-f', 'qcow2', '-F', 'qcow2', '-b', spec.image.disk, overlay], { env: hostEnv(), timeoutMs: 30_000 });
    else {
      copyFileSync(snapshot, overlay);
      // Metadata only (-u): the snapshot's overlay was made over the same base, wherever it was then.
      await runCommand('qemu-img', ['rebase', '-u', '-f', 'qcow2', '-F', 'qcow2', '-b', spec.image.disk, overlay], { env: hostEnv(), timeoutMs: 30_000 });
    }
    const args = [...qemuArgs(spec, overlay), ...(snapshot === undefined ? [] : ['-loadvm', SNAPSHOT])];
    const process = ManagedProcess.start({
      name: `QEMU ${spec.name}`,
      command: 'setpriv',
      args: ['--pdeathsig', 'SIGKILL', '--', spec.qemu ?? 'qemu-system-x86_64', ...args],
      env: hostEnv(),
      log: path.join(spec.dir, 'qemu.log'),
    });
    try {
      return new QemuVm(spec, process, await connectQmp(spec, process));
    } catch (err) {
      await process.stop(0);
      throw err;
    }
  }

  /** Back to the snapshot: memory, devices and disk (loadvm rolls the overlay back too); running again after. */
  async loadSnapshot(): Promise<void> {
    const said = await this.qmp.human(`loadvm ${SNAPSHOT}`);
    // A failed loadvm leaves the VM paused, and says so only in its text.
    if (said.trim() !== '') {
      await this.qmp.execute('cont').catch(() => undefined);
      throw new Error(`loadvm ${SNAPSHOT} on ${this.spec.name}: ${said.trim()}`);
    }
    await this.qmp.execute('cont');
  }

  /** Writes the memory snapshot SNAPSHOT into the VM's overlay (what `start` copies later). */
  async saveSnapshot(): Promise<void> {
    const said = await this.qmp.human(`savevm ${SNAPSHOT}`);
    if (said.trim() !== '') throw new Error(`savevm ${SNAPSHOT} on ${this.spec.name}: ${said.trim()}`);
  }

  /** Whether QEMU runs and its guest is running (not paused, not shut down). */
  async running(): Promise<boolean> {
    if (this.process.problem() !== undefined) return false;
    try {
      const status = (await this.qmp.execute('query-status', undefined, 5_000)) as { status?: string };
      return status.status === 'running';
    } catch {
      return false;
    }
  }

  /** Stops QEMU (quit, then the process group) and removes the VM's folder. */
  async stop(): Promise<void> {
    await this.qmp.execute('quit', undefined, 5_000).catch(() => undefined);
    this.qmp.close();
    await this.process.stop(5_000);
    rmSync(this.spec.dir, { recursive: true, force: true });
    rmSync(qmpSocket(this.spec), { force: true });
  }
}

/** QEMU creates the socket as it starts; a QEMU that exits first (a bad option, a snapshot that does not load) says why in its log. */
async function connectQmp(spec: QemuVmSpec, process: ManagedProcess): Promise<QmpClient> {
  const socket = qmpSocket(spec);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const problem = process.problem();
    if (problem !== undefined) throw new Error(`QEMU ${spec.name} ${problem}: ${logTail(path.join(spec.dir, 'qemu.log'))}`);
    if (existsSync(socket)) return QmpClient.connect(socket);
    if (Date.now() > deadline) throw new Error(`QEMU ${spec.name} opened no QMP socket within 30 s`);
    await sleep(50);
  }
}

function logTail(file: string): string {
  return (existsSync(file) ? readFileSync(file, 'utf8') : '').trim().split('\n').slice(-5).join(' | ');
}
