import { execFile } from 'node:child_process';
import { parseArgs } from 'node:util';
import { closeCommandHelper, commandHelperPid, runCommand } from '../io/process';
import { cpuSeconds } from './stats';

/**
 * What starting a short command (xdotool, calgebra, xprop: a desktop runs hundreds a rollout)
 * costs a worker whose memory has grown to `--rss` MB, started by the worker itself (Node's
 * execFile: the kernel copies the worker's page tables at each fork) and by its command helper
 * (io/command-helper.ts, runCommand). Usage:
 *   node build/bench/command-start.js [--rss 650] [--commands 100]
 * It prints, for each way, the worker's CPU ms per command, the helper's (with what it waited for),
 * and the wall ms per command, one command after the other.
 */

const { values } = parseArgs({ options: { rss: { type: 'string', default: '650' }, commands: { type: 'string', default: '100' } } });
const rssMb = Number(values.rss);
const commands = Number(values.commands);

/** This process's CPU in ms, to the microsecond (the helper's, from /proc, is counted in 10 ms ticks). */
const ownCpuMs = (): number => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

function byExecFile(): Promise<void> {
  return new Promise((resolve, reject) => execFile('true', [], (err) => (err === null ? resolve() : reject(err))));
}

const byHelper = async (): Promise<void> => void (await runCommand('true', [], { env: { PATH: process.env.PATH ?? '' }, timeoutMs: 5_000 }));

async function measure(name: string, run: () => Promise<void>): Promise<void> {
  await run(); // the helper starts at the first command: not counted
  const helper = commandHelperPid();
  const [ownBefore, helperBefore, start] = [ownCpuMs(), helper === undefined ? 0 : cpuSeconds(helper, true) * 1000, Date.now()];
  for (let i = 0; i < commands; i += 1) await run();
  const wall = (Date.now() - start) / commands;
  const own = (ownCpuMs() - ownBefore) / commands;
  const helperMs = helper === undefined ? 0 : (cpuSeconds(helper, true) * 1000 - helperBefore) / commands;
  console.log(`${name.padEnd(22)} worker ${own.toFixed(2)} CPU ms, helper ${helperMs.toFixed(2)} CPU ms (10 ms ticks), wall ${wall.toFixed(1)} ms a command`);
}

async function main(): Promise<void> {
  // Memory the worker touches, as a worker's heap and buffers are: a fork copies its page tables.
  const ballast = Array.from({ length: Math.ceil(rssMb / 10) }, () => Buffer.alloc(10 * 1024 * 1024, 1));
  console.log(`worker RSS ${Math.round(process.memoryUsage().rss / 2 ** 20)} MB (${ballast.length * 10} MB of ballast), ${commands} commands of \`true\` each way`);
  await measure('execFile in the worker', byExecFile);
  await measure('the command helper', byHelper);
  await closeCommandHelper();
}

void main();
