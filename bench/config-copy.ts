import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseDocument } from 'yaml';
import { REPO_CONFIG } from '../infra/ephemeral';

/**
 * A copy of temporal.yaml under a bench's data directory with some of the scripted model server's
 * settings changed (dev.scriptedModels: errorRate, latencyMs, ...); its path, for CODA_CONFIG.
 */
export function withScriptedModels(dataDir: string, settings: Readonly<Record<string, number>>): string {
  const doc = parseDocument(readFileSync(REPO_CONFIG, 'utf8'));
  for (const [key, value] of Object.entries(settings)) doc.setIn(['dev', 'scriptedModels', key], value);
  const file = path.join(dataDir, 'temporal.yaml');
  writeFileSync(file, doc.toString());
  return file;
}

/** The command-line options of a bench that runs specialization rounds (parseArgs form), and what they give. */
export const ROUND_OPTIONS = {
  rounds: { type: 'string', default: '3' },
  k: { type: 'string', default: '2' },
  attempts: { type: 'string', default: '2' },
  tasks: { type: 'string', default: '6' },
} as const;

export interface RoundOptions {
  readonly rounds: number;
  readonly k: number;
  readonly attempts: number;
  readonly tasks: number;
}

export const roundOptions = (values: { rounds: string; k: string; attempts: string; tasks: string }): RoundOptions => ({
  rounds: Number(values.rounds),
  k: Number(values.k),
  attempts: Number(values.attempts),
  tasks: Number(values.tasks),
});
