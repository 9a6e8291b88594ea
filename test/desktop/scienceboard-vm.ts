import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { OsworldVmConfig } from '../../config/schema';
import type { Task } from '../../core/task';
import { celestiaDouble, type CelestiaDouble, type CelestiaState } from '../../apps/celestia/double';
import { chimeraxDouble, type ChimeraxDouble } from '../../apps/chimerax/double';
import { grassDouble, type GrassDouble, type GrassState } from '../../apps/grassgis/double';
import { leanDouble, type LeanDouble } from '../../apps/lean/double';
import { BASIC_LEAN, leanHeader } from '../../apps/lean/vm';
import { createOsworldClient } from '../../io/osworld-client';
import { createKalgebraState } from '../../apps/kalgebra/vm';
import { appStateUrl, OsworldDesktop, type OsworldDesktopOptions } from '../../activities/desktop/osworld/osworld-desktop';
import { freePort } from '../../infra/ephemeral';
import { CELESTIA_STATES } from './app-states/Celestia';
import { CHIMERAX_STATES, DAY_MARK, type ChimeraxTaskState } from './app-states/ChimeraX';
import { clearOfMidnight, pythonToday } from '../support/day';
import { GRASS_STATES } from './app-states/GrassGIS';
import { LEAN_STATES, type LeanState } from './app-states/Lean';
import { withValue, type TaskState } from './app-states/types';
import { startOsworldServerDouble, type OsworldServerDouble } from '../../doubles/osworld-server';

/**
 * A ScienceBoard VM made of TEST DOUBLES: the OSWorld in-VM server double with its files under a
 * folder of its own, and the app servers of Celestia, GRASS GIS, ChimeraX and Lean's `lake build`,
 * each started by the task's launch as in the VM. Its revert quits every app and restores the
 * VM's files; the task's state (test/desktop/app-states) lands in the app at the first screenshot
 * after the reset, standing for what the agent did while it looked, so that a rollout whose
 * planner stops at once is evaluated on that state.
 */

export type Variant = 'pass' | 'off';

export const STATES: Readonly<Record<string, Readonly<Record<string, TaskState<unknown>>>>> = {
  Celestia: CELESTIA_STATES,
  ChimeraX: CHIMERAX_STATES,
  GrassGIS: GRASS_STATES,
  Lean: LEAN_STATES,
};

export interface DoubledVm {
  readonly server: OsworldServerDouble;
  readonly vm: OsworldVmConfig;
  readonly root: string;
  readonly celestia: CelestiaDouble;
  readonly grass: GrassDouble;
  readonly chimerax: ChimeraxDouble;
  readonly lean: LeanDouble;
  /** What the next reset runs, and which of its states the agent leaves; waits out the minutes before midnight (`clearOfMidnight`). */
  prepare(task: Task, variant: Variant): Promise<void>;
  /** The VM's reverts so far. */
  reverts(): number;
  /** Options for an OsworldDesktop on this VM (no pauses, no waits). */
  desktopOptions(id: string): OsworldDesktopOptions;
  close(): Promise<void>;
}

/** The bytes a `download` func's URL gives (ChimeraX A-02 fetches 3ppd.cif from the RCSB): a TEST DOUBLE of the web, which this machine may not reach. */
export const DOWNLOADS: Readonly<Record<string, string>> = {
  'https://files.rcsb.org/download/3ppd.cif': 'data_3PPD\n#\n_entry.id 3PPD\n',
};

/** How long before local midnight a test's task is not started: longer than any test takes from its reset to its evaluation. */
export const MIDNIGHT_MARGIN_MS = 5 * 60_000;

