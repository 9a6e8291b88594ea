import { texDependencies } from './texstudio/dependencies';
import { funcDrives, type Task } from './task';
import { commandLine, type AppSchema } from './task-common';

/**
 * Whether a deployment can run a task, decided before any desktop is leased. What a task needs
 * is derived from its JSON: the apps its steps launch or drive (cross-application funcs are
 * prefixed with the other app's name, `chimerax_open`), the programs its checks run (pdflatex,
 * bibtex), the TeX files its documents use, the network its steps reach (a download, a PDB
 * entry ChimeraX fetches), the files of ScienceBoard's VM snapshot it reads without writing them
 * (a document's figures, a GRASS GIS location, a workspace a launch opens), and the funcs and
 * checks the project does not know. What a host has is a description of its facts (Capabilities),
 * probed on the host's side (activities/desktop/local/host-facts.ts): core stays pure. A task that
 * needs what no host has is *unsupported*: reported with the reason and counted apart, never run,
 * never a failure of the agent.
 */

/** What one host's desktops really offer tasks. */
export interface Capabilities {
  /** Host id in temporal.yaml. */
  readonly host: string;
  readonly kind: 'local' | 'osworld' | 'qemu';
  /** The apps its desktops run, by software name; 'any' for ScienceBoard's VM image, which has every one. */
  readonly apps: readonly string[] | 'any';
  /** Helper programs its desktops' checks can run (pdflatex, bibtex). */
  readonly programs: readonly string[] | 'any';
  /** TeX files its TeX installation has (what kpsewhich finds). */
  readonly texFiles: readonly string[] | 'any';
  /** Its desktops reach the internet. */
  readonly network: boolean;
  /** Its desktops hold the files of ScienceBoard's VM snapshot (a local desktop starts from an empty HOME). */
  readonly vmSnapshot: boolean;
}

export type Need =
  | { readonly kind: 'app'; readonly app: string; readonly because: string }
  | { readonly kind: 'program'; readonly program: string; readonly because: string }
  | { readonly kind: 'texFile'; readonly file: string; readonly because: string }
  | { readonly kind: 'network'; readonly because: string }
  | { readonly kind: 'vmFile'; readonly path: string; readonly because: string }
  /** A func or check the project does not know (a later ScienceBoard release): no host runs it. */
  | { readonly kind: 'unknown'; readonly because: string };

export type Support = { readonly supported: true; readonly hosts: readonly string[] } | { readonly supported: false; readonly reason: string };

/**
 * The app a launch command starts, by the launch patterns of `apps` (the registry's, apps/index.ts:
 * `/app/bin/kalgebra`, `texstudio file...`, `grass --gui`, `code` for Lean's VS Code), named as task `type`s.
 */
const launchedApp = (apps: readonly AppSchema[], line: string): string | undefined => apps.find((app) => app.launch.test(line))?.software;

/** The VM user's home: a path under it that no step writes comes from the VM snapshot. */
const VM_HOME = '/home/user/';

/** A PDB identifier (4 characters, a digit first): ChimeraX's `open` fetches it from the RCSB. */
const PDB_ID = /^[0-9][A-Za-z0-9]{3}$/;

/**
 * Needs of shipped tasks that nothing in their JSON shows, keyed by software and id;
 * `instruction` is the start of the task's instruction, so a different task that happens to have
 * the same id is not annotated. Only what cannot be derived stays here.
 */
const ANNOTATIONS: Readonly<Record<string, { readonly instruction: string; readonly needs: readonly Need[] }>> = {
  'TeXstudio/B-04': {
    instruction: "Find the paper named 'A New Method in the Problem of Three Cubes' via Google Scholar",
    needs: [{ kind: 'network', because: 'its instruction asks for a Google Scholar search, whose BibTeX the checks expect' }],
  },
};

type Step = Task['initialize'][number];

/** A field of a step or check, whatever its func or type (the derivation reads fields by name so that it covers every app's funcs). */
const field = (item: object, name: string): unknown => (item as Record<string, unknown>)[name];

/** The files a task's steps write, as VM paths (touch). */
const writtenFiles = (task: Task): Set<string> => new Set(task.initialize.flatMap((s) => (s.func === 'touch' ? [s.path] : [])));

