import { runCommandOutput, type Env } from '../../../io/process';

/**
 * KAlgebra's console, `calgebra`: the same Analitza engine as the app, so an expression read
 * from the app evaluates exactly as the app would evaluate it. It prints results on stderr, one
 * line each, and an error as "Error:" followed by " - reason" lines.
 */

export type CalgebraResult = { readonly ok: true; readonly value: string } | { readonly ok: false; readonly error: string };

export interface CalgebraOptions {
  readonly binary: string;
  readonly env: Env;
  readonly timeoutMs: number;
}

/** Evaluates `lines` in order in one session (earlier definitions are visible to later lines); one result per line. */
export async function calgebra(lines: readonly string[], options: CalgebraOptions): Promise<CalgebraResult[]> {
  if (lines.length === 0) return [];
  for (const line of lines) {
    if (line.trim() === '' || /[\r\n]/.test(line)) throw new Error(`calgebra takes one non-empty line per expression, got ${JSON.stringify(line)}`);
  }
  const { stderr } = await runCommandOutput(options.binary, [], { env: options.env, timeoutMs: options.timeoutMs, input: `${lines.join('\n')}\n` });
  const results = parseCalgebraOutput(stderr.toString('utf8'));
  if (results.length !== lines.length) {
    throw new Error(`calgebra printed ${results.length} results for ${lines.length} lines: ${stderr.toString('utf8').slice(0, 500)}`);
  }
  return results;
}

export function parseCalgebraOutput(text: string): CalgebraResult[] {
  const lines = text.split('\n');
  const exit = lines.lastIndexOf('Exit.');
  const body = (exit >= 0 ? lines.slice(0, exit) : lines).filter((line, i, all) => !(line === '' && i === all.length - 1));
  const results: CalgebraResult[] = [];
  for (let i = 0; i < body.length; i += 1) {
    const line = body[i] ?? '';
    if (line === 'Error:') {
      const reasons: string[] = [];
      while ((body[i + 1] ?? '').startsWith(' - ')) {
        reasons.push((body[i + 1] ?? '').slice(3));
        i += 1;
      }
      results.push({ ok: false, error: reasons.join('; ') });
    } else {
      results.push({ ok: true, value: line });
    }
  }
  return results;
}
