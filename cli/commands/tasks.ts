import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { loadConfig } from '../../config/load';
import { taskCensus, type TaskCensus } from '../../activities/tasks/census';
import { DEFAULT_TASK_ROOT } from '../../activities/tasks/library';
import { json, UsageError } from '../context';
import { textTable } from '../table';
import { forTerminal } from '../terminal';

/**
 * `coda tasks` as text: one row per application (files, parsed, and how many tasks each host of
 * the deployment and each host kind runs), a total, then per column the reasons the other tasks
 * cannot run there, grouped, with the tasks of each. The Markdown form is the README's table.
 */
export function formatCensus(census: TaskCensus, markdown = false): string {
  const header = ['software', 'files', 'parsed', ...census.columns.map((c) => (c.inDeployment ? c.name : `${c.name}*`))];
  const rows = census.applications.map((a) => [a.software, String(a.files), String(a.parsed), ...a.support.map((s) => String(s.supported))]);
  const sum = (pick: (a: TaskCensus['applications'][number]) => number): string => String(census.applications.reduce((n, a) => n + pick(a), 0));
  rows.push(['total', sum((a) => a.files), sum((a) => a.parsed), ...census.columns.map((_, c) => sum((a) => a.support[c]?.supported ?? 0))]);
  const lines = [markdown ? markdownTable(header, rows) : textTable([header, ...rows], { numbers: true }), ''];
  const kinds = census.columns.filter((c) => !c.inDeployment).map((c) => c.name);
  if (kinds.length > 0) lines.push(`${markdown ? '\\*' : '*'} a host kind the deployment has none of (${kinds.join(', ')}): what such a host would run`, '');
  lines.push('Columns: each host of the deployment; `local`: a local host on this machine (probed: app binaries with a driver, pdflatex/bibtex, TeX files by kpsewhich; no network, an empty HOME); `osworld`: a ScienceBoard VM (every app, the snapshot, the internet).', '');
  for (const [c, column] of census.columns.entries()) {
    const apps = census.applications.filter((a) => (a.support[c]?.reasons.length ?? 0) > 0);
    if (apps.length === 0) continue;
    lines.push(markdown ? `Why not on \`${column.name}\`:` : `why not on ${column.name}:`);
    for (const app of apps) {
      for (const { reason, tasks } of app.support[c]?.reasons ?? []) lines.push(`${markdown ? '- ' : '  '}${app.software}: ${tasks.length} ${reason} (${tasks.join(', ')})`);
    }
    lines.push('');
  }
  // One line per file: the loader's first complaint (--json has every one).
  const errors = census.applications.flatMap((a) => a.errors.map((e) => `${a.software}/${e.file}: ${e.error.split('\n').slice(0, 2).map((l) => l.trim()).join(' ')}`));
  if (errors.length > 0) lines.push(`${errors.length} files do not parse:`, ...errors.map((e) => `${markdown ? '- ' : '  '}${e}`), '');
  return lines.join('\n').trimEnd();
}

const markdownTable = (header: string[], rows: string[][]): string =>
  [header, header.map((_, i) => (i === 0 ? '---' : '---:')), ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');

export function registerTasks(program: Command): void {
  program
    .command('tasks')
    .description('for a folder of task files (one subfolder per application): files, how many parse, how many each host and host kind runs, and why not')
    .option('--folder <dir>', 'the folder of task files', DEFAULT_TASK_ROOT)
    .option('--config <file>', 'the deployment (default: $CODA_CONFIG or temporal.yaml)')
    .option('--markdown', 'the table as Markdown (the README has it)')
    .option('--json', 'everything as JSON, per task too')
    .action(async (options: { folder: string; config?: string; markdown?: boolean; json?: boolean }) => {
      if (!existsSync(options.folder)) throw new UsageError(`no folder ${options.folder}`);
      const census = await taskCensus({ folder: options.folder, config: loadConfig(options.config) });
      // Waits until the text is written: the process exits right after, and a pipe takes large output in several writes.
      const text = forTerminal(`${options.json ? json(census) : formatCensus(census, options.markdown)}\n`);
      await new Promise<void>((resolve, reject) => process.stdout.write(text, (err) => (err ? reject(err) : resolve())));
    });
}
