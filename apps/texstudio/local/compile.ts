import { statSync } from 'node:fs';
import * as path from 'node:path';
import { firstLatexError } from '../checks';
import { CommandError, runCommandOutput, type Env } from '../../../io/process';

export interface CompileOptions {
  /** The desktop's HOME: TeX keeps its caches there, as in the VM's home. */
  readonly home: string;
  readonly pdflatex: string;
  readonly bibtex: string;
  /** Per program run; a run that takes longer is killed and the compile fails. */
  readonly timeoutMs: number;
}

export type CompileOutcome = { readonly passed: true; readonly detail: string } | { readonly passed: false; readonly detail: string };

/**
 * ScienceBoard's /tex/check on a local desktop: pdflatex `file`.tex in `folder`, then, with
 * `bibtex`, bibtex and pdflatex twice; every run must exit with 0, and a PDF must come out of
 * it. Unlike the VM's server, each run is bounded by a timeout, nothing waits for input
 * (nonstopmode), no shell escape is allowed, and TeX reads and writes only below the folder
 * (kpathsea's paranoid openin/openout), so a document cannot reach the rest of the machine.
 */
export async function compileDocument(folder: string, file: string, bibtex: boolean, options: CompileOptions): Promise<CompileOutcome> {
  const env: Env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: options.home,
    LANG: 'C.UTF-8',
    // One error message per line, whatever its length, so the first error reads whole.
    max_print_line: '10000',
    openin_any: 'p',
    openout_any: 'p',
  };
  const latex = [options.pdflatex, ['-interaction=nonstopmode', '-halt-on-error', '-no-shell-escape', `${file}.tex`]] as const;
  const runs = bibtex ? [latex, [options.bibtex, [file]] as const, latex, latex] : [latex];
  const pdf = path.join(folder, `${file}.pdf`);
  const started = Date.now();
  for (const [program, args] of runs) {
    try {
      await runCommandOutput(program, args, { env, cwd: folder, timeoutMs: options.timeoutMs });
    } catch (err) {
      if (!(err instanceof CommandError)) throw err;
      const said = firstLatexError(err.stdout) ?? bibtexError(err.stdout) ?? err.stderr.trim().split('\n').at(-1) ?? '';
      return { passed: false, detail: `${path.basename(program)} ${err.detail}${said === '' ? '' : `: ${said}`}` };
    }
  }
  const made = statSync(pdf, { throwIfNoEntry: false });
  if (made === undefined || made.mtimeMs < started - 1000) return { passed: false, detail: `every run exited with 0, but no ${file}.pdf came out of them` };
  const steps = runs.map(([program]) => path.basename(program)).join(', ');
  return { passed: true, detail: `${steps}: ${file}.pdf (${made.size} bytes)` };
}

/** bibtex's own error lines look like `I couldn't open database file refs.bib` or `... ---line 3 of file refs.bib`. */
function bibtexError(output: string): string | undefined {
  return output.split('\n').find((l) => /^I (couldn't|found no)|---line \d+ of file/.test(l))?.trim();
}
