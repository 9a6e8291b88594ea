import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../config/load';
import type { LocalHostConfig } from '../config/schema';
import { stopReasonOf } from '../core/episode';
import { kalgebraPoint } from '../core/policies/kalgebra-layout';
import { referencePlan } from '../core/policies/kalgebra-reference';
import type { Task } from '../core/task';
import { TaskLibrary } from '../activities/tasks/library';
import { median, procKib } from './stats';
import { createLocalDesktops, type LocalDesktop } from '../activities/desktop/local/local-desktop';
import { processesOf } from '../activities/desktop/local/process';

/**
 * Figures of one local KAlgebra desktop on this machine: reset time per kind of task, screenshot,
 * action and evaluation latency, and memory. Usage:
 *   node build/bench/local-desktop.js [--display N] [--runs N]
 * The display defaults to the first local host's displayBase in temporal.yaml.
 */

/** Every KAlgebra task, validated once, before anything is timed. */
const TASKS = new Map(new TaskLibrary().load('KAlgebra').map((t) => [t.id, t]));

const task = (id: string): Task => {
  const found = TASKS.get(id);
  if (found === undefined) throw new Error(`the bench did not load task ${id}`);
  return found;
};

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function series(times: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < times; i += 1) out.push(await timed(fn));
  return out;
}


/** Resident and proportional set size of each process the desktop runs, in MiB. */
function memory(desktopId: string): { program: string; rssMiB: number; pssMiB: number }[] {
  return processesOf(desktopId).map((p) => ({
    program: path.basename(p.command.split(' ')[0] ?? '?'),
    rssMiB: procKib(p.pid, 'VmRSS') / 1024,
    pssMiB: procKib(p.pid, 'Pss', 'smaps_rollup') / 1024,
  }));
}

function option(name: string): number | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? undefined : Number(process.argv[at + 1]);
}

async function play(desktop: LocalDesktop, t: Task, settleMs: number): Promise<void> {
  const plan = referencePlan(t, desktop.screen);
  if (!plan.replayable) throw new Error(plan.reason);
  for (const action of plan.actions) {
    await desktop.act(action);
    if (stopReasonOf(action) !== undefined) return;
    await new Promise((resolve) => setTimeout(resolve, settleMs));
  }
}

async function run(): Promise<void> {
  const config = loadConfig();
  const local = config.hosts.find((h): h is LocalHostConfig => h.kind === 'local');
  if (local === undefined) throw new Error('temporal.yaml has no local host');
  const runs = option('runs') ?? 5;
  const host: LocalHostConfig = { ...local, id: 'bench', desktops: 1, displayBase: option('display') ?? local.displayBase };
  const dir = mkdtempSync(path.join(tmpdir(), 'coda-bench-'));
  const [desktop] = createLocalDesktops(host, config.localApps, { dir });
  // For comparison: a desktop that also sleeps through the tasks' `wait`s, as ScienceBoard's VMs do.
  const waitingApps = config.localApps.map((app) => ({ ...app, maxStepWaitSeconds: 3 }));
  const [waiting] = createLocalDesktops({ ...host, id: 'bench-waiting', displayBase: host.displayBase + 1 }, waitingApps, { dir });
  if (desktop === undefined || waiting === undefined) throw new Error('no desktop');
  const figures: Record<string, unknown> = { screen: host.screen, runs };
  try {
    figures.firstResetMs = await timed(() => desktop.reset(task('A-01')));
    const kinds: Record<string, string> = {
      'launch (A-01)': 'A-01',
      'launch + tab (C-14)': 'C-14',
      'launch + tab + func_2d (B-03)': 'B-03',
      'launch + tab + func_3d (B-07)': 'B-07',
    };
    const resets: Record<string, number> = {};
    const all: number[] = [];
    for (const [kind, id] of Object.entries(kinds)) {
      const times = await series(runs, () => desktop.reset(task(id)));
      resets[kind] = median(times);
      all.push(...times);
    }
    figures.resetMedianMs = { all: median(all), ...resets };
    await waiting.reset(task('A-01'));
    figures.resetHonouringTaskWaitsMs = median(await series(runs, () => waiting.reset(task('A-01'))));
    await waiting.close();

    figures.memoryAfterFunc3d = memory(desktop.id);
    await desktop.reset(task('A-01'));
    figures.memoryCalculator = memory(desktop.id);
    figures.screenshotMedianMs = median(await series(20, () => desktop.screenshot()));
    figures.screenshotBytes = (await desktop.screenshot()).length;
    const input = kalgebraPoint('calculatorInput', desktop.screen);
    figures.actionMedianMs = {
      click: median(await series(10, () => desktop.act({ type: 'click', ...input }))),
      'type 12 chars + Enter': median(await series(10, () => desktop.act({ type: 'type', text: 'p := 1+2*3-4', submit: true }))),
      hotkey: median(await series(10, () => desktop.act({ type: 'hotkey', keys: ['ctrl', 'a'] }))),
    };
    const varTask = task('A-01');
    figures.evaluateVarMedianMs = median(await series(5, () => desktop.evaluate(varTask, { reason: 'DONE' })));
    const surface = task('A-03');
    await desktop.reset(surface);
    await play(desktop, surface, config.rollouts.settleMs);
    figures.evaluate3dPointsMedianMs = median(await series(5, () => desktop.evaluate(surface, { reason: 'DONE' })));
  } finally {
    await waiting.close();
    await desktop.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(JSON.stringify(figures, null, 2));
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
