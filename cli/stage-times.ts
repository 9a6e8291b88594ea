import { appendFileSync, existsSync, readFileSync } from 'node:fs';

/**
 * Where the time of every install step, the build and every demo stage goes when CODA_TIMES names
 * a file: one line each, `PHASE<TAB>STEP<TAB>SECONDS<TAB>OUTCOME` (infra/install.sh and
 * infra/demo.sh write the same lines). bench/from-bare.ts reads them back.
 */

export interface StageTimeLine {
  readonly phase: string;
  readonly step: string;
  readonly seconds: number;
  /** ok, failed, or skipped (an install step that found everything there). */
  readonly outcome: string;
}

/** Appends one line to $CODA_TIMES, when it is set. */
export function recordStageTime(phase: string, step: string, seconds: number, outcome = 'ok', env: NodeJS.ProcessEnv = process.env): void {
  const file = env.CODA_TIMES;
  if (file === undefined || file === '') return;
  appendFileSync(file, `${phase}\t${step}\t${seconds.toFixed(1)}\t${outcome}\n`);
}

export function readStageTimes(file: string): StageTimeLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [phase = '', step = '', seconds = '', outcome = ''] = line.split('\t');
      return { phase, step, seconds: Number(seconds), outcome };
    });
}
