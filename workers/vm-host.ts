import * as path from 'node:path';
import { NativeConnection, Worker } from '@temporalio/worker';
import { loadConfig, type Env, type LoadedConfig } from '../config/load';
import { connectTemporal } from '../config/temporal-connection';
import { hostCapacity, preparedBoxes, type HostConfig } from '../config/schema';
import { deploymentCapabilities } from '../core/requirements';
import { createDesktopActivities } from '../activities/desktop/activities';
import type { Desktop } from '../activities/desktop/desktop';
import { hostDesktops } from '../activities/desktop/hosts';
import { DesktopPool } from '../activities/desktop/pool';
import { desktopMetrics, type DesktopMetrics } from '../activities/metrics';
import { createObjectStore } from '../activities/storage/object-store';
import { s3TaskReader } from '../activities/tasks/library';
import { startProcessMetrics } from './metrics';

export interface VmHostDeps {
  readonly config: LoadedConfig;
  readonly connection: NativeConnection;
  readonly hostId: string;
  readonly env?: Env;
  /** Builds desktop `index` of this host; default: from the host's kind in temporal.yaml. */
  readonly createDesktop?: (index: number) => Desktop;
  /** A lease unused this long is taken back. */
  readonly leaseTtlMs?: number;
  /** How often idle desktops are health-checked (and recycled when they fail). */
  readonly healthCheckMs?: number;
  /** Where the host's desktop metrics are recorded (the process's metrics endpoint). */
  readonly metrics?: DesktopMetrics;
}

export interface VmHost {
  readonly host: HostConfig;
  readonly pool: DesktopPool;
  /** Runs until shutdown (SIGINT/SIGTERM or shutdown()), then closes every desktop. */
  run(): Promise<void>;
  shutdown(): void;
}

function findHost(config: LoadedConfig, hostId: string): HostConfig {
  const host = config.hosts.find((h) => h.id === hostId);
  if (host === undefined) throw new Error(`unknown host "${hostId}": temporal.yaml has ${config.hosts.map((h) => h.id).join(', ')}`);
  return host;
}

/**
 * A vm-host: one process per host, its desktops in a pool, polling two queues: the shared lease
 * queue (any host may hand out a desktop) and its own queue, where every activity of a lease it
 * granted goes (Temporal's worker-specific task queue pattern). At most one activity per desktop
 * runs at a time. On SIGTERM the workers stop polling and in-flight activities get the grace time
 * to finish; what does not finish is cancelled and its rollout resumes on another desktop.
 */
export async function createVmHost(deps: VmHostDeps): Promise<VmHost> {
  const { config } = deps;
  const host = findHost(config, deps.hostId);
  const store = createObjectStore(config.storage, deps.env);
  const createDesktop = deps.createDesktop ?? hostDesktops(host, config, path.join(config.dataDir, 'desktops'));
  const size = hostCapacity(host);
  const metrics = deps.metrics ?? desktopMetrics();
  const pool = new DesktopPool({
    hostId: host.id,
    hostQueue: host.taskQueue,
    size,
    ...servedSoftware(config, host.id),
    createDesktop,
    leaseTtlMs: deps.leaseTtlMs ?? 15 * 60_000,
    onExpired: () => metrics.leaseExpiries.inc({ host: host.id }),
    onLeased: (leased) => metrics.leased.set({ host: host.id }, leased),
  });
  metrics.desktops.set({ host: host.id }, size);
  metrics.leased.set({ host: host.id }, 0);
  const { leaseDesktop, ...onDesktop } = createDesktopActivities({
    pool,
    store,
    prefix: config.storage.prefix,
    tasks: s3TaskReader(store),
    settleMs: config.rollouts.settleMs,
    variantBoxes: preparedBoxes(config),
    metrics,
  });
  const common = { connection: deps.connection, namespace: config.temporal.namespace, shutdownGraceTime: '20 seconds' } as const;
  const hostWorker = await Worker.create({
    ...common,
    taskQueue: host.taskQueue,
    activities: onDesktop,
    maxConcurrentActivityTaskExecutions: size,
  });
  const leaseWorker = await Worker.create({
    ...common,
    taskQueue: config.taskQueues.desktopLeases,
    activities: { leaseDesktop },
    maxConcurrentActivityTaskExecutions: 2,
  });
  return {
    host,
    pool,
    async run() {
      const timer = setInterval(() => void pool.checkIdle(), deps.healthCheckMs ?? 30_000);
      try {
        await Promise.all([hostWorker.run(), leaseWorker.run()]);
      } finally {
        clearInterval(timer);
        await pool.closeAll();
      }
    },
    shutdown() {
      for (const worker of [hostWorker, leaseWorker]) if (worker.getState() === 'RUNNING') worker.shutdown();
    },
  };
}

/** The software this host's desktops run, and the software some host of the deployment runs. */
function servedSoftware(config: LoadedConfig, hostId: string): { serves: readonly string[] | 'any'; deploymentServes: readonly string[] | 'any' } {
  const hosts = deploymentCapabilities(config);
  const all = hosts.map((c) => c.apps);
  return {
    serves: hosts.find((c) => c.host === hostId)?.apps ?? [],
    deploymentServes: all.includes('any') ? 'any' : [...new Set(all.flatMap((apps) => (apps === 'any' ? [] : apps)))],
  };
}

/**
 * Which host of temporal.yaml this process runs: `--host <id>`, else $CODA_HOST_ID, else
 * $CODA_HOST_INDEX (a position in `hosts`, from 0: a Kubernetes StatefulSet gives pod i the i-th
 * host through its pod-index label; infra/deploy/), else the only host of temporal.yaml.
 */
export function chooseHostId(config: Pick<LoadedConfig, 'hosts'>, argv: readonly string[], env: Env): string {
  const ids = config.hosts.map((h) => h.id);
  const flag = argv.indexOf('--host');
  const chosen = flag !== -1 ? argv[flag + 1] : env.CODA_HOST_ID;
  if (chosen !== undefined && chosen !== '') return chosen;
  const index = env.CODA_HOST_INDEX;
  if (index !== undefined && index !== '') {
    const position = /^\d+$/.test(index) ? Number(index) : Number.NaN;
    const host = config.hosts[position];
    if (host === undefined) throw new Error(`CODA_HOST_INDEX=${index}: expected a position in temporal.yaml's hosts, 0 to ${ids.length - 1} (${ids.join(', ')})`);
    return host.id;
  }
  if (ids.length === 1) return ids[0]!;
  throw new Error(`several hosts in temporal.yaml (${ids.join(', ')}): pass --host <id> or set CODA_HOST_ID or CODA_HOST_INDEX`);
}

if (require.main === module) {
  (async () => {
    const config = loadConfig();
    const hostId = chooseHostId(config, process.argv, process.env);
    const metrics = await startProcessMetrics(config, 'vmHost', { temporal: true, port: findHost(config, hostId).metricsPort });
    const connection = await connectTemporal(config, NativeConnection);
    const vmHost = await createVmHost({ config, connection, hostId, metrics: desktopMetrics(metrics.registry) });
    console.log(`vm-host ${vmHost.host.id}: ${vmHost.pool.size} desktops, polling ${vmHost.host.taskQueue} and ${config.taskQueues.desktopLeases}; metrics ${metrics.url ?? 'off'}`);
    await vmHost.run();
    console.log(`vm-host ${vmHost.host.id} stopped`);
  })().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
