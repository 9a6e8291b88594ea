import { readFileSync } from 'node:fs';

/** User + system CPU seconds of this process's children that have ended and been waited for (/proc/self/stat's cutime and cstime). */
export function childrenCpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}
