import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { DEFAULT_FILE, loadConfig, type LoadedConfig } from '../config/load';
import { devEnv, stackDown, stackUp } from './stack';

/**
 * A throwaway dev stack — the real Temporal dev server and MinIO of `npm run up` — on free ports
 * in a temporary data directory, described by the repository's temporal.yaml through the
 * environment. Tests and benchmarks use it so they never touch the developer's own stack.
 */

export const REPO_CONFIG = DEFAULT_FILE;

/** Whether a listener can be opened on `port` of 127.0.0.1 now (it is closed again at once). */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** The first port of the kernel's ephemeral range: the ports outgoing connections are given. */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 12_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

const handedOut = new Set<number>();

/**
 * This process's share of the machine's ports and X displays when several processes of one run
 * take them at once (the suite's parallel mocha workers): `CODA_CLAIM_SLOT` is `K/N`, slot K of N.
 * Each slot draws from its own part of the range, so two processes never pick the same port or
 * display between the check and the server's start; one process alone has the whole range.
 */
export function claimSlot(env: NodeJS.ProcessEnv = process.env): { readonly slot: number; readonly of: number } {
  const match = /^(\d+)\/(\d+)$/.exec(env.CODA_CLAIM_SLOT ?? '');
  if (match === null) return { slot: 0, of: 1 };
  const [slot, of] = [Number(match[1]), Number(match[2])];
  if (of < 1 || slot >= of) throw new Error(`CODA_CLAIM_SLOT: expected K/N with 0 <= K < N, got "${env.CODA_CLAIM_SLOT}"`);
  return { slot, of };
}

/**
 * A port nothing listens on, for a server started later. Taken at random BELOW the kernel's
 * ephemeral range: a port the kernel hands out itself (listen on 0) can be given to an outgoing
 * connection of this machine between now and the server's start, and that start then fails on a
 * taken port. Never the same port twice in one process, and 1,000 below the range's start, so
 * the Temporal Web UI's port (the gRPC port + 1000) stays out of it too. With several processes,
 * each draws from its own slice of the range (claimSlot).
 */
export async function freePort(): Promise<number> {
  const { slot, of } = claimSlot();
  const width = Math.floor((ephemeralLow() - 1_000 - 10_000) / of);
  const [low, high] = [10_000 + slot * width, 10_000 + (slot + 1) * width];
  for (let tries = 0; tries < 500; tries++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port in ${low}..${high - 1} after 500 tries`);
}

/** How far apart the slots' X displays start: above every test's `displayFrom` plus its scan. */
const DISPLAY_SLOT_STRIDE = 2_000;

/**
 * The first X display number from `from` (moved to this process's slot, claimSlot) such that it and
 * the `count - 1` after it are held by no X server (another session may run Xvfb too): a host's
 * desktops take `displayBase` to `displayBase + desktops - 1`.
 */
export function freeDisplay(from: number, count = 1): number {
  const start = from + claimSlot().slot * DISPLAY_SLOT_STRIDE;
  const taken = (n: number): boolean => existsSync(`/tmp/.X${n}-lock`) || existsSync(`/tmp/.X11-unix/X${n}`);
  for (let n = start; n < start + 200; n += 1) {
    if (!Array.from({ length: count }, (_, i) => n + i).some(taken)) return n;
  }
  throw new Error(`no ${count} free X displays in a row in :${start}..:${start + 199}`);
}

/**
 * Free ports for the metrics endpoints of the four kinds of process (temporal.yaml's metrics.ports),
 * as the environment names them: a stack of its own, or a test's worker processes beside another's.
 */
export async function metricsPortsEnv(): Promise<Record<string, string>> {
  return {
    CODA_ORCHESTRATOR_METRICS_PORT: String(await freePort()),
    CODA_VM_HOST_METRICS_PORT: String(await freePort()),
    CODA_GPU_METRICS_PORT: String(await freePort()),
    CODA_REWARD_SERVICE_METRICS_PORT: String(await freePort()),
  };
}

/** Environment that points temporal.yaml at a stack of its own on free ports under `dataDir`. */
export async function isolatedEnv(dataDir: string, namespace: string): Promise<Record<string, string>> {
  const [temporal, s3, console, models, viewer, rewards] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
  const metrics = await metricsPortsEnv();
  const modelsUrl = `http://127.0.0.1:${models}/v1`;
  return {
    ...(process.env as Record<string, string>),
    CODA_SCRIPTED_MODELS_PORT: String(models),
    CODA_PLANNER_URL: modelsUrl,
    CODA_EXECUTOR_URL: modelsUrl,
    CODA_JUDGE_A_URL: modelsUrl,
    CODA_JUDGE_B_URL: modelsUrl,
    CODA_TASKGEN_URL: modelsUrl,
    CODA_TEMPORAL_ADDRESS: `127.0.0.1:${temporal}`,
    CODA_TEMPORAL_WEB_UI: `http://127.0.0.1:${temporal + 1000}`,
    CODA_NAMESPACE: namespace,
    CODA_S3_ENDPOINT: `http://127.0.0.1:${s3}`,
    CODA_MINIO_CONSOLE: `127.0.0.1:${console}`,
    CODA_DATA_DIR: dataDir,
    CODA_REWARD_PORT: String(rewards),
    CODA_GPU_WORK_DIR: path.join(dataDir, 'gpu'),
    CODA_SERVING_DIR: path.join(dataDir, 'served'),
    CODA_VIEWER_PORT: String(viewer),
    ...metrics,
  };
}

export interface EphemeralStack {
  readonly config: LoadedConfig;
  /** The environment in which temporal.yaml describes this stack (S3 credentials included). */
  readonly env: Record<string, string>;
  stop(): Promise<void>;
}

/** Temporal and MinIO only (no workers): the caller runs its own. */
export async function startEphemeralStack(namespace: string): Promise<EphemeralStack> {
  const dataDir = mkdtempSync(path.join(tmpdir(), `${namespace}-`));
  const base = await isolatedEnv(dataDir, namespace);
  const config = loadConfig(REPO_CONFIG, base);
  const env = devEnv(config, base); // adds secrets by the names the config gives; the file reads none of them
  try {
    await stackUp(config, { headless: true, env, workers: false });
  } catch (err) {
    await stackDown(config, { env, workers: false });
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  return {
    config,
    env,
    async stop() {
      await stackDown(config, { env, workers: false });
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
