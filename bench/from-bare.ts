import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { readStageTimes, type StageTimeLine } from '../cli/stage-times';
import { freeDisplay, isolatedEnv } from '../infra/ephemeral';
import { printTable } from './stats';

/**
 * From bare to the demo's report, timed (README, docs/setup.md): clones the repository into a
 * fresh folder and installs and runs the demo there as a newcomer would, with npm, pip and Go
 * caches of its own that start empty, and every install step, the build and every demo stage timed
 * (CODA_TIMES, cli/stage-times.ts).
 *
 * The Debian packages: this machine has them, so the clone's apt step finds them installed. With
 * --apt-root, a Debian 12 root made by `debootstrap --variant=minbase bookworm DIR` (which has none
 * of them, and less than a new machine has) is copied into the folder and the demo's packages are
 * installed into it by the clone's own infra/install-debian.sh — download, unpack and configure —
 * side by side with the other install steps, as on a fresh machine; that time stands for the apt step.
 *
 * Phases: the clone; the install (infra/install.sh demo beside the apt step: its wall time is the
 * longer of the two); then `npm run demo -- ARGS`, whose own install then finds everything, its
 * build and its stages. The stack runs on free ports (infra/ephemeral.ts) and is stopped at the end.
 *
 *   node build/bench/from-bare.js --dir /work/bare [--apt-root /work/debian12-minbase] [--display-from 700] [-- --full]
 */

interface Options {
  readonly dir: string;
  readonly source: string;
  readonly aptRoot?: string;
  readonly displayFrom: number;
  readonly demoArgs: readonly string[];
}

const REPO_ROOT = path.resolve(__dirname, '..', '..');

function parseOptions(argv: readonly string[]): Options {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: { dir: { type: 'string' }, source: { type: 'string', default: REPO_ROOT }, 'apt-root': { type: 'string' }, 'display-from': { type: 'string', default: '700' } },
    allowPositionals: true,
  });
  if (values.dir === undefined) throw new Error('--dir: expected the folder to clone into (it must not exist yet)');
  if (existsSync(values.dir) && readdirSync(values.dir).length > 0) throw new Error(`--dir: ${values.dir} is not empty: a fresh folder is the point`);
  if (values['apt-root'] !== undefined && !existsSync(path.join(values['apt-root'], 'usr', 'bin', 'apt-get'))) throw new Error(`--apt-root: ${values['apt-root']} is not a Debian root (no usr/bin/apt-get)`);
  return { dir: path.resolve(values.dir), source: values.source, ...(values['apt-root'] === undefined ? {} : { aptRoot: values['apt-root'] }), displayFrom: Number(values['display-from']), demoArgs: positionals };
}

/** Runs a command with its output appended to `log`; resolves with its exit status and wall seconds. */
function run(command: string, args: readonly string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; log: string; echo?: boolean }): Promise<{ status: number; seconds: number }> {
  const started = Date.now();
  const out = createWriteStream(opts.log, { flags: 'a' });
  const child = spawn(command, [...args], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const stream of [child.stdout, child.stderr]) {
    stream.pipe(out, { end: false });
    if (opts.echo) stream.pipe(process.stdout, { end: false });
  }
  return new Promise((resolve) => child.on('close', (code) => resolve({ status: code ?? 1, seconds: (Date.now() - started) / 1000 })));
}

/**
 * PATH without any project's Node 24 (infra/with-node.sh puts this checkout's first): the clone
 * starts from the machine's own Node, as on a new machine, and installs its own.
 */
const machinePath = (): string =>
  (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => dir !== '' && !dir.includes(`${path.sep}.tools${path.sep}node24`))
    .join(path.delimiter);

/** Empty caches of the clone's own: npm's, pip's and Go's modules and builds. */
function freshCaches(dir: string): Record<string, string> {
  const cache = (name: string) => {
    const where = path.join(dir, 'cache', name);
    mkdirSync(where, { recursive: true });
    return where;
  };
  return { npm_config_cache: cache('npm'), PIP_CACHE_DIR: cache('pip'), GOMODCACHE: cache('go-mod'), GOCACHE: cache('go-build'), GOPATH: cache('go-path') };
}

