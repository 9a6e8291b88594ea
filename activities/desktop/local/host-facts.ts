import { accessSync, constants } from 'node:fs';
import * as path from 'node:path';
import type { LocalApp } from '../../../config/schema';
import type { LocalHostFacts } from '../../../core/requirements';
import { CommandError, runCommandOutput } from '../../../io/process';

/**
 * What this machine really has for local desktops, probed here so that core/requirements.ts can
 * decide from facts: the localApps whose program resolves on PATH and that have a driver, the
 * helper programs the checks run (pdflatex, bibtex), and the TeX files the documents use, as
 * kpsewhich finds them (the same search pdflatex makes). A program or file that is missing is
 * simply not listed, so a task needing it is reported unsupported naming it.
 */
export interface HostProbe {
  /** Programs to resolve (from core/requirements.ts probesOf). */
  readonly programs: readonly string[];
  /** TeX file names to look up (footmisc.sty, article.cls, plain.bst). */
  readonly texFiles: readonly string[];
}

export interface HostFactsOptions {
  /** The software that local desktops have a driver for (drivers.ts). */
  readonly drivers: readonly string[];
  readonly kpsewhich?: string;
  /** Where programs are looked for; default: this process's PATH. */
  readonly path?: string;
  readonly timeoutMs?: number;
}

/** The absolute path `program` resolves to on `searchPath`, or undefined (a path with a slash is taken as it is). */
export function resolveProgram(program: string, searchPath: string): string | undefined {
  const candidates = program.includes('/') ? [program] : searchPath.split(path.delimiter).filter((d) => d !== '').map((dir) => path.join(dir, program));
  return candidates.find((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The TeX files of `names` that kpsewhich finds (it prints the path of each file it finds, and exits with how many it did not). */
export async function findTexFiles(names: readonly string[], options: { kpsewhich?: string; env: Readonly<Record<string, string>>; timeoutMs?: number }): Promise<string[]> {
  if (names.length === 0) return [];
  let stdout: string;
  try {
    stdout = (await runCommandOutput(options.kpsewhich ?? 'kpsewhich', names, { env: options.env, timeoutMs: options.timeoutMs ?? 30_000 })).stdout.toString('utf8');
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    if (err.detail === 'is not installed') return [];
    const missing = /^exited with code (\d+)$/.exec(err.detail);
    if (missing === null || Number(missing[1]) > names.length || err.stderr.trim() !== '') throw err;
    stdout = err.stdout;
  }
  const found = new Set(stdout.split('\n').map((line) => path.basename(line.trim())).filter((name) => name !== ''));
  return names.filter((name) => found.has(name));
}

/** Probes this machine for the local hosts of the deployment. */
export async function probeLocalHost(localApps: readonly LocalApp[], probe: HostProbe, options: HostFactsOptions): Promise<LocalHostFacts> {
  const searchPath = options.path ?? process.env.PATH ?? '';
  const apps = [...new Set(localApps.filter((app) => options.drivers.includes(app.software) && resolveProgram(app.command[0] ?? '', searchPath) !== undefined).map((app) => app.software))];
  const programs = probe.programs.filter((program) => resolveProgram(program, searchPath) !== undefined);
  const env: Record<string, string> = { PATH: searchPath, HOME: process.env.HOME ?? '/tmp', LANG: 'C.UTF-8' };
  const kpsewhich = resolveProgram(options.kpsewhich ?? 'kpsewhich', searchPath);
  const texFiles = kpsewhich === undefined ? [] : await findTexFiles(probe.texFiles, { kpsewhich, env, timeoutMs: options.timeoutMs });
  return { apps, programs, texFiles };
}
