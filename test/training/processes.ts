import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** Live processes whose command line mentions `text`, from /proc (zombies are not alive). */
export function processesMentioning(text: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z') && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Whether the process runs (a zombie does not). */
export const alive = (pid: number): boolean => existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z');

/** Every message along an error's cause chain (workflow failure, activity failure, application failure). */
export const causes = (err: unknown): string => (err instanceof Error ? `${err.message} <- ${causes(err.cause)}` : '');
