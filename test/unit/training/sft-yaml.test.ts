import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { writeSftInputs } from '../../../activities/training/trainer-inputs';
import { loadConfig } from '../../../config/load';
import type { DatasetManifest } from '../../../core/training';
import { REPO_CONFIG } from '../../../infra/ephemeral';

/**
 * The YAML the GPU worker writes for LLaMA-Factory keeps every value of training.sft.config as it
 * is, read as LLaMA-Factory reads it: OmegaConf's YAML 1.1, where a bare `no` is false (the real
 * trainer refused `save_strategy: no` so: "False is not a valid SaveStrategy"), and as YAML 1.2, as
 * the trainer double reads it (doubles/trainers/llamafactory.ts).
 */
describe('the SFT YAML, read as YAML 1.1 as LLaMA-Factory reads it', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'coda-sft-yaml-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps strings that YAML 1.1 would read as booleans, and the booleans and numbers', () => {
    const dataFile = path.join(dir, 'data.json');
    writeFileSync(dataFile, JSON.stringify([{ messages: [{ role: 'user', content: 'Task: x' }, { role: 'assistant', content: 'Thought: y\nAction: DONE' }], images: [] }]));
    const manifest = { kind: 'sft', dataKey: 'coda/datasets/x/data.json' } as DatasetManifest;
    const base = loadConfig(REPO_CONFIG).training.sft;
    const config = { ...base.config, save_strategy: 'no', report_to: 'none', optim: 'on', use_cpu: true, learning_rate: 3e-3 };
    const inputs = writeSftInputs({ ...base, config }, { manifest, dir, dataFile }, { inputs: path.join(dir, 'in'), checkpoints: path.join(dir, 'out'), output: path.join(dir, 'out') }, { model: 'm' }, undefined, undefined);
    const text = readFileSync(inputs.args[1]!, 'utf8');
    for (const version of ['1.1', '1.2'] as const) {
      const read = parse(text, { version }) as Record<string, unknown>;
      for (const [key, value] of Object.entries(config)) assert.deepEqual(read[key], value, `${key} read as YAML ${version}`);
    }
  });
});
