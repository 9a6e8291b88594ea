import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

/** The repository's root from build/test/support. */
const ROOT = path.resolve(__dirname, '..', '..', '..');

/**
 * Writes the tiny Qwen2.5-VL the real-trainer and real-server tests train and serve into `dir`
 * (infra/trainers/tiny_qwen2_5_vl.py: real architecture, seeded weights, nothing downloaded), with
 * `python`, infra/install-trainers.sh's venv.
 */
export function buildTinyQwen(python: string, dir: string): void {
  execFileSync(python, [path.join(ROOT, 'infra', 'trainers', 'tiny_qwen2_5_vl.py'), dir], { env: { ...process.env, HF_HUB_OFFLINE: '1' }, stdio: 'pipe' });
}
