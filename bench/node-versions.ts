import { spawn, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { printTable } from './stats';

/**
 * The step-overhead and orchestrator-capacity benches on two Nodes side by side, in one run: each
 * bench runs once per Node (the machine's own and the project's .tools/node24, by default), one
 * after the other, as a child process started with that Node, so everything it starts
 * (`process.execPath`: the orchestrator worker) runs on it too. Prints each run's output, then
 * one table of the figures that say whether the Node changed the cost of a step.
 *
 *   node build/bench/node-versions.js [--nodes /usr/bin/node,.tools/node24/bin/node] [--runs 2] [--levels 200] [--steps 10]
 */

const ROOT = path.resolve(__dirname, '..', '..');
const PROJECT_NODE = path.join(ROOT, '.tools', 'node24', 'bin', 'node');

/** The figures read from one bench run's tables (bench/stats.ts printTable rows). */
type Figures = Record<string, number>;

/** The machine's own `node`: the first on PATH that is not the project's. */
function machineNode(): string {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter((d) => d !== '' && path.resolve(d) !== path.dirname(PROJECT_NODE));
  const found = spawnSync('sh', ['-c', 'command -v node'], { env: { ...process.env, PATH: dirs.join(path.delimiter) }, encoding: 'utf8' });
  if (found.status !== 0) throw new Error('no node on PATH besides .tools/node24: pass --nodes');
  return found.stdout.trim();
}

const versionOf = (node: string): string => spawnSync(node, ['-p', 'process.version'], { encoding: 'utf8' }).stdout.trim();

/** Runs a compiled bench on `node`, echoing its output, and returns that output. */
function runBench(node: string, bench: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    console.log(`\n=== ${versionOf(node)}: ${bench} ${args.join(' ')}`);
    const child = spawn(node, [path.join(__dirname, bench), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      process.stdout.write(chunk);
    });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${bench} on ${node} exited with ${code}`))));
  });
}

/** The cells after the first of the table row whose first cell is `label` (the `nth` such row), as numbers. */
function row(out: string, label: string, nth = 0): number[] {
  const rows = out
    .split('\n')
    .map((line) => line.trim().split(/\s{2,}/))
    .filter((cells) => cells[0] === label);
  const cells = rows[nth];
  if (cells === undefined) throw new Error(`no row "${label}" #${nth + 1} in the bench's output`);
  return cells.slice(1).map((cell) => Number.parseFloat(cell));
}

function stepOverhead(out: string): Figures {
  const [, directMean, directMedian] = row(out, 'direct, in process');
  const [, durableMean, durableMedian] = row(out, 'Temporal + S3');
  const [, , , durableRest] = row(out, 'Temporal + S3', 1);
  return {
    'direct step, mean ms': directMean!,
    'Temporal + S3 step, mean ms': durableMean!,
    'overhead ratio (mean)': durableMean! / directMean!,
    'overhead ratio (median)': durableMedian! / directMedian!,
    "durable step's rest, mean ms": durableRest!,
  };
}

function capacity(out: string, level: string): Figures {
  const [, seconds, stepsPerSecond, rolloutsPerMinute, cpuPerStep, peakMiB, temporalCpu, minioCpu, , failed] = row(out, level);
  return {
    'seconds for the batch': seconds!,
    'steps/s': stepsPerSecond!,
    'rollouts/min': rolloutsPerMinute!,
    'worker CPU per step, ms': cpuPerStep!,
    'worker peak RSS, MiB': peakMiB!,
    'Temporal server CPU, %': temporalCpu!,
    'MinIO CPU, %': minioCpu!,
    failed: failed!,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { nodes: { type: 'string' }, runs: { type: 'string', default: '2' }, levels: { type: 'string', default: '200' }, steps: { type: 'string', default: '10' } },
  });
  const nodes = values.nodes?.split(',').map((n) => path.resolve(n)) ?? [machineNode(), PROJECT_NODE];
  const versions = nodes.map(versionOf);
  const level = values.levels;
  if (level.includes(',')) throw new Error('--levels: one level, so that the table has one row per Node');

  const results: { bench: string; figures: Figures[] }[] = [
    { bench: 'step overhead', figures: [] },
    { bench: `orchestrator capacity, ${level} rollouts`, figures: [] },
  ];
  for (const node of nodes) results[0]!.figures.push(stepOverhead(await runBench(node, 'step-overhead.js', ['--runs', values.runs])));
  for (const node of nodes) results[1]!.figures.push(capacity(await runBench(node, 'orchestrator-capacity.js', ['--levels', level, '--steps', values.steps]), level));

  const last = versions.length - 1;
  const rows = [['bench', 'figure', ...versions, `${versions[last]} / ${versions[0]}`]];
  for (const { bench, figures } of results) {
    for (const name of Object.keys(figures[0]!)) {
      const cells = figures.map((f) => f[name]!);
      rows.push([bench, name, ...cells.map((v) => (Number.isInteger(v) ? String(v) : v.toFixed(name.startsWith('overhead') ? 3 : 1))), cells[0] === 0 ? '-' : (cells[last]! / cells[0]!).toFixed(2)]);
    }
  }
  printTable(`Node ${versions.join(' against ')}: the same benches in one run`, rows);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
