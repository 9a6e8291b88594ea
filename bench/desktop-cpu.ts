import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load';
import type { GuiAction } from '../core/actions';
import type { Task } from '../core/task';
import { kalgebraPoint } from '../apps/kalgebra/layout';
import { createLocalDesktops, type LocalDesktop } from '../activities/desktop/local/local-desktop';
import { freeDisplay } from '../infra/ephemeral';
import { benchHost, playReference, taskLookup } from './desktop-runs';
import { readerScript } from '../io/atspi';
import { processesOf, runCommand } from '../io/process';
import { asSubreaper, cpuPer, isSubreaper, round } from './process-tree';

/**
 * CPU seconds per reset, per step and per evaluation of a real KAlgebra desktop and a real
 * TeXstudio desktop: the CPU of this process and of every process it started, directly or not
 * (Xvfb, buses, window manager, the apps and their helpers, xdotool, import, python), summed
 * from /proc. Usage:
 *   node build/bench/desktop-cpu.js [--runs 3] [--steps 10]
 *
 * It re-executes itself as a child subreaper, so that no CPU of its tree is lost (process-tree.ts).
 */

interface AppPlan {
  readonly resets: Readonly<Record<string, Task>>;
  /** The task the steps run on, and the actions they play, by kind. */
  readonly stepsOn: Task;
  readonly steps: Readonly<Record<string, GuiAction>>;
  /** Evaluations, each after resetting to its task and playing `prepare`. */
  readonly evaluations: Readonly<Record<string, { task: Task; prepare?: (d: LocalDesktop) => Promise<void> }>>;
}

async function measure(desktop: LocalDesktop, plan: AppPlan, runs: number, steps: number, settleMs: number): Promise<Record<string, unknown>> {
  const figures: Record<string, unknown> = {};
  const firstTask = Object.values(plan.resets)[0] as Task;
  figures.firstResetCpuS = await cpuPer(1, () => desktop.reset(firstTask));
  const resets: Record<string, number> = {};
  for (const [kind, task] of Object.entries(plan.resets)) resets[kind] = await cpuPer(runs, () => desktop.reset(task));
  figures.resetCpuS = { mean: round(Object.values(resets).reduce((a, b) => a + b, 0) / Object.keys(resets).length), ...resets };

  await desktop.reset(plan.stepsOn);
  const stepFigures: Record<string, number> = {};
  // A rollout's step: the action, the settle pause, the screenshot the agent sees next.
  for (const [kind, action] of Object.entries(plan.steps)) {
    stepFigures[kind] = await cpuPer(steps, async () => {
      await desktop.act(action);
      await sleep(settleMs);
      await desktop.screenshot();
    });
  }
  figures.stepCpuS = { mean: round(Object.values(stepFigures).reduce((a, b) => a + b, 0) / Object.keys(stepFigures).length), ...stepFigures };

  const evaluations: Record<string, number> = {};
  for (const [kind, { task, prepare }] of Object.entries(plan.evaluations)) {
    await desktop.reset(task);
    await prepare?.(desktop);
    evaluations[kind] = await cpuPer(runs, () => desktop.evaluate(task, { reason: 'DONE' }));
  }
  figures.evaluationCpuS = evaluations;
  return figures;
}

/** CPU seconds per read of KAlgebra's whole state and of its view: through the desktop's reader, and as a process of its own. */
async function readCosts(desktop: LocalDesktop, bus: string, reads: number): Promise<Record<string, number>> {
  await desktop.reset(taskLookup('KAlgebra')('A-01'));
  const pid = processesOf(desktop.id).find((p) => /kalgebra$/.test(p.command.split(' ')[0] ?? ''))?.pid;
  if (pid === undefined) throw new Error('no KAlgebra on the bench desktop');
  const script = readerScript(path.join(__dirname, '..', 'apps', 'kalgebra', 'local'), 'kalgebra_state.py');
  const reader = desktop.atspiReader();
  const figures: Record<string, number> = {};
  for (const [kind, args] of [['state', []], ['view', ['--view']]] as const) {
    figures[`${kind}, through the reader`] = await cpuPer(reads, () => reader.read(script, pid, args, 10_000));
    figures[`${kind}, a python process per read`] = await cpuPer(reads, () => runCommand('/usr/bin/python3', [script, String(pid), ...args], { env: { AT_SPI_BUS_ADDRESS: `unix:path=${bus}` }, timeoutMs: 10_000 }));
  }
  return figures;
}

async function run(): Promise<void> {
  if (!isSubreaper()) asSubreaper();
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' }, steps: { type: 'string', default: '10' }, 'reads-only': { type: 'boolean', default: false } } });
  const runs = Number(values.runs);
  const steps = Number(values.steps);
  const config = loadConfig();
  const settleMs = config.rollouts.settleMs;
  const kalgebra = taskLookup('KAlgebra');
  const texstudio = taskLookup('TeXstudio');
  const dir = mkdtempSync(path.join(tmpdir(), 'coda-bench-cpu-'));
  const figures: Record<string, unknown> = { runs, steps, settleMs };
  const plans: Record<string, AppPlan> = {
    KAlgebra: {
      resets: { 'launch (A-01)': kalgebra('A-01'), 'launch + tab (C-14)': kalgebra('C-14'), 'launch + tab + func_2d (B-03)': kalgebra('B-03'), 'launch + tab + func_3d (B-07)': kalgebra('B-07') },
      stepsOn: kalgebra('A-01'),
      steps: {
        click: { type: 'click', ...kalgebraPoint('calculatorInput', { width: 1920, height: 1080 }) },
        'type 12 chars + Enter': { type: 'type', text: 'p := 1+2*3-4', submit: true },
        'hotkey ctrl+a': { type: 'hotkey', keys: ['ctrl', 'a'] },
      },
      evaluations: {
        'var check (A-01)': { task: kalgebra('A-01') },
        '10 points on a 3D surface (A-03, reference played)': { task: kalgebra('A-03'), prepare: (d) => playReference(d, kalgebra('A-03'), settleMs) },
      },
    },
    TeXstudio: {
      resets: { '1 document (D-01)': texstudio('D-01'), '2 documents (B-01)': texstudio('B-01'), '3 documents (C-03)': texstudio('C-03') },
      stepsOn: texstudio('B-01'),
      steps: {
        'click in the editor': { type: 'click', x: 900, y: 600 },
        'type 20 chars': { type: 'type', text: 'some words to type ', submit: false },
        'hotkey ctrl+z': { type: 'hotkey', keys: ['ctrl', 'z'] },
      },
      evaluations: { 'file + compile with bibtex (B-01 as reset)': { task: texstudio('B-01') } },
    },
  };
  try {
    const host = benchHost(config, 'bench-cpu-reads', freeDisplay(490));
    const [desktop] = createLocalDesktops(host, config.localApps, { dir });
    if (desktop === undefined) throw new Error('no desktop');
    try {
      figures.kalgebraReadCpuS = await readCosts(desktop, path.join(dir, `${host.id}-0`, 'run', 'a11y-bus'), 20);
    } finally {
      await desktop.close();
    }
    for (const [app, plan] of Object.entries(values['reads-only'] ? {} : plans)) {
      const host = benchHost(config, `bench-cpu-${app.toLowerCase()}`, freeDisplay(490));
      const [desktop] = createLocalDesktops(host, config.localApps, { dir });
      if (desktop === undefined) throw new Error('no desktop');
      try {
        figures[app] = await measure(desktop, plan, runs, steps, settleMs);
      } finally {
        await desktop.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(JSON.stringify(figures, null, 2));
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
