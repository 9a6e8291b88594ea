import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * The CPU of a benchmark's whole process tree. A benchmark re-executes itself as a child subreaper
 * (prctl PR_SET_CHILD_SUBREAPER, through the system python): a process whose parent died first
 * (QtWebEngine's helpers when KAlgebra is killed) would be adopted by init and its CPU lost.
 * Adopted by the benchmark instead, it stays a zombie (Node waits only for the children it
 * spawned), whose CPU /proc still shows. The CPU of the tree is then the sum, over its processes
 * not yet reaped, of utime + stime + cutime + cstime: a reaped process counts in its reaper's
 * cutime and cstime, exactly once.
 */

const SUBREAPER_FLAG = 'CODA_BENCH_SUBREAPER';
const PR_SET_CHILD_SUBREAPER = 36;

/** Whether this process is the re-executed subreaper. */
export const isSubreaper = (): boolean => process.env[SUBREAPER_FLAG] === '1';

export function asSubreaper(): never {
  const exec = `import ctypes, os, sys\nif ctypes.CDLL(None, use_errno=True).prctl(${PR_SET_CHILD_SUBREAPER}, 1, 0, 0, 0) != 0: sys.exit('prctl failed')\nos.execv(sys.argv[1], sys.argv[1:])`;
  const run = spawnSync('/usr/bin/python3', ['-c', exec, process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, [SUBREAPER_FLAG]: '1' },
  });
  process.exit(run.status ?? 1);
}

const TICKS_PER_S = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU seconds of this process and all its descendants, live or zombie, with what they reaped. */
export function treeCpuS(): number {
  const children = new Map<number, number[]>();
  const ticks = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const pid = Number(entry);
      const ppid = Number(fields[1]);
      // utime, stime, cutime, cstime: the 14th to 17th fields of stat, after pid, comm and state.
      ticks.set(pid, [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0));
      children.set(ppid, [...(children.get(ppid) ?? []), pid]);
    } catch {
      /* exited while we looked */
    }
  }
  let total = 0;
  const stack = [process.pid];
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    total += ticks.get(pid) ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  return total / TICKS_PER_S;
}

/** Mean CPU seconds of `fn` over `times` calls. */
export async function cpuPer(times: number, fn: () => Promise<unknown>): Promise<number> {
  const start = treeCpuS();
  for (let i = 0; i < times; i += 1) await fn();
  return round((treeCpuS() - start) / times);
}

export const round = (s: number): number => Math.round(s * 1000) / 1000;

