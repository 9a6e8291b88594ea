import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../config/load';
import { kalgebraPoint } from '../apps/kalgebra/layout';
import { median } from './stats';
import { benchHost, cpuFigures, memory, playReference, resetMedians, series, taskLookup, timed } from './desktop-runs';
import { createLocalDesktops } from '../activities/desktop/local/local-desktop';

/**
 * Figures of one local KAlgebra desktop on this machine: reset time per kind of task, screenshot,
 * action and evaluation latency, the CPU seconds of each (bench/desktop-runs.ts
 * desktopCpuSeconds: this process, the desktop's and what they ran), and memory. Usage:
 *   node build/bench/local-desktop.js [--display N] [--runs N] [--cpu-only]
 * The display defaults to the first local host's displayBase in temporal.yaml; --cpu-only gives
 * the CPU seconds alone (a short run, e.g. to compare two commits).
 */

const task = taskLookup('KAlgebra');

function option(name: string): number | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? undefined : Number(process.argv[at + 1]);
}

/** The CPU figures' work on KAlgebra (cpuFigures). */
const CPU_WORK = () => ({
  task: task('A-01'),
  resetLabel: 'reset (A-01) + screenshot',
  step: { label: 'step: type 12 chars + Enter, settle, screenshot', action: { type: 'type', text: 'p := 1+2*3-4', submit: true } as const },
  evaluateLabel: 'evaluate a var check',
});

async function run(): Promise<void> {
  const config = loadConfig();
  const runs = option('runs') ?? 5;
  const host = benchHost(config, 'bench', option('display'));
  const dir = mkdtempSync(path.join(tmpdir(), 'coda-bench-'));
  const [desktop] = createLocalDesktops(host, config.localApps, { dir });
  // For comparison: a desktop that also sleeps through the tasks' `wait`s, as ScienceBoard's VMs do.
  const waitingApps = config.localApps.map((app) => ({ ...app, maxStepWaitSeconds: 3 }));
  const [waiting] = createLocalDesktops({ ...host, id: 'bench-waiting', displayBase: host.displayBase + 1 }, waitingApps, { dir });
  if (desktop === undefined || waiting === undefined) throw new Error('no desktop');
  const figures: Record<string, unknown> = { screen: host.screen, runs };
  try {
    figures.firstResetMs = await timed(() => desktop.reset(task('A-01')));
    if (process.argv.includes('--cpu-only')) {
      figures.cpuSecondsPer = await cpuFigures(desktop, CPU_WORK(), config.rollouts.settleMs, runs);
      return;
    }
    figures.resetMedianMs = await resetMedians(
      desktop,
      {
        'launch (A-01)': task('A-01'),
        'launch + tab (C-14)': task('C-14'),
        'launch + tab + func_2d (B-03)': task('B-03'),
        'launch + tab + func_3d (B-07)': task('B-07'),
      },
      runs,
    );
    await waiting.reset(task('A-01'));
    figures.resetHonouringTaskWaitsMs = median(await series(runs, () => waiting.reset(task('A-01'))));
    await waiting.close();

    figures.memoryAfterFunc3d = memory(desktop.id);
    await desktop.reset(task('A-01'));
    figures.memoryCalculator = memory(desktop.id);
    figures.screenshotMedianMs = median(await series(20, () => desktop.screenshot()));
    figures.screenshotBytes = (await desktop.screenshot()).length;
    const input = kalgebraPoint('calculatorInput', desktop.screen);
    figures.cpuSecondsPer = await cpuFigures(desktop, CPU_WORK(), config.rollouts.settleMs, runs);
    figures.actionMedianMs = {
      click: median(await series(10, () => desktop.act({ type: 'click', ...input }))),
      'type 12 chars + Enter': median(await series(10, () => desktop.act({ type: 'type', text: 'p := 1+2*3-4', submit: true }))),
      hotkey: median(await series(10, () => desktop.act({ type: 'hotkey', keys: ['ctrl', 'a'] }))),
    };
    const varTask = task('A-01');
    figures.evaluateVarMedianMs = median(await series(5, () => desktop.evaluate(varTask, { reason: 'DONE' })));
    const surface = task('A-03');
    await desktop.reset(surface);
    await playReference(desktop, surface, config.rollouts.settleMs);
    figures.evaluate3dPointsMedianMs = median(await series(5, () => desktop.evaluate(surface, { reason: 'DONE' })));
  } finally {
    await waiting.close();
    await desktop.close();
    rmSync(dir, { recursive: true, force: true });
    console.log(JSON.stringify(figures, null, 2));
  }
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
