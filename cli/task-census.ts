import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { withPredicatesChecked } from '../activities/tasks/library';
import { columnOrder } from '../core/report';
import { taskSupport, type Capabilities } from '../core/requirements';
import { parseTask, type Task } from '../core/task';

/**
 * What a folder of ScienceBoard task files holds for a deployment (`coda tasks`): per software,
 * how many files, how many parse, how many each host can run, and why the others cannot run —
 * the way a new user learns which of ScienceBoard's tasks this deployment runs before starting one.
 */

export interface SoftwareCensus {
  readonly software: string;
  readonly files: number;
  readonly parsed: number;
  /** Tasks each host can run, by host id. */
  readonly supported: Readonly<Record<string, number>>;
  /** Files that are not valid tasks, with the problems. */
  readonly broken: ReadonlyArray<{ readonly id: string; readonly problem: string }>;
  /** Tasks no host can run, with why. */
  readonly unsupported: ReadonlyArray<{ readonly id: string; readonly reason: string }>;
}

/** The folders of task files under `root`: its subfolders with .json files, or `root` itself when it holds them. */
function softwareFolders(root: string): Array<{ software: string; dir: string }> {
  const jsonIn = (dir: string): boolean => readdirSync(dir).some((f) => f.endsWith('.json'));
  if (jsonIn(root)) return [{ software: path.basename(path.resolve(root)), dir: root }];
  return readdirSync(root)
    .map((name) => ({ software: name, dir: path.join(root, name) }))
    .filter(({ dir }) => statSync(dir).isDirectory() && jsonIn(dir));
}

export function taskCensus(root: string, deployment: readonly Capabilities[]): SoftwareCensus[] {
  const folders = softwareFolders(root);
  const bySoftware = new Map(folders.map((f) => [f.software, f.dir]));
  return columnOrder(bySoftware.keys()).map((software) => {
    const dir = bySoftware.get(software) as string;
    const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
    const broken: Array<{ id: string; problem: string }> = [];
    const parsed: Task[] = [];
    for (const file of files) {
      const id = file.slice(0, -'.json'.length);
      try {
        parsed.push(parseTask(JSON.parse(readFileSync(path.join(dir, file), 'utf8')), id));
      } catch (err) {
        broken.push({ id, problem: (err as Error).message.replace(/\n\s+- /g, '; ') });
      }
    }
    const tasks = withPredicatesChecked(parsed);
    const supported = Object.fromEntries(deployment.map((host) => [host.host, tasks.filter((task) => taskSupport(task, [host]).supported).length]));
    const unsupported = tasks.flatMap((task) => {
      const support = taskSupport(task, deployment);
      return support.supported ? [] : [{ id: task.id, reason: support.reason }];
    });
    return { software, files: files.length, parsed: parsed.length, supported, broken, unsupported };
  });
}

/** The census as text: a table (software, files, parsed, one column per host), then the reasons. */
export function renderCensus(census: readonly SoftwareCensus[], deployment: readonly Capabilities[]): string {
  const header = ['software', 'files', 'parsed', ...deployment.map((h) => `${h.host} can run`)];
  const total = (pick: (c: SoftwareCensus) => number): string => String(census.reduce((sum, c) => sum + pick(c), 0));
  const rows = [
    ...census.map((c) => [c.software, String(c.files), String(c.parsed), ...deployment.map((h) => String(c.supported[h.host] ?? 0))]),
    ['all', total((c) => c.files), total((c) => c.parsed), ...deployment.map((h) => total((c) => c.supported[h.host] ?? 0))],
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const lines = [header, ...rows].map((r) => r.map((cell, i) => cell.padEnd(widths[i] as number)).join('  ').trimEnd());
  const unsupported = census.flatMap((c) => c.unsupported.map((u) => `  ${c.software}/${u.id}: ${u.reason}`));
  if (unsupported.length > 0) lines.push('', 'No host can run:', ...unsupported);
  const broken = census.flatMap((c) => c.broken.map((b) => `  ${c.software}/${b.id}: ${b.problem}`));
  if (broken.length > 0) lines.push('', 'Not valid task files:', ...broken);
  return lines.join('\n');
}
