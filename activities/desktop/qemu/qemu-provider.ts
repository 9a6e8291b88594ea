import type { OsworldVmConfig } from '../../../config/schema';
import { createOsworldClient, type OsworldClient } from '../../../io/osworld-client';
import type { VmProvider } from '../osworld/vm-provider';
import { QemuVm, type QemuVmSpec } from './qemu-vm';
import { untilSettled } from './snapshot';

/**
 * The provider of one VM the vm-host runs itself: its first revert starts the VM from the
 * snapshot; every later one loads the snapshot into the running VM (`loadvm`: memory, devices and
 * disk, about a second), or, when QEMU died or stopped answering, starts it from the snapshot
 * again. A revert ends once the in-VM server answers with a settled screen.
 */
export class QemuProvider implements VmProvider {
  private vm: QemuVm | undefined;
  /** How many times the VM was started (1 + the times it came back from a death). */
  starts = 0;
  readonly client: OsworldClient;

  constructor(
    readonly spec: QemuVmSpec,
    private readonly snapshot: () => Promise<string>,
    private readonly settleTimeoutMs: number,
  ) {
    this.client = createOsworldClient(this.url, { retries: 0 });
  }

  /** The in-VM server, as the host's loopback forwards it. */
  get url(): string {
    return `http://127.0.0.1:${this.spec.serverPort}`;
  }

  /** The osworld path's view of this VM. */
  vmConfig(): OsworldVmConfig {
    return { url: this.url, resetCommand: ['loadvm'], screen: this.spec.screen, appStatePort: this.spec.appPort };
  }

  /** QEMU's pid while it runs (for a test's kill -9). */
  get pid(): number | undefined {
    return this.vm?.process.running ? this.vm.process.pid : undefined;
  }

  async revert(_vm?: OsworldVmConfig): Promise<void> {
    if (this.vm !== undefined && (await this.vm.running())) await this.vm.loadSnapshot();
    else await this.restart();
    await untilSettled(this.client, this.settleTimeoutMs, () => this.vm?.process.problem(), this.spec);
  }

  /** Whether the VM runs and answers (false before its first revert). */
  async running(): Promise<boolean> {
    return this.vm !== undefined && (await this.vm.running());
  }

  async stop(): Promise<void> {
    const vm = this.vm;
    this.vm = undefined;
    await vm?.stop();
  }

  private async restart(): Promise<void> {
    await this.stop();
    const snapshot = await this.snapshot();
    this.vm = await QemuVm.start(this.spec, snapshot);
    this.starts += 1;
  }
}