/** The demo's Debian packages, installed into a copy of a bare Debian root by the clone's own script; the copy is not timed. */
async function aptStep(opts: Options, repo: string): Promise<{ status: number; seconds: number } | undefined> {
  if (opts.aptRoot === undefined) return undefined;
  const root = path.join(opts.dir, 'apt-root');
  const copied = spawnSync('cp', ['-a', opts.aptRoot, root]);
  if (copied.status !== 0) throw new Error(`copying ${opts.aptRoot}: ${copied.stderr}`);
  // The machine's package sources and name resolution, as a new machine of this kind has them.
  copyFileSync('/etc/resolv.conf', path.join(root, 'etc', 'resolv.conf'));
  if (existsSync('/etc/apt/sources.list.d/debian.sources')) {
    copyFileSync('/etc/apt/sources.list.d/debian.sources', path.join(root, 'etc', 'apt', 'sources.list.d', 'debian.sources'));
    writeFileSync(path.join(root, 'etc', 'apt', 'sources.list'), '');
  }
  copyFileSync(path.join(repo, 'infra', 'install-debian.sh'), path.join(root, 'install-debian.sh'));
  const packages = /^DEMO_DEBIAN_PACKAGES=\(([^)]*)\)$/m.exec(readFileSync(path.join(repo, 'infra', 'install.sh'), 'utf8'))?.[1]?.trim().split(/\s+/) ?? [];
  spawnSync('mount', ['-t', 'proc', 'proc', path.join(root, 'proc')]);
  try {
    return await run('chroot', [root, 'bash', '/install-debian.sh', ...packages], { log: path.join(opts.dir, 'apt.log') });
  } finally {
    spawnSync('umount', [path.join(root, 'proc')]);
  }
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  mkdirSync(opts.dir, { recursive: true });
  const repo = path.join(opts.dir, 'repo');
  const log = path.join(opts.dir, 'bench.log');
  const times = path.join(opts.dir, 'times.tsv');
  const cloned = await run('git', ['clone', '--quiet', opts.source, repo], { log });
  if (cloned.status !== 0) throw new Error(`git clone ${opts.source} failed: see ${log}`);
  const commit = spawnSync('git', ['-C', repo, 'log', '-1', '--format=%h %s'], { encoding: 'utf8' }).stdout.trim();
  const env: NodeJS.ProcessEnv = {
    ...(await isolatedEnv(path.join(repo, '.data'), 'coda')),
    ...freshCaches(opts.dir),
    PATH: machinePath(),
    CODA_TIMES: times,
    CODA_DISPLAY_BASE: String(freeDisplay(opts.displayFrom)),
  };
  console.log(`from bare: ${commit}, in ${opts.dir}; the demo's output follows`);

  const [install, apt] = await Promise.all([run('bash', ['infra/install.sh', 'demo'], { cwd: repo, env, log, echo: true }), aptStep(opts, repo)]);
  if (install.status !== 0 || (apt !== undefined && apt.status !== 0)) throw new Error(`the install failed: see ${log}${apt === undefined ? '' : ` and ${path.join(opts.dir, 'apt.log')}`}`);
  const demo = await run('npm', ['run', 'demo', '--', ...opts.demoArgs], { cwd: repo, env, log: path.join(opts.dir, 'demo.log'), echo: true });
  await run('npm', ['run', 'down'], { cwd: repo, env, log });
  if (demo.status !== 0) throw new Error(`npm run demo exited ${demo.status}: see ${path.join(opts.dir, 'demo.log')}`);
  report(readStageTimes(times), { clone: cloned.seconds, install: install.seconds, apt: apt?.seconds, demo: demo.seconds }, opts);
}

/** The figures: every step and stage, then the phases and the total from bare. */
function report(lines: readonly StageTimeLine[], wall: { clone: number; install: number; apt?: number; demo: number }, opts: Options): void {
  const s = (seconds: number) => `${seconds.toFixed(0)} s`;
  const install = lines.filter((l) => l.phase === 'install' && l.step !== 'total' && l.outcome !== 'skipped');
  printTable('install steps (side by side), first install', [['step', 'seconds', 'outcome'], ...install.map((l) => [l.step, s(l.seconds), l.outcome]), ...(wall.apt === undefined ? [] : [['debian (into a bare Debian 12 root)', s(wall.apt), 'ok']])]);
  const demo = lines.filter((l) => l.phase === 'build' || l.phase === 'demo');
  printTable('npm run demo, after the install', [['stage', 'seconds', ''], ...demo.map((l) => [`${l.phase === 'build' ? 'build' : ''}${l.phase === 'build' ? ` (${l.step})` : l.step}`, l.outcome === 'unseen' ? '< 1 s' : s(l.seconds), l.outcome === 'unseen' ? 'not seen running' : ''])]);
  const installWall = Math.max(wall.install, wall.apt ?? 0);
  printTable('from bare', [
    ['phase', 'seconds'],
    ['git clone', s(wall.clone)],
    [`install (the longer of infra/install.sh demo and the apt step${wall.apt === undefined ? ': not measured, the packages are installed here' : ''})`, s(installWall)],
    [`npm run demo -- ${opts.demoArgs.join(' ')}`.trimEnd(), s(wall.demo)],
    ['total', `${s(wall.clone + installWall + wall.demo)} (${((wall.clone + installWall + wall.demo) / 60).toFixed(1)} min)`],
  ]);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
