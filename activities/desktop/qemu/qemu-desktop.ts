import { statSync } from 'node:fs';
import * as path from 'node:path';
import type { QemuHostConfig } from '../../../config/schema';
import type { GuiAction, Point } from '../../../core/actions';
import type { EvaluationResult, StopInfo } from '../../../core/evaluation';
import type { Task } from '../../../core/task';
import { processCpuSeconds } from '../../../io/cpu-time';
import { freeLoopbackPort } from '../../../io/ports';
import { DesktopError, type Desktop } from '../desktop';
import { osworldDesktopOf, type OsworldDesktop } from '../osworld/osworld-desktop';
import { chooseAccelerator } from './accelerator';
import { projectVmImage } from './image';
import { QemuProvider } from './qemu-provider';
import { vmSnapshot, type VmShape } from './snapshot';

/**
 * A desktop of a qemu host: one VM of the host's image, started from its snapshot at the first
 * reset (ports picked then), reset by loadvm, driven through its in-VM server as the osworld path
 * drives any VM. A VM whose QEMU died is unhealthy; the pool recycles the desktop, and the new one
 * starts its VM from the snapshot. Closing it stops QEMU.
 */

export interface QemuDesktopOptions {
  /** Where the VMs' folders go (overlays, QMP sockets, console logs). */
  readonly dir: string;
  /** Free loopback ports for a VM's forwards; the kernel's pick by default. */
  readonly port?: () => Promise<number>;
  readonly log?: (line: string) => void;
}

/** The host's VM shape, found once per host and process: the image (built when missing), the accelerator (probed once per machine). */
const shapes = new Map<string, Promise<VmShape>>();

async function shapeOf(host: QemuHostConfig, log?: (line: string) => void): Promise<VmShape> {
  const image = host.image === 'project' ? await projectVmImage(log === undefined ? {} : { log }) : labImage(host.image);
  const { accelerator } = await chooseAccelerator(host.accelerator, image.kernel);
  return { image, memoryMiB: host.memoryMiB, cpus: host.cpus, accelerator, screen: host.screen };
}

/** A lab's image (ScienceBoard's disk converted to qcow2), known by its files' paths, sizes and times. */
function labImage(image: { disk: string; kernel: string; initrd: string }) {
  const id = [image.disk, image.kernel, image.initrd].map((f) => `${f}:${statSync(f).size}:${statSync(f).mtimeMs}`).join('|');
  return { ...image, id };
}

export class QemuDesktop implements Desktop {
  readonly id: string;
  readonly screen: { readonly width: number; readonly height: number };
  private started: { provider: QemuProvider; desktop: OsworldDesktop } | undefined;

  constructor(
    private readonly host: QemuHostConfig,
    index: number,
    private readonly options: QemuDesktopOptions,
  ) {
    this.id = `${host.id}/${index}`;
    this.screen = host.screen;
  }

  /** The VM's provider once started (its pid, its starts): for the host's status and tests. */
  get provider(): QemuProvider | undefined {
    return this.started?.provider;
  }

  async reset(task: Task): Promise<void> {
    this.started ??= await this.start();
    return this.started.desktop.reset(task);
  }

  screenshot(): Promise<Buffer> {
    return this.desktop().screenshot();
  }

  act(action: GuiAction): Promise<void> {
    return this.desktop().act(action);
  }

  pointer(): Promise<Point> {
    return this.desktop().pointer();
  }

  evaluate(task: Task, stop: StopInfo): Promise<EvaluationResult> {
    return this.desktop().evaluate(task, stop);
  }

  async healthy(): Promise<boolean> {
    if (this.started === undefined) return true;
    return (await this.started.provider.running()) && (await this.started.desktop.healthy());
  }

  cpu(): { pid: number; seconds: number } | undefined {
    const pid = this.started?.provider.pid;
    const seconds = pid === undefined ? undefined : processCpuSeconds(pid, true);
    return pid === undefined || seconds === undefined ? undefined : { pid, seconds };
  }

  async close(): Promise<void> {
    const started = this.started;
    this.started = undefined;
    await started?.provider.stop();
  }

  private desktop(): OsworldDesktop {
    if (this.started === undefined) throw new DesktopError('the VM is not started: reset it first', this.id);
    return this.started.desktop;
  }

  private async start(): Promise<{ provider: QemuProvider; desktop: OsworldDesktop }> {
    const { host, options } = this;
    const port = options.port ?? freeLoopbackPort;
    let shape = shapes.get(host.id);
    if (shape === undefined) shapes.set(host.id, (shape = shapeOf(host, options.log)));
    const resolved = await shape.catch((err: unknown) => {
      shapes.delete(host.id);
      throw new DesktopError(`no VM image: ${(err as Error).message}`, this.id);
    });
    const snapshot = () => vmSnapshot(resolved, { bootTimeoutMs: host.bootTimeoutSeconds * 1000, port, ...(options.log === undefined ? {} : { log: options.log }) });
    const dir = path.join(options.dir, this.id.replace('/', '-'));
    const provider = new QemuProvider({ ...resolved, name: this.id, dir, serverPort: await port(), appPort: await port() }, snapshot, host.readyTimeoutSeconds * 1000);
    return { provider, desktop: osworldDesktopOf(host, this.id, provider.vmConfig(), provider) };
  }
}
