import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import { attemptOfManifest, attemptPrefix, judgeEvalKeyBase, reportSeriesPrefix, safeRelative } from '../../core/keys';
import type { ObjectStore } from '../../activities/storage/object-store';
import { print, UsageError, type Context, type LazyContext } from '../context';
import { manifestKeyOf } from '../start';

/** `coda fetch`: stored results copied from S3 into local files, in the layout they have there. */

/** Writes the objects below `base` into `out` in the same layout; nothing is written when a key would land outside `out`. */
async function fetchKeys(store: ObjectStore, keys: readonly string[], base: string, out: string): Promise<number> {
  const files = keys.map((key) => ({ key, file: path.join(out, safeRelative(key.slice(base.length).replace(/^\//, ''), store.uri(key))) }));
  let bytes = 0;
  for (const { key, file } of files) {
    const body = await store.get(key);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, body);
    bytes += body.length;
  }
  return bytes;
}

async function fetchTrajectory(c: Context, ref: string, out: string): Promise<void> {
  const key = manifestKeyOf(c.config, ref);
  const base = attemptPrefix(c.config.storage.prefix, attemptOfManifest(c.config.storage.prefix, key));
  const keys = await c.store().list(`${base}/`);
  if (!keys.includes(key)) throw new UsageError(`no trajectory at ${c.store().uri(key)}`);
  const bytes = await fetchKeys(c.store(), keys, base, out);
  print(`${keys.length} files (${(bytes / 1024).toFixed(0)} KiB) from ${c.store().uri(`${base}/`)} into ${out}`);
}

/** The key of a report without its extension: judge-evals/ID, SERIES/STAMP-RUN, or a series' latest. */
async function reportBase(c: Context, which: string): Promise<string> {
  const prefix = c.config.storage.prefix;
  if (which.startsWith('judge-evals/')) return judgeEvalKeyBase(prefix, which.slice('judge-evals/'.length));
  if (which.includes('/')) return `${reportSeriesPrefix(prefix, which.split('/')[0]!)}/${which.split('/').slice(1).join('/').replace(/\.(json|md)$/, '')}`;
  const latest = (await c.store().list(`${reportSeriesPrefix(prefix, which)}/`)).filter((k) => k.endsWith('.json')).sort().at(-1);
  if (latest === undefined) throw new UsageError(`the series "${which}" has no report yet`);
  return latest.slice(0, -'.json'.length);
}

async function fetchReport(c: Context, which: string, out: string): Promise<void> {
  const base = await reportBase(c, which);
  const keys = [`${base}.json`, `${base}.md`];
  for (const key of keys) if (!(await c.store().exists(key))) throw new UsageError(`no report at ${c.store().uri(key)}`);
  await fetchKeys(c.store(), keys, path.posix.dirname(base), out);
  print(`${keys.map((k) => path.join(out, path.posix.basename(k))).join('\n')}`);
}

export function registerFetch(program: Command, ctx: LazyContext): void {
  const fetchCommand = program.command('fetch').description('copy stored results from S3 into local files');
  fetchCommand
    .command('trajectory <ref>')
    .description('manifest, screenshots, decisions, verdicts and judge votes of one attempt (RUN/SOFTWARE/TASK/ATTEMPT or a manifest key)')
    .requiredOption('--out <dir>', 'where to write them (the S3 layout below the attempt)')
    .action((ref: string, options: { out: string }) => fetchTrajectory(ctx(), ref, options.out));
  fetchCommand
    .command('report <which>')
    .description('an evaluation report (JSON and Markdown): a series name (its latest report), SERIES/STAMP-RUN, or judge-evals/ID')
    .requiredOption('--out <dir>', 'where to write it')
    .action((which: string, options: { out: string }) => fetchReport(ctx(), which, options.out));
}
