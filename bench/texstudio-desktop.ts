import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load';
import type { Task } from '../core/task';
import { createLocalDesktops } from '../activities/desktop/local/local-desktop';
import { freeDisplay } from '../infra/ephemeral';
import { benchHost, cpuFigures, memory, playReference, resetMedians, series, taskLookup, timed } from './desktop-runs';
import { median } from './stats';

/**
 * Figures of one local TeXstudio desktop on this machine: reset time per kind of task, screenshot
 * and action latency, the time of each check (a `compile` runs pdflatex, and bibtex with two
 * more pdflatex runs when the task wrote a .bib), a reference plan replayed, the CPU seconds of a
 * screenshot, a reset, a step and an evaluation (bench/desktop-runs.ts desktopCpuSeconds), and
 * memory. Usage:
 *   node build/bench/texstudio-desktop.js [--runs 5] [--cpu-only]
 * --cpu-only gives the CPU seconds alone (a short run, e.g. to compare two commits).
 */

const task = taskLookup('TeXstudio');

/** The CPU figures' work on TeXstudio (cpuFigures). */
const CPU_WORK = () => ({
  task: task('B-01'),
  resetLabel: 'reset (B-01) + screenshot',
  step: { label: 'step: type 20 chars, settle, screenshot', action: { type: 'type', text: 'some words to type ', submit: false } as const },
  evaluateLabel: 'evaluate file + compile with bibtex (B-01)',
});

async function run(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' }, 'cpu-only': { type: 'boolean', default: false } } });
  const runs = Number(values.runs);
  const config = loadConfig();
  const host = benchHost(config, 'bench-tex', freeDisplay(460));
  const dir = mkdtempSync(path.join(tmpdir(), 'coda-bench-tex-'));
  const [desktop] = createLocalDesktops(host, config.localApps, { dir });
  if (desktop === undefined) throw new Error('no desktop');
  const figures: Record<string, unknown> = { screen: host.screen, runs };
  try {
    figures.firstResetMs = await timed(() => desktop.reset(task('D-01')));
    if (values['cpu-only']) {
      figures.cpuSecondsPer = await cpuFigures(desktop, CPU_WORK(), config.rollouts.settleMs, runs);
      return;
    }
    const withExecute: Task = { ...task('B-01'), initialize: [...task('B-01').initialize, { func: 'execute', command: 'rm -f /home/user/.config/ChimeraX/ui-*', shell: true }] };
    const kinds: Record<string, Task> = {
      'touch + launch, 1 document (D-01)': task('D-01'),
      'touch x2 + launch, 2 documents (B-01)': task('B-01'),
      '+ execute rm (B-01 with an execute step)': withExecute,
      'touch x3 + launch, 3 documents, 7 KB (C-03)': task('C-03'),
    };
    figures.resetMedianMs = await resetMedians(desktop, kinds, runs);

    await desktop.reset(task('B-01'));
    figures.memory = memory(desktop.id);
    figures.screenshotMedianMs = median(await series(20, () => desktop.screenshot()));
    figures.screenshotBytes = (await desktop.screenshot()).length;
    figures.cpuSecondsPer = await cpuFigures(desktop, CPU_WORK(), config.rollouts.settleMs, runs);
    figures.actionMedianMs = {
      'click in the editor': median(await series(10, () => desktop.act({ type: 'click', x: 900, y: 600 }))),
      'type 20 chars': median(await series(10, () => desktop.act({ type: 'type', text: 'some words to type ', submit: false }))),
      'hotkey ctrl+z': median(await series(10, () => desktop.act({ type: 'hotkey', keys: ['ctrl', 'z'] }))),
    };

    const c06 = task('C-06');
    const b01 = task('B-01');
    const evaluate = (t: Task): Promise<number[]> => series(runs, () => desktop.evaluate(t, { reason: 'DONE' }));
    await desktop.reset(c06);
    const broken = await evaluate(c06);
    await playReference(desktop, c06, config.rollouts.settleMs);
    const fixed = await evaluate(c06);
    const replay = await series(runs, async () => {
      await desktop.reset(b01);
      await playReference(desktop, b01, config.rollouts.settleMs);
    });
    figures.evaluateMedianMs = {
      'compile that fails at its first error (C-06 as given)': median(broken),
      'compile, one pdflatex (C-06 fixed)': median(fixed),
      'file + compile with bibtex, 4 runs (B-01 edited)': median(await evaluate(b01)),
    };
    figures.resetAndReplayB01ReferenceMs = median(replay);
  } finally {
    await desktop.close();
    rmSync(dir, { recursive: true, force: true });
    console.log(JSON.stringify(figures, null, 2));
  }
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
