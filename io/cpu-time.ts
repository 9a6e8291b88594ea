import { readFileSync } from 'node:fs';

/** User + system CPU seconds of this process's children that have ended and been waited for (/proc/self/stat's cutime and cstime). */
export function childrenCpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

/** User + system CPU seconds process `pid` has used so far, with its waited-for children's (/proc/<pid>/stat); undefined when it is gone. */
export function processCpuSeconds(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) / 100;
}
