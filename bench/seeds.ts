import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';

/**
 * The statistical claims that CI checks at one seed (CODA_SEED 1), checked at other seeds: each
 * named test file run whole, once per seed, with mocha on its own (no parallel workers, its own
 * Temporal and MinIO), its claims' figures taken from what it prints. docs/tests.md records the
 * latest figures with their date and commit.
 *
 *   node build/bench/seeds.js [--files learning-loop,real-small-planner-desktops,real-small-planner-grpo] [--seeds 2,3,4,5]
 *
 * A seed takes what its files take on a quiet 2-core machine: the learning loop about 15 minutes,
 * the small planner on the desktops about 5, its GRPO about 7.
 */
const FILES: Readonly<Record<string, string>> = {
  'learning-loop': 'build/test/training/learning-loop.test.js',
  'real-small-planner-desktops': 'build/test/training/real-small-planner-desktops.test.js',
  'real-small-planner-grpo': 'build/test/training/real-small-planner-grpo.test.js',
};
const ROOT = path.resolve(__dirname, '..', '..');

interface SeedRun {
  readonly file: string;
  readonly seed: number;
  readonly passed: boolean;
  readonly seconds: number;
  /** The lines the file prints of its figures (rounds, rewards, Average@k) and its failures. */
  readonly figures: readonly string[];
}

function parseList(value: string, name: string, check: (item: string) => boolean): string[] {
  const items = value.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const bad = items.filter((item) => !check(item));
  if (items.length === 0 || bad.length > 0) throw new Error(`--${name}: expected a comma-separated list, got ${JSON.stringify(value)}${bad.length > 0 ? ` (${bad.join(', ')} not known)` : ''}`);
  return items;
}

function runFile(file: string, seed: number): SeedRun {
  const started = Date.now();
  const args = ['--no-config', '--require', 'source-map-support/register', '--require', 'build/test/hooks.js', '--timeout', '3600000', '--exit', FILES[file]!];
  const out = spawnSync(path.join(ROOT, 'node_modules', '.bin', 'mocha'), args, { cwd: ROOT, env: { ...process.env, CODA_SEED: String(seed) }, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const text = `${out.stdout}\n${out.stderr}`;
  const figures = text.split('\n').filter((line) => /round \d+:|Average@|reward|passing|failing|AssertionError/.test(line)).map((line) => line.trim());
  return { file, seed, passed: out.status === 0, seconds: Math.round((Date.now() - started) / 1000), figures };
}

function main(): void {
  const { values } = parseArgs({ options: { files: { type: 'string', default: Object.keys(FILES).join(',') }, seeds: { type: 'string', default: '2,3,4,5' } } });
  const files = parseList(values.files, 'files', (f) => f in FILES);
  const seeds = parseList(values.seeds, 'seeds', (s) => /^\d+$/.test(s)).map(Number);
  const runs: SeedRun[] = [];
  for (const seed of seeds) {
    for (const file of files) {
      const run = runFile(file, seed);
      runs.push(run);
      console.log(`${file} seed ${seed}: ${run.passed ? 'held' : 'FAILED'} in ${run.seconds} s`);
      for (const line of run.figures) console.log(`    ${line}`);
    }
  }
  const out = path.join(ROOT, 'test-artifacts', 'bench-seeds.json');
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(runs, null, 2)}\n`);
  console.log(`${runs.filter((r) => r.passed).length} of ${runs.length} held; every line in ${out}`);
  process.exitCode = runs.every((r) => r.passed) ? 0 : 1;
}

try {
  main();
} catch (err) {
  console.error(`bench/seeds: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 2;
}
