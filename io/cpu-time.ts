import { readFileSync } from 'node:fs';

/** User + system CPU seconds of this process's children that have ended and been waited for (/proc/self/stat's cutime and cstime). */
export function childrenCpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

/**
 * User + system CPU seconds process `pid` has used so far (/proc/<pid>/stat's utime and stime),
 * with `children` also those of the children it has waited for (cutime and cstime); undefined
 * when it is gone.
 */
export function processCpuSeconds(pid: number | 'self', children = false): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
  const own = fields[11]! + fields[12]!;
  return (children ? own + fields[13]! + fields[14]! : own) / 100;
}
