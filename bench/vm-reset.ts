import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load';
import { chooseAccelerator } from '../activities/desktop/qemu/accelerator';
import { projectVmImage } from '../activities/desktop/qemu/image';
import { QemuProvider } from '../activities/desktop/qemu/qemu-provider';
import { untilSettled, vmSnapshot, type VmShape } from '../activities/desktop/qemu/snapshot';
import { createLocalDesktops } from '../activities/desktop/local/local-desktop';
import { freeDisplay, freePort } from '../infra/ephemeral';
import { benchHost, taskLookup } from './desktop-runs';
import { asSubreaper, isSubreaper, round, treeCpuS } from './process-tree';
import { median } from './stats';

/**
 * Wall and CPU seconds of a reset of a QEMU VM the vm-host runs (loadvm of the image's snapshot,
 * until the in-VM server answers with a settled screen), beside a local desktop's reset of
 * KAlgebra (the app restarted on its Xvfb display), measured in one run. The CPU is the whole
 * process tree's, QEMU's included (all of the guest's work is QEMU's). Also: starting a VM from
 * the snapshot, and a reset followed by KAlgebra launched in the VM until its window is drawn,
 * the VM's share of what a local reset does. Usage:
 *   node build/bench/vm-reset.js [--resets 10] [--memory 2048] [--cpus 2]
 */

const digest = (png: Buffer): string => createHash('sha256').update(png).digest('hex');

interface Timing {
  readonly wallS: number;
  readonly cpuS: number;
}

async function timed(fn: () => Promise<unknown>): Promise<Timing> {
  const [began, cpu] = [Date.now(), treeCpuS()];
  await fn();
  return { wallS: round((Date.now() - began) / 1000), cpuS: round(treeCpuS() - cpu) };
}

const summary = (runs: readonly Timing[]) => ({
  runs: runs.length,
  wallS: { median: round(median(runs.map((r) => r.wallS))), max: round(Math.max(...runs.map((r) => r.wallS))) },
  cpuS: { median: round(median(runs.map((r) => r.cpuS))), max: round(Math.max(...runs.map((r) => r.cpuS))) },
});

/** Launches KAlgebra in the VM and waits until the screen changed from `clean` and settled again. */
async function launchKalgebra(vm: QemuProvider, clean: string): Promise<void> {
  await vm.client.launch(['kalgebra']);
  for (let i = 0; i < 300; i++) {
    if (digest(await vm.client.screenshot()) !== clean) return untilSettled(vm.client, 300_000, () => undefined, vm.spec);
    await sleep(1000);
  }
  throw new Error('KAlgebra drew nothing in the VM within 300 s');
}

async function vmFigures(resets: number, memoryMiB: number, cpus: number, dir: string): Promise<Record<string, unknown>> {
  const image = await projectVmImage();
  const choice = await chooseAccelerator('auto', image.kernel);
  const shape: VmShape = { image, memoryMiB, cpus, accelerator: choice.accelerator, screen: { width: 1280, height: 800 } };
  const snapshot = () => vmSnapshot(shape, { bootTimeoutMs: 900_000, port: freePort });
  await snapshot();
  const vm = new QemuProvider({ ...shape, name: 'bench/0', dir: path.join(dir, 'vm'), serverPort: await freePort(), appPort: await freePort() }, snapshot, 300_000);
  try {
    const start = await timed(() => vm.revert());
    const clean = digest(await vm.client.screenshot());
    const loadvm: Timing[] = [];
    for (let i = 0; i < resets; i++) loadvm.push(await timed(() => vm.revert()));
    const withApp: Timing[] = [];
    for (let i = 0; i < Math.min(3, resets); i++) withApp.push(await timed(async () => (await vm.revert(), await launchKalgebra(vm, clean))));
    return { accelerator: choice, memoryMiB, cpus, startFromSnapshot: start, reset: summary(loadvm), resetThenKalgebraDrawn: summary(withApp) };
  } finally {
    await vm.stop();
  }
}

async function localFigures(resets: number, dir: string): Promise<Record<string, unknown>> {
  const config = loadConfig();
  const host = benchHost(config, 'bench-vm-reset', freeDisplay(490));
  const [desktop] = createLocalDesktops(host, config.localApps, { dir });
  if (desktop === undefined) throw new Error('no desktop');
  const task = taskLookup('KAlgebra')('A-01');
  try {
    await desktop.reset(task);
    const runs: Timing[] = [];
    for (let i = 0; i < resets; i++) runs.push(await timed(() => desktop.reset(task)));
    return { kalgebraA01: summary(runs) };
  } finally {
    await desktop.close();
  }
}

async function run(): Promise<void> {
  if (!isSubreaper()) asSubreaper();
  const { values } = parseArgs({ options: { resets: { type: 'string', default: '10' }, memory: { type: 'string', default: '2048' }, cpus: { type: 'string', default: '2' } } });
  const dir = mkdtempSync(path.join(tmpdir(), 'coda-bench-vm-reset-'));
  try {
    const resets = Number(values.resets);
    const vm = await vmFigures(resets, Number(values.memory), Number(values.cpus), dir);
    const local = await localFigures(resets, dir);
    console.log(JSON.stringify({ vm, localDesktop: local }, null, 2));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
