import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { SCIENCEBOARD_VM, deploymentCapabilities, probesOf, unmetNeeds, type Capabilities, type DeploymentDescription, type Need } from '../../core/requirements';
import { parseTaskText, type Task } from '../../core/task';
import type { LocalApp } from '../../config/schema';
import { defaultDrivers } from '../desktop/local/drivers';
import { probeLocalHost } from '../desktop/local/host-facts';
import { withPredicatesChecked } from './library';
import { APPS } from '../../apps/index';

/**
 * A census of a folder of task files (one subfolder per application, as ScienceBoard's
 * tasks/VM/ and data/scienceboard are): how many files each application has, how many parse,
 * and which hosts can run them — each host of the deployment, and each host kind (`local`: a
 * local host on this machine, as probed here; `osworld`: a ScienceBoard VM) — with the reasons
 * the others cannot, grouped. `coda tasks` prints it.
 */
export interface TaskCensus {
  readonly folder: string;
  /** The columns: the deployment's hosts, then one per host kind. */
  readonly columns: ReadonlyArray<{ readonly name: string; readonly kind: Capabilities['kind']; readonly inDeployment: boolean }>;
  readonly applications: readonly ApplicationCensus[];
}

export interface ApplicationCensus {
  readonly software: string;
  readonly files: number;
  readonly parsed: number;
  /** The files that did not parse, with the loader's error. */
  readonly errors: ReadonlyArray<{ readonly file: string; readonly error: string }>;
  /** Per column (same order as TaskCensus.columns): how many parsed tasks it runs, and why not for the others, grouped. */
  readonly support: ReadonlyArray<{ readonly supported: number; readonly reasons: ReadonlyArray<{ readonly reason: string; readonly tasks: readonly string[] }> }>;
  /** Per task: the columns that run it. */
  readonly tasks: ReadonlyArray<{ readonly id: string; readonly supportedBy: readonly string[] }>;
}

/** A reason short enough to group tasks by: what is missing, without where each task says so. */
export function reasonLabel(need: Need): string {
  switch (need.kind) {
    case 'app':
      return `needs ${need.app}`;
    case 'program':
      return `needs the program ${need.program}`;
    case 'texFile':
      return `needs the TeX ${need.file.includes(', ') ? 'files' : 'file'} ${need.file}`;
    case 'network':
      return 'needs the internet';
    case 'vmFile':
      return "needs files of ScienceBoard's VM snapshot";
    case 'unknown':
      // "initialize[2]: func "opt" is not known ..." → the same reason for every task using it.
      return `unknown to the project: ${need.because.replace(/^(initialize|evaluate)\[\d+\]:\s*/, '')}`;
  }
}

export interface CensusOptions {
  readonly folder: string;
  readonly config: DeploymentDescription & { readonly localApps: readonly LocalApp[] };
  /** Software with a local driver (default: drivers.ts). */
  readonly drivers?: readonly string[];
}

/** Reads every task file of the folder's subfolders and decides, per host and host kind, which run. */
export async function taskCensus(options: CensusOptions): Promise<TaskCensus> {
  const subfolders = readdirSync(options.folder)
    .filter((name) => statSync(path.join(options.folder, name)).isDirectory())
    .sort();
  const loaded = subfolders.map((software) => {
    const dir = path.join(options.folder, software);
    const files = readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort();
    const tasks: Task[] = [];
    const errors: Array<{ file: string; error: string }> = [];
    for (const file of files) {
      try {
        tasks.push(parseTaskText(APPS, readFileSync(path.join(dir, file), 'utf8'), file.slice(0, -'.json'.length)));
      } catch (err) {
        errors.push({ file, error: err instanceof Error ? err.message : String(err) });
      }
    }
    return { software, files: files.length, tasks: withPredicatesChecked(tasks), errors };
  });

  const facts = await probeLocalHost(options.config.localApps, probesOf(APPS, loaded.flatMap((l) => l.tasks)), { drivers: options.drivers ?? Object.keys(defaultDrivers()) });
  const hosts = deploymentCapabilities(options.config, facts);
  const kinds: Capabilities[] = [
    { ...(deploymentCapabilities({ hosts: [{ id: 'local', kind: 'local' }], localApps: options.config.localApps }, facts)[0] as Capabilities) },
    { host: 'osworld', kind: 'osworld', ...SCIENCEBOARD_VM },
  ];
  const columns = [...hosts, ...kinds];

  return {
    folder: options.folder,
    columns: [
      ...hosts.map((h) => ({ name: h.host, kind: h.kind, inDeployment: true })),
      ...kinds.map((k) => ({ name: k.host, kind: k.kind, inDeployment: hosts.some((h) => h.kind === k.kind) })),
    ],
    applications: loaded.map(({ software, files, tasks, errors }) => {
      const unmetByColumn = columns.map((host) => tasks.map((task) => ({ task, unmet: unmetNeeds(APPS, task, host) })));
      return {
        software,
        files,
        parsed: tasks.length,
        errors,
        support: unmetByColumn.map((verdicts) => {
          const groups = new Map<string, string[]>();
          for (const { task, unmet } of verdicts) for (const label of new Set(unmet.map(reasonLabel))) groups.set(label, [...(groups.get(label) ?? []), task.id]);
          return {
            supported: verdicts.filter((v) => v.unmet.length === 0).length,
            reasons: [...groups].map(([reason, ids]) => ({ reason, tasks: ids })).sort((a, b) => b.tasks.length - a.tasks.length || a.reason.localeCompare(b.reason)),
          };
        }),
        tasks: tasks.map((task, i) => ({ id: task.id, supportedBy: columns.filter((_, c) => unmetByColumn[c]?.[i]?.unmet.length === 0).map((c) => c.host) })),
      };
    }),
  };
}
