import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load';
import type { LocalHostConfig } from '../config/schema';
import { kalgebraPoint } from '../core/policies/kalgebra-layout';
import { TaskLibrary } from '../activities/tasks/library';
import { createLocalDesktops, type LocalDesktop } from '../activities/desktop/local/local-desktop';
import { processesOf } from '../activities/desktop/local/process';
import { freeDisplay } from '../infra/ephemeral';
import { median, percentile, printTable, procKib } from './stats';

/**
 * How many real KAlgebra desktops this machine keeps stepping: N desktops at once, each doing
 * `--steps` rollout-like steps (type a calculator line + Enter, settle, PNG screenshot) as fast
 * as it can. Reports throughput, step latency, failures and memory for each N.
 *
 *   node build/bench/desktop-capacity.js [--levels 1,2,4,6,8] [--steps 15]
 */

const rssMiB = (desktop: LocalDesktop): number =>
  processesOf(desktop.id).reduce((sum, p) => {
    try {
      return sum + procKib(p.pid, 'VmRSS') / 1024;
    } catch {
      return sum;
    }
  }, 0);

async function level(n: number, steps: number, dir: string): Promise<string[]> {
  const config = loadConfig();
  const local = config.hosts.find((h): h is LocalHostConfig => h.kind === 'local')!;
  const host: LocalHostConfig = { ...local, id: `cap${n}`, desktops: n, displayBase: freeDisplay(220) };
  const desktops = createLocalDesktops(host, config.localApps, { dir });
  const task = new TaskLibrary().load('KAlgebra', ['A-01'])[0]!;
  const latencies: number[] = [];
  let failures = 0;
  try {
    const resets: number[] = [];
    for (const desktop of desktops) {
      const started = Date.now();
      await desktop.reset(task);
      resets.push(Date.now() - started);
    }
    const started = Date.now();
    await Promise.all(
      desktops.map(async (desktop) => {
        await desktop.act({ type: 'click', ...kalgebraPoint('calculatorInput', desktop.screen) });
        for (let i = 0; i < steps; i++) {
          const t = Date.now();
          try {
            await desktop.act({ type: 'type', text: `v${i} := ${i}*2`, submit: true });
            await new Promise((resolve) => setTimeout(resolve, config.rollouts.settleMs));
            await desktop.screenshot();
            latencies.push(Date.now() - t);
          } catch {
            failures++;
          }
        }
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    const memory = desktops.reduce((sum, d) => sum + rssMiB(d), 0);
    return [
      String(n),
      (latencies.length / seconds).toFixed(2),
      median(latencies).toFixed(0),
      percentile(latencies, 95).toFixed(0),
      String(failures),
      median(resets).toFixed(0),
      memory.toFixed(0),
    ];
  } finally {
    await Promise.all(desktops.map((d) => d.close()));
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { levels: { type: 'string', default: '1,2,4,6,8' }, steps: { type: 'string', default: '15' } } });
  const dir = mkdtempSync(path.join(tmpdir(), 'coda-desktop-capacity-'));
  const rows = [['desktops', 'steps/s', 'median step ms', 'p95 step ms', 'failed steps', 'median reset ms', 'RSS MiB (all)']];
  try {
    for (const n of values.levels.split(',').map(Number)) rows.push(await level(n, Number(values.steps), dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  printTable(`real KAlgebra desktops stepping at once (type + Enter, settle, screenshot) on ${cpus().length} cores`, rows);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
