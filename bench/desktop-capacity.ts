import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../config/load';
import type { LocalHostConfig } from '../config/schema';
import { kalgebraPoint } from '../apps/kalgebra/layout';
import { TaskLibrary } from '../activities/tasks/library';
import { createLocalDesktops, type LocalDesktop } from '../activities/desktop/local/local-desktop';
import { processesOf } from '../io/process';
import { freeDisplay } from '../infra/ephemeral';
import { median, percentile, printTable, procKib } from './stats';

/**
 * How many real desktops this machine keeps stepping: at each level, its desktops at once, each
 * doing `--steps` rollout-like steps (type a line + Enter, settle, PNG screenshot) as fast as it
 * can: a calculator line in KAlgebra, a line of the document in TeXstudio. Reports throughput,
 * step latency, failures and memory for each level. A level is a number of KAlgebra desktops
 * (`4`) or one letter per desktop, K for KAlgebra and T for TeXstudio (`KT`: one of each).
 *
 *   node build/bench/desktop-capacity.js [--levels 1,2,4,6,8,T,KT] [--steps 15]
 */

/** Per app: the task a desktop is reset for, how it gets ready to type, and the line step i types. */
const APPS = {
  K: { software: 'KAlgebra', task: 'A-01', line: (i: number) => `v${i} := ${i}*2` },
  T: { software: 'TeXstudio', task: 'D-01', line: (i: number) => `Line ${i} of the text.` },
} as const;

/** `4` is KKKK; `KT` one KAlgebra and one TeXstudio desktop. */
function apps(level: string): Array<keyof typeof APPS> {
  if (/^\d+$/.test(level)) return Array.from({ length: Number(level) }, () => 'K');
  if (!/^[KT]+$/.test(level)) throw new Error(`level ${JSON.stringify(level)}: expected a number or letters K and T`);
  return [...level] as Array<keyof typeof APPS>;
}

const rssMiB = (desktop: LocalDesktop): number =>
  processesOf(desktop.id).reduce((sum, p) => {
    try {
      return sum + procKib(p.pid, 'VmRSS') / 1024;
    } catch {
      return sum;
    }
  }, 0);

async function level(name: string, steps: number, dir: string): Promise<string[]> {
  const config = loadConfig();
  const local = config.hosts.find((h): h is LocalHostConfig => h.kind === 'local')!;
  const kinds = apps(name);
  const host: LocalHostConfig = { ...local, id: `cap${name}`, desktops: kinds.length, displayBase: freeDisplay(220) };
  const desktops = createLocalDesktops(host, config.localApps, { dir });
  const library = new TaskLibrary();
  const latencies: number[] = [];
  let failures = 0;
  try {
    const resets: number[] = [];
    for (const [d, desktop] of desktops.entries()) {
      const app = APPS[kinds[d]!];
      const started = Date.now();
      await desktop.reset(library.load(app.software, [app.task])[0]!);
      resets.push(Date.now() - started);
    }
    const started = Date.now();
    await Promise.all(
      desktops.map(async (desktop, d) => {
        const app = APPS[kinds[d]!];
        // KAlgebra's calculator input takes a click; TeXstudio's editor has the focus after launch.
        if (app.software === 'KAlgebra') await desktop.act({ type: 'click', ...kalgebraPoint('calculatorInput', desktop.screen) });
        for (let i = 0; i < steps; i++) {
          const t = Date.now();
          try {
            await desktop.act({ type: 'type', text: app.line(i), submit: true });
            await sleep(config.rollouts.settleMs);
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
      /^\d+$/.test(name) ? name : kinds.map((k) => APPS[k].software).join(' + '),
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
  const { values } = parseArgs({ options: { levels: { type: 'string', default: '1,2,4,6,8,T,KT' }, steps: { type: 'string', default: '15' } } });
  const dir = mkdtempSync(path.join(tmpdir(), 'coda-desktop-capacity-'));
  const rows = [['desktops', 'steps/s', 'median step ms', 'p95 step ms', 'failed steps', 'median reset ms', 'RSS MiB (all)']];
  try {
    for (const name of values.levels.split(',')) rows.push(await level(name, Number(values.steps), dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  printTable(`real desktops stepping at once (type a line + Enter, settle, screenshot) on ${cpus().length} cores`, rows);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
