import { readdirSync, readFileSync } from 'node:fs';
import { textTable } from '../cli/table';
import { processCpuSeconds } from '../io/cpu-time';

/** Small helpers shared by the benchmarks. */

export const mean = (values: readonly number[]): number => (values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length);

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length === 0 ? NaN : sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** A `kB` field of /proc/<pid>/<file> (VmRSS in status, Pss in smaps_rollup), in KiB; 0 when absent. */
export function procKib(pid: number, field: string, file = 'status'): number {
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/${file}`, 'utf8'))?.[1] ?? 0);
}

/**
 * User + system CPU seconds a process has used so far (/proc/<pid>/stat), with `children` also
 * those of the children it has waited for (cutime + cstime).
 */
export function cpuSeconds(pid: number | 'self', children = false): number {
  const seconds = processCpuSeconds(pid, children);
  if (seconds === undefined) throw new Error(`no process ${pid} in /proc`);
  return seconds;
}

/** A benchmark's table under its title, indented, the figures lined up (cli/table.ts). */
export function printTable(title: string, rows: readonly (readonly string[])[]): void {
  console.log(`\n${title}`);
  for (const line of textTable(rows, { numbers: true }).split('\n')) console.log(`  ${line}`);
}

/**
 * User + system CPU seconds per thread name of a process (/proc/<pid>/task/<tid>/stat), threads of
 * one name summed: a Node worker's main thread, its workflow thread, V8's and libuv's helpers, the
 * Temporal core's tokio threads. Names are what the threads set (`comm`), at most 15 characters.
 */
export function threadCpuSeconds(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    byName.set(name, (byName.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100);
  }
  return byName;
}
