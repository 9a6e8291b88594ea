import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from '../../config/load';
import { keyedRandom } from '../../doubles/scripted-models/seeded';

/**
 * A FAULT for the learning-loop test: the GRPO trainer's command with the labels of its prompt
 * file shuffled among the rows (a derangement: no row keeps its own), then the OpenRLHF double on
 * the same command line. The pipeline under test is unchanged; only what reaches the trainer is
 * wrong, as a dataset writer that mixed rows up would make it.
 */
function main(): number {
  const args = process.argv.slice(2);
  const at = args.indexOf('--data.prompt_dataset');
  const file = args[at + 1];
  if (at === -1 || file === undefined) throw new Error('no --data.prompt_dataset on the command line');
  const rows = readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as { label: string });
  const labels = rows.map((r) => r.label);
  // Keyed by the run seed and the job (the prompt file's folder: the round), like the doubles' draws.
  const random = keyedRandom(loadConfig().dev.scriptedModels?.seed ?? 1, 'shuffled-labels', path.basename(path.dirname(path.dirname(path.resolve(file)))));
  // Sattolo's algorithm: a random cyclic permutation, so every row gets another row's label.
  for (let i = labels.length - 1; i > 0; i--) {
    const j = Math.floor(random() * i);
    [labels[i], labels[j]] = [labels[j] as string, labels[i] as string];
  }
  writeFileSync(file, rows.map((r, i) => JSON.stringify({ ...r, label: labels[i] })).join('\n') + '\n');
  const double = path.resolve(__dirname, '..', '..', 'doubles', 'trainers', 'openrlhf.js');
  return spawnSync(process.execPath, [double, ...args], { stdio: 'inherit' }).status ?? 1;
}

if (require.main === module) process.exit(main());