/** The VM paths a command line names under the VM user's home, environment assignments (LD_LIBRARY_PATH=...) aside. */
function homePathsOf(line: string): string[] {
  return line
    .split(/\s+/)
    .filter((word) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(word))
    .map((word) => word.replace(/^["']|["']$/g, ''))
    .filter((word) => word.startsWith(VM_HOME));
}

/** Everything a task needs, each with the step, check or note it comes from; `apps` say what its launches start and its funcs drive. */
export function taskNeeds(apps: readonly AppSchema[], task: Task): Need[] {
  const needs: Need[] = [{ kind: 'app', app: task.type, because: `it is a ${task.type} task` }];
  const written = writtenFiles(task);
  const isWritten = (vmPath: string): boolean => written.has(vmPath) || [...written].some((w) => w.startsWith(`${vmPath.replace(/\/$/, '')}/`));

  for (const [i, step] of task.initialize.entries()) {
    const at = `initialize[${i}]`;
    needs.push(...stepNeeds(apps, step, at, task.type, isWritten));
  }

  // The documents the task writes: their TeX files, and the files beside them no step writes.
  for (const [i, step] of task.initialize.entries()) {
    if (step.func !== 'touch' || !step.path.endsWith('.tex')) continue;
    const folder = step.path.slice(0, step.path.lastIndexOf('/') + 1);
    const deps = texDependencies(step.text);
    const by = `used by ${step.path}, which initialize[${i}] writes`;
    for (const file of deps.texFiles) needs.push({ kind: 'texFile', file, because: by });
    for (const local of deps.localFiles) {
      const paths = local.candidates.map((c) => `${folder}${c}`);
      if (!paths.some(isWritten)) needs.push({ kind: 'vmFile', path: paths[0] ?? local.command, because: by });
    }
  }

  for (const [i, check] of task.evaluate.entries()) {
    if (check.type === 'compile') {
      needs.push({ kind: 'program', program: 'pdflatex', because: `evaluate[${i}] compiles ${check.path}/${check.file}.tex` });
      if (task.initialize.some((s) => s.func === 'touch' && s.path.endsWith('.bib'))) needs.push({ kind: 'program', program: 'bibtex', because: `evaluate[${i}] runs bibtex for the .bib the task writes` });
    }
  }

  for (const reason of unknownOf(task)) needs.push({ kind: 'unknown', because: reason });
  const note = ANNOTATIONS[`${task.type}/${task.id}`];
  if (note !== undefined && task.instruction.startsWith(note.instruction)) needs.push(...note.needs);
  return needs;
}

/** The funcs and checks of the task the schema did not know (`task.unknown`, set by the loader), one reason each. */
const unknownOf = (task: Task): readonly string[] => task.unknown ?? [];

function stepNeeds(apps: readonly AppSchema[], step: Step, at: string, software: string, isWritten: (vmPath: string) => boolean): Need[] {
  const needs: Need[] = [];
  const func = step.func as string;
  if (func === 'launch') {
    const line = commandLine(field(step, 'command') as string | string[]);
    const app = launchedApp(apps, line) ?? `the program of ${JSON.stringify(line)}`;
    needs.push({ kind: 'app', app, because: `${at} launches it` });
    for (const vmPath of homePathsOf(line)) if (!isWritten(vmPath)) needs.push({ kind: 'vmFile', path: vmPath, because: `${at} opens it` });
    return needs;
  }
  if (func === 'touch' || func === 'execute') return needs;
  // The app a func drives (by `apps`: an app's own funcs drive it, `chimerax_open` in a TeXstudio task ChimeraX); common funcs none.
  const app = funcDrives(apps, software, func) ?? software;
  if (app !== software) needs.push({ kind: 'app', app, because: `${at} ${func} drives it` });
  const name = func.startsWith(`${app.toLowerCase()}_`) ? func.slice(app.length + 1) : func;
  // What the app's own funcs reach: ChimeraX fetches what it opens, GRASS GIS opens a location.
  const url = field(step, 'url');
  if (typeof url === 'string' && /^https?:\/\//.test(url)) needs.push({ kind: 'network', because: `${at} ${func} downloads ${url}` });
  if (app === 'ChimeraX' && name === 'open' && typeof field(step, 'name') === 'string' && PDB_ID.test(field(step, 'name') as string)) {
    needs.push({ kind: 'network', because: `${at} ${func} fetches PDB entry ${field(step, 'name') as string} from the RCSB` });
  }
  if (app === 'ChimeraX' && name === 'alphafold_match') needs.push({ kind: 'network', because: `${at} ${func} queries the AlphaFold database` });
  const grassdb = field(step, 'grassdb');
  const location = field(step, 'location');
  if (typeof grassdb === 'string' && typeof location === 'string') {
    const vmPath = `${grassdb.replace(/\/$/, '')}/${location}`;
    if (!isWritten(vmPath)) needs.push({ kind: 'vmFile', path: vmPath, because: `${at} ${func} opens this GRASS GIS location` });
  }
  return needs;
}

/** The needs `host` does not meet. */
function unmet(needs: readonly Need[], host: Capabilities): Need[] {
  const has = (list: readonly string[] | 'any', item: string): boolean => list === 'any' || list.includes(item);
  return needs.filter((need) => {
    switch (need.kind) {
      case 'app':
        return !has(host.apps, need.app);
      case 'program':
        return !has(host.programs, need.program);
      case 'texFile':
        return !has(host.texFiles, need.file);
      case 'network':
        return !host.network;
      case 'vmFile':
        return !host.vmSnapshot;
      case 'unknown':
        return true;
    }
  });
}

/** One need, in words, with where it comes from. */
export const describeNeed = (need: Need): string => {
  switch (need.kind) {
    case 'app':
      return `${need.app} (${need.because})`;
    case 'program':
      return `the program ${need.program} (${need.because})`;
    case 'texFile':
      return `the TeX ${need.file.includes(', ') ? 'files' : 'file'} ${need.file} (${need.because})`;
    case 'network':
      return `the internet (${need.because})`;
    case 'vmFile':
      return `${need.path} of ScienceBoard's VM snapshot (${need.because})`;
    case 'unknown':
      return `what no host has: ${need.because}`;
  }
};

/** What a host lacks for a task, merged per app, TeX files and snapshot files in one entry each so that a reason stays short. */
export function unmetNeeds(apps: readonly AppSchema[], task: Task, host: Capabilities): Need[] {
  return merge(unmet(taskNeeds(apps, task), host));
}

/** Whether some host of the deployment can run the task; if none can, why, in words. */
export function taskSupport(apps: readonly AppSchema[], task: Task, deployment: readonly Capabilities[]): Support {
  const needs = taskNeeds(apps, task);
  const able = deployment.filter((host) => unmet(needs, host).length === 0).map((host) => host.host);
  if (able.length > 0) return { supported: true, hosts: able };
  if (deployment.length === 0) return { supported: false, reason: 'the deployment has no hosts' };
  const reasons = new Map<string, string[]>();
  for (const host of deployment) {
    const missing = merge(unmet(needs, host)).map(describeNeed).join('; ');
    reasons.set(missing, [...(reasons.get(missing) ?? []), host.host]);
  }
  return {
    supported: false,
    reason: [...reasons].map(([missing, hosts]) => `needs ${missing}, which ${hosts.length > 1 ? 'hosts' : 'host'} ${hosts.join(', ')} ${hosts.length > 1 ? 'do' : 'does'} not have`).join('; '),
  };
}

/**
 * One entry per app (A-01 launches ChimeraX and drives it three times), per program, and one for
 * all TeX files and one for all snapshot files of a task, their names and reasons joined.
 */
function merge(needs: readonly Need[]): Need[] {
  const merged: Need[] = [];
  const join = (a: string, b: string): string => (a.split(', ').includes(b) ? a : `${a}, ${b}`);
  const joinReason = (a: string, b: string): string => (a === b || a.startsWith(`${b}, `) || a.endsWith(`, ${b}`) || a.includes(`, ${b}, `) ? a : `${a}, ${b}`);
  for (const need of needs) {
    const same = merged.findIndex(
      (m) =>
        m.kind === need.kind &&
        ((m.kind === 'app' && need.kind === 'app' && m.app === need.app) ||
          (m.kind === 'program' && need.kind === 'program' && m.program === need.program) ||
          m.kind === 'texFile' ||
          m.kind === 'vmFile'),
    );
    const previous = merged[same];
    if (previous === undefined) merged.push(need);
    else if (previous.kind === 'texFile' && need.kind === 'texFile') merged[same] = { ...previous, file: join(previous.file, need.file), because: joinReason(previous.because, need.because) };
    else if (previous.kind === 'vmFile' && need.kind === 'vmFile') merged[same] = { ...previous, path: join(previous.path, need.path), because: joinReason(previous.because, need.because) };
    else merged[same] = { ...previous, because: joinReason(previous.because, need.because) };
  }
  return merged;
}

/** What a task set asks of a host's installation, for the probe: every program and TeX file some task needs. */
export function probesOf(apps: readonly AppSchema[], tasks: readonly Task[]): { readonly programs: string[]; readonly texFiles: string[] } {
  const needs = tasks.flatMap((task) => taskNeeds(apps, task));
  return {
    programs: [...new Set(needs.flatMap((n) => (n.kind === 'program' ? [n.program] : [])))].sort(),
    texFiles: [...new Set(needs.flatMap((n) => (n.kind === 'texFile' ? [n.file] : [])))].sort(),
  };
}

/** The parts of temporal.yaml that say what hosts are (structurally: config/schema.ts's Config fits). */
export interface DeploymentDescription {
  readonly hosts: ReadonlyArray<{ readonly id: string; readonly kind: 'local' | 'osworld' | 'qemu'; readonly image?: unknown }>;
  readonly localApps: ReadonlyArray<{ readonly software: string }>;
}

/** What the probe found on the machine of the local hosts (activities/desktop/local/host-facts.ts). */
export interface LocalHostFacts {
  /** The localApps software whose binary resolves and that has a driver. */
  readonly apps: readonly string[];
  readonly programs: readonly string[];
  readonly texFiles: readonly string[];
}

/** ScienceBoard's VM image: every app, its programs and TeX installation, the snapshot's files and the internet. */
export const SCIENCEBOARD_VM = { apps: 'any', programs: 'any', texFiles: 'any', network: true, vmSnapshot: true } as const;

/**
 * The project's own VM image (infra/vm-image) as far as tasks have been shown to run on it: none
 * yet. It holds KAlgebra and TeXstudio, but the osworld path reads KAlgebra through ScienceBoard's
 * modified build's state server, which the image does not serve yet, and no TeXstudio task has
 * been run on it; a qemu host with it is routed no task until one has.
 */
export const PROJECT_VM = { apps: [], programs: [], texFiles: [], network: false, vmSnapshot: false } as const;

/**
 * What each host of a deployment offers: an osworld host runs ScienceBoard's VMs (SCIENCEBOARD_VM),
 * a qemu host its image's (ScienceBoard's own image converted: SCIENCEBOARD_VM; the project's: PROJECT_VM);
 * a local host runs what `facts` found (its Xvfb desktops on this machine, no network, an empty
 * HOME). Without facts, a local host is taken at temporal.yaml's word: the apps of `localApps`, and
 * no program or TeX file known (enough to route a task by software, never to call it supported).
 */
export function deploymentCapabilities(config: DeploymentDescription, facts?: LocalHostFacts): Capabilities[] {
  const local: LocalHostFacts = facts ?? { apps: [...new Set(config.localApps.map((a) => a.software))], programs: [], texFiles: [] };
  return config.hosts.map((host): Capabilities => {
    if (host.kind === 'local') return { host: host.id, kind: 'local', apps: local.apps, programs: local.programs, texFiles: local.texFiles, network: false, vmSnapshot: false };
    if (host.kind === 'qemu') return { host: host.id, kind: 'qemu', ...(host.image === 'project' ? PROJECT_VM : SCIENCEBOARD_VM) };
    return { host: host.id, kind: 'osworld', ...SCIENCEBOARD_VM };
  });
}
