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
