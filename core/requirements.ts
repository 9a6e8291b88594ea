import { commandLine, type Task } from './task';

/**
 * Whether a deployment can run a task, decided before any desktop is leased. A task needs the
 * apps its steps start or drive, and sometimes what its JSON does not say: the internet (a web
 * search), or files that only ScienceBoard's VM snapshot holds. Those needs are written down by
 * hand per task below (an explicit annotation, not a guess from the instruction's words). A task
 * that needs what no host offers is *unsupported*: reported with the reason and counted apart,
 * never run, never a failure of the agent.
 */

/** What one host's desktops offer tasks. */
export interface Capabilities {
  /** Host id in temporal.yaml. */
  readonly host: string;
  /** The apps its desktops run, by software name; 'any' for ScienceBoard's VM image, which has every one. */
  readonly apps: readonly string[] | 'any';
  /** Its desktops reach the internet. */
  readonly network: boolean;
  /** Its desktops hold the files of ScienceBoard's VM snapshot that some tasks use without writing them. */
  readonly vmSnapshot: boolean;
}

export type Need =
  | { readonly kind: 'app'; readonly app: string; readonly because: string }
  | { readonly kind: 'network'; readonly because: string }
  | { readonly kind: 'vmSnapshot'; readonly because: string };

export type Support = { readonly supported: true; readonly hosts: readonly string[] } | { readonly supported: false; readonly reason: string };

