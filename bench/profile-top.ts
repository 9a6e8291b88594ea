import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';

/**
 * The top entries of V8 CPU profiles (`node --cpu-prof`), one section per profile file — Node
 * writes one per thread, so the orchestrator worker's main thread and its workflow thread come out
 * apart. Per function (name, file:line): self time, where the samples were taken, and total time,
 * the samples with the function anywhere on the stack (a recursive function counted once per
 * sample), both in % of the thread's samples. `--group file` sums self time per file instead, which
 * says which library the time goes to.
 *
 * With `--steps N` (what the profiled run did, e.g. rollout steps) each share is also given in ms per
 * step. These are sampled wall time while the thread was not idle: on an oversubscribed machine a
 * thread waiting for a core, or blocked in a native call, is sampled too, so the thread's CPU time
 * (/proc, as the capacity bench prints it) is the figure for cost and the profile says where it goes.
 *
 *   node build/bench/profile-top.js DIR|FILE.cpuprofile... [--top 25] [--group function|file] [--steps N]
 */

/** The parts of a `.cpuprofile` (the DevTools protocol's Profile) read here. */
interface CpuProfile {
  readonly nodes: ReadonlyArray<{
    readonly id: number;
    readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
    readonly children?: readonly number[];
  }>;
  readonly samples: readonly number[];
  readonly startTime: number;
  readonly endTime: number;
}

export interface TopEntry {
  readonly name: string;
  readonly where: string;
  readonly selfShare: number;
  readonly totalShare: number;
}

export interface ProfileSummary {
  readonly samples: number;
  readonly seconds: number;
  readonly entries: readonly TopEntry[];
}

/** `file:line` of a call frame, the file shortened to what follows node_modules/ or the repo's build/. */
function where(url: string, line: number): string {
  const file = url.replace(/^file:\/\//, '');
  const short = file.includes('node_modules/') ? file.slice(file.lastIndexOf('node_modules/') + 'node_modules/'.length) : file.includes('/build/') ? file.slice(file.lastIndexOf('/build/') + 1) : file;
  return short === '' ? '(native)' : `${short}:${line + 1}`;
}

/** Self and total shares per function (or per file, `group: 'file'`), largest self share first. */
export function summarize(profile: CpuProfile, group: 'function' | 'file' = 'function'): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const keyOf = (id: number): string => {
    const frame = byId.get(id)!.callFrame;
    const at = where(frame.url, frame.lineNumber);
    return group === 'file' ? at.replace(/:\d+$/, '') : `${frame.functionName || '(anonymous)'}\t${at}`;
  };
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  for (const sample of profile.samples) {
    const leaf = keyOf(sample);
    self.set(leaf, (self.get(leaf) ?? 0) + 1);
    const seen = new Set<string>();
    for (let id: number | undefined = sample; id !== undefined; id = parent.get(id)) {
      const key = keyOf(id);
      if (seen.has(key)) continue;
      seen.add(key);
      total.set(key, (total.get(key) ?? 0) + 1);
    }
  }
  const count = profile.samples.length;
  const entries = [...total.keys()].map((key) => {
    const [name, at] = key.includes('\t') ? key.split('\t') : [key, ''];
    return { name: name!, where: at!, selfShare: (self.get(key) ?? 0) / count, totalShare: total.get(key)! / count };
  });
  entries.sort((a, b) => b.selfShare - a.selfShare || b.totalShare - a.totalShare);
  return { samples: count, seconds: (profile.endTime - profile.startTime) / 1e6, entries };
}

const pct = (share: number): string => `${(share * 100).toFixed(1)}%`;

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '25' }, group: { type: 'string', default: 'function' }, steps: { type: 'string' } },
  });
  if (positionals.length === 0) throw new Error('usage: profile-top DIR|FILE.cpuprofile... [--top N] [--group function|file]');
  if (values.group !== 'function' && values.group !== 'file') throw new Error('--group: expected function or file');
  const top = Number(values.top);
  const steps = values.steps === undefined ? undefined : Number(values.steps);
  const files = positionals.flatMap((p) => (p.endsWith('.cpuprofile') ? [p] : readdirSync(p).filter((f) => f.endsWith('.cpuprofile')).sort().map((f) => path.join(p, f))));
  for (const file of files) {
    const summary = summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, values.group);
    // Node names the files CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile: thread 0 is the main thread.
    const thread = /\.(\d+)\.\d+\.cpuprofile$/.exec(file)?.[1];
    console.log(`\n${path.basename(file)} — thread ${thread ?? '?'}${thread === '0' ? ' (main)' : ''}: ${summary.samples} samples over ${summary.seconds.toFixed(1)} s`);
    const perStep = (share: number): string => (steps === undefined ? '' : `${((share * summary.seconds * 1000) / steps).toFixed(2).padStart(7)} ms  `);
    const line = (e: TopEntry): string => `  ${pct(e.selfShare).padStart(6)}  ${perStep(e.selfShare)}${pct(e.totalShare).padStart(6)}  ${perStep(e.totalShare)}${e.name}${e.where === '' ? '' : `  (${e.where})`}`;
    console.log(`  self${steps === undefined ? '' : ' (per step)'}  total${steps === undefined ? '' : ' (per step)'}  function  (file:line)`);
    for (const e of summary.entries.slice(0, top)) console.log(line(e));
    if (values.group === 'function') {
      console.log(`  by total time:`);
      for (const e of [...summary.entries].sort((a, b) => b.totalShare - a.totalShare).slice(0, top)) console.log(line(e));
    }
  }
}

if (require.main === module) main();
