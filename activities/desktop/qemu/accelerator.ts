import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, release } from 'node:os';
import * as path from 'node:path';
import { cacheRoot, sha256 } from '../../../io/artifact-cache';
import { ManagedProcess } from '../../../io/process';
import { hostEnv, type Accelerator } from './qemu-vm';

/**
 * Whether this machine's VMs run under KVM or QEMU's emulation (TCG), decided once per machine and
 * kept in the cache: a `/dev/kvm` may exist and still boot no stock kernel (a paravirtual one, as
 * on the machines this project is tested on, where the guest hangs silently). The probe boots the
 * image's kernel under KVM with no root file system: a working KVM reaches the kernel's panic in
 * seconds; one that shows no panic within PROBE_MS does not work, and TCG is chosen.
 */

const PROBE_MS = 60_000;

export interface AcceleratorChoice {
  readonly accelerator: Accelerator;
  /** Why, in words: for the host's facts and the stack's status. */
  readonly reason: string;
}

/** The machine as the decision depends on it: its kernel, its CPU model and its name. */
function machineKey(): string {
  const cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown CPU';
  return sha256(`${hostname()}\n${release()}\n${cpu}`).slice(0, 16);
}

/** `auto` decided (from the cache, or by the probe now), or the accelerator the host's config names. */
export async function chooseAccelerator(wanted: Accelerator | 'auto', kernel: string, root = cacheRoot()): Promise<AcceleratorChoice> {
  if (wanted !== 'auto') return { accelerator: wanted, reason: 'named in the host\'s config' };
  if (!existsSync('/dev/kvm')) return { accelerator: 'tcg', reason: 'no /dev/kvm on this machine' };
  const file = path.join(root, 'kvm-probe', `${machineKey()}.json`);
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as AcceleratorChoice;
  const choice = await probeKvm(kernel, path.dirname(file));
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(choice)}\n`);
  return choice;
}

async function probeKvm(kernel: string, dir: string): Promise<AcceleratorChoice> {
  mkdirSync(dir, { recursive: true });
  const consoleLog = path.join(dir, `probe-${process.pid}.console`);
  rmSync(consoleLog, { force: true });
  const qemu = ManagedProcess.start({
    name: 'KVM probe',
    command: 'setpriv',
    args: ['--pdeathsig', 'SIGKILL', '--', 'qemu-system-x86_64', '-accel', 'kvm', '-cpu', 'host', '-m', '256', '-nodefaults', '-display', 'none', '-no-reboot',
      '-kernel', kernel, '-append', 'console=ttyS0 panic=-1', '-serial', `file:${consoleLog}`],
    env: hostEnv(),
    log: `${consoleLog}.qemu`,
  });
  const began = Date.now();
  try {
    while (Date.now() - began < PROBE_MS) {
      const text = existsSync(consoleLog) ? readFileSync(consoleLog, 'utf8') : '';
      if (/Kernel panic/.test(text)) return { accelerator: 'kvm', reason: `KVM booted a kernel to its panic in ${((Date.now() - began) / 1000).toFixed(1)} s` };
      if (!qemu.running) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const exit = qemu.exit === undefined ? `no kernel output within ${PROBE_MS / 1000} s` : `QEMU ${qemu.problem() ?? 'exited'} (${readFileSync(`${consoleLog}.qemu`, 'utf8').trim().slice(-200)})`;
    return { accelerator: 'tcg', reason: `/dev/kvm boots no stock kernel here: ${exit}` };
  } finally {
    await qemu.stop(0);
    rmSync(consoleLog, { force: true });
    rmSync(`${consoleLog}.qemu`, { force: true });
  }
}