/** ScienceBoard's apps, by what their launch commands run (tasks/VM/*: `/app/bin/kalgebra`, `texstudio file...`, ...). */
const LAUNCHED_APPS: ReadonlyArray<{ readonly app: string; readonly command: RegExp }> = [
  { app: 'KAlgebra', command: /(^|[\s/])kalgebra(\s|$)/ },
  { app: 'TeXstudio', command: /(^|[\s/])texstudio(\s|$)/ },
  { app: 'ChimeraX', command: /(^|[\s/])chimerax(\s|$)/ },
  { app: 'GRASS GIS', command: /(^|[\s/"])grass(\s|$)/ },
  { app: 'Celestia', command: /(^|[\s/])celestia(\s|$)/ },
  { app: 'VS Code', command: /(^|[\s/])code(\s|$)/ },
];

/** Initialize funcs that talk to one app's state or command server. */
const FUNC_APPS: Readonly<Record<string, string>> = {
  tab: 'KAlgebra',
  func_2d: 'KAlgebra',
  func_3d: 'KAlgebra',
  chimerax_clear_log: 'ChimeraX',
  chimerax_open: 'ChimeraX',
  chimerax_turn: 'ChimeraX',
};

/**
 * Needs of the shipped ScienceBoard tasks that their steps do not show, keyed by software and
 * id; `instruction` is the start of the task's instruction, so a different task that happens to
 * have the same id is not annotated.
 */
const ANNOTATIONS: Readonly<Record<string, { readonly instruction: string; readonly needs: readonly Need[] }>> = {
  'TeXstudio/B-04': {
    instruction: "Find the paper named 'A New Method in the Problem of Three Cubes' via Google Scholar",
    needs: [{ kind: 'network', because: 'its instruction asks for a Google Scholar search, whose BibTeX the checks expect' }],
  },
  'TeXstudio/C-03': {
    instruction: "The path of figure 'figs/lat' introduced in the document",
    needs: [
      {
        kind: 'vmSnapshot',
        because:
          'its document includes figs/envelope.pdf, figs/token.pdf and figs/latency.pdf, which the VM snapshot holds and the task does not write, and uses fonts (kpfonts, beramono) of the VM\'s TeX installation',
      },
    ],
  },
};

/** Everything a task needs, each with the step or note it comes from. */
export function taskNeeds(task: Task): Need[] {
  const needs: Need[] = [{ kind: 'app', app: task.type, because: `it is a ${task.type} task` }];
  for (const [i, step] of task.initialize.entries()) {
    if (step.func === 'launch') {
      const line = commandLine(step.command);
      const app = LAUNCHED_APPS.find((a) => a.command.test(line))?.app ?? `the program of ${JSON.stringify(line)}`;
      needs.push({ kind: 'app', app, because: `initialize[${i}] launches it` });
    } else if (Object.hasOwn(FUNC_APPS, step.func)) {
      needs.push({ kind: 'app', app: FUNC_APPS[step.func] as string, because: `initialize[${i}] ${step.func} drives it` });
    }
  }
  const note = ANNOTATIONS[`${task.type}/${task.id}`];
  if (note !== undefined && task.instruction.startsWith(note.instruction)) needs.push(...note.needs);
  return needs;
}

/** The needs `host` does not meet. */
function unmet(needs: readonly Need[], host: Capabilities): Need[] {
  return needs.filter((need) => {
    switch (need.kind) {
      case 'app':
        return host.apps !== 'any' && !host.apps.includes(need.app);
      case 'network':
        return !host.network;
      case 'vmSnapshot':
        return !host.vmSnapshot;
    }
  });
}

const describeNeed = (need: Need): string => {
  switch (need.kind) {
    case 'app':
      return `${need.app} (${need.because})`;
    case 'network':
      return `the internet (${need.because})`;
    case 'vmSnapshot':
      return `ScienceBoard's VM snapshot (${need.because})`;
  }
};

/** Whether some host of the deployment can run the task; if none can, why, in words. */
export function taskSupport(task: Task, deployment: readonly Capabilities[]): Support {
  // What the pipeline does not know, no host can be said to run (core/task.ts parseTask).
  if (task.unknown !== undefined && task.unknown.length > 0) return { supported: false, reason: `the pipeline does not know all it asks: ${task.unknown.join('; ')}` };
  const needs = taskNeeds(task);
  const able = deployment.filter((host) => unmet(needs, host).length === 0).map((host) => host.host);
  if (able.length > 0) return { supported: true, hosts: able };
  if (deployment.length === 0) return { supported: false, reason: 'the deployment has no hosts' };
  const reasons = new Map<string, string[]>();
  for (const host of deployment) {
    const missing = mergeApps(unmet(needs, host)).map(describeNeed).join('; ');
    reasons.set(missing, [...(reasons.get(missing) ?? []), host.host]);
  }
  return {
    supported: false,
    reason: [...reasons].map(([missing, hosts]) => `needs ${missing}, which ${hosts.length > 1 ? 'hosts' : 'host'} ${hosts.join(', ')} ${hosts.length > 1 ? 'do' : 'does'} not have`).join('; '),
  };
}

/** One entry per app, its reasons joined (A-01 launches ChimeraX and drives it three times). */
function mergeApps(needs: readonly Need[]): Need[] {
  const merged: Need[] = [];
  for (const need of needs) {
    const same = need.kind === 'app' ? merged.findIndex((m) => m.kind === 'app' && m.app === need.app) : -1;
    const previous = merged[same];
    if (previous !== undefined) merged[same] = { ...previous, because: `${previous.because}, ${need.because}` };
    else merged.push(need);
  }
  return merged;
}

/** The parts of temporal.yaml that say what hosts offer (structurally: config/schema.ts's Config fits). */
export interface DeploymentDescription {
  readonly hosts: ReadonlyArray<{ readonly id: string; readonly kind: 'local' | 'osworld' }>;
  readonly localApps: ReadonlyArray<{ readonly software: string }>;
}

/**
 * What each host of a deployment offers: a local host runs the apps of `localApps` and has no
 * network or VM snapshot (its desktops are Xvfb displays on a shared machine); an osworld host
 * runs ScienceBoard's VMs, which have every app, the snapshot's files and the internet.
 */
export function deploymentCapabilities(config: DeploymentDescription): Capabilities[] {
  const local = [...new Set(config.localApps.map((a) => a.software))];
  return config.hosts.map((host) =>
    host.kind === 'local' ? { host: host.id, apps: local, network: false, vmSnapshot: false } : { host: host.id, apps: 'any', network: true, vmSnapshot: true },
  );
}