export async function startDoubledVm(): Promise<DoubledVm> {
  const root = mkdtempSync(path.join(tmpdir(), 'coda-sb-vm-'));
  const appPort = await freePort();
  const celestia = celestiaDouble(appPort);
  const grass = grassDouble(appPort);
  const chimerax = chimeraxDouble(root);
  const accepted = Object.entries(LEAN_STATES).map(([, s]) => s.state.proof);
  const lean = leanDouble(accepted);
  let current: { task: Task; variant: Variant } | undefined;
  let applied = true;
  let reverts = 0;

  const resetFiles = () => {
    rmSync(path.join(root, 'home'), { recursive: true, force: true });
    for (const dir of ['home/user/sci/Sci', 'home/user/Downloads', 'home/user/grassdata']) mkdirSync(path.join(root, dir), { recursive: true });
    writeFileSync(path.join(root, BASIC_LEAN), 'import Mathlib\n');
  };
  resetFiles();

  /** The agent's work: the task's state (or its off variant) put into the app it drives. */
  const applyState = () => {
    if (applied || current === undefined) return;
    applied = true;
    const { task, variant } = current;
    const entry = STATES[task.type]?.[task.id];
    // A generated task has no checks and no test state: the app keeps what its reset left.
    if (entry === undefined && task.evaluate.length === 0) return;
    if (entry === undefined) throw new Error(`no test state for ${task.type} ${task.id}`);
    // A copy: a test that changes the app's state (a NaN in ChimeraX's dump) must not change the fixture the next test reads.
    const state = structuredClone(variant === 'off' && entry.off !== undefined ? withValue(entry.state, entry.off.path, entry.off.value) : entry.state);
    switch (task.type) {
      case 'Celestia':
        celestia.state = state as CelestiaState;
        break;
      case 'GrassGIS':
        grass.state = state as GrassState;
        break;
      case 'ChimeraX': {
        const { files = {}, ...app } = state as ChimeraxTaskState;
        chimerax.state = app;
        for (const [file, text] of Object.entries(files)) {
          mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
          writeFileSync(path.join(root, file), text.replaceAll(DAY_MARK, pythonToday()));
        }
        break;
      }
      case 'Lean': {
        const header = leanHeader(task.initialize);
        const file = path.join(root, BASIC_LEAN);
        const text = readFileSync(file, 'utf8');
        writeFileSync(file, text.replace(`${header}\n  sorry\n`, `${header}\n  ${(state as LeanState).proof}\n`));
        break;
      }
    }
  };

  const server = await startOsworldServerDouble({
    screen: { width: 1280, height: 800 },
    root,
    // The tasks' shell steps (rm of ChimeraX's history, GRASS's .gislock) succeed without touching this machine.
    execute: () => ({ output: '', error: '', returncode: 0 }),
    launch: (command) => {
      const line = Array.isArray(command) ? command.join(' ') : String(command);
      if (/celestia/.test(line)) void celestia.launch();
      else if (/grass/.test(line)) void grass.launch();
      else if (/chimerax/.test(line)) chimerax.launch();
      else if (!/^code /.test(line)) return `[Errno 2] No such file or directory: '${line.split(' ')[0]}'`;
      return null;
    },
    chimerax: (command) => chimerax.run(command),
    lake: (text) => lean.lake(text),
    onScreenshot: applyState,
  });
  const vm: OsworldVmConfig = { url: server.url, resetCommand: ['true'], screen: { width: 1280, height: 800 }, appStatePort: appPort };

  const provider = {
    async revert() {
      reverts += 1;
      await Promise.all([celestia.quit(), grass.quit()]);
      chimerax.quit();
      celestia.state = {};
      grass.state = { dump: {}, gcmd: {} };
      chimerax.state = { states: {}, info: {} };
      resetFiles();
      applied = false;
    },
  };

  return {
    server,
    vm,
    root,
    celestia,
    grass,
    chimerax,
    lean,
    async prepare(task, variant) {
      await clearOfMidnight(MIDNIGHT_MARGIN_MS);
      current = { task, variant };
    },
    reverts: () => reverts,
    desktopOptions: (id) => ({
      id,
      vm,
      provider,
      client: createOsworldClient(vm.url, { retries: 1, backoffMs: 10 }),
      appState: createKalgebraState(appStateUrl(vm), { retries: 0 }),
      readyTimeoutMs: 5000,
      pollIntervalMs: 50,
      stepPauseMs: 0,
      waitScale: 0,
      appReadyTimeoutMs: 3000,
      appPolicy: { retries: 0, timeoutMs: 10_000 },
      fetchUrl: async (url) => {
        const body = DOWNLOADS[url];
        if (body === undefined) throw new Error(`getaddrinfo ENOTFOUND ${new URL(url).hostname}`);
        return Buffer.from(body);
      },
    }),
    async close() {
      await Promise.all([celestia.quit(), grass.quit(), server.close()]);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

export const desktopOn = (vm: DoubledVm, id = 'sb-1/0'): OsworldDesktop => new OsworldDesktop(vm.desktopOptions(id));
