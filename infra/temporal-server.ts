import * as path from 'node:path';
import { Connection } from '@temporalio/client';
import type { LoadedConfig } from '../config/load';
import { temporalConnectionOptions } from '../config/temporal-connection';
import type { DaemonSpec } from './daemon';
import { toolBinary } from './tools';

const portOf = (address: string): number => Number(address.slice(address.lastIndexOf(':') + 1));
const hostOf = (address: string): string => address.slice(0, address.lastIndexOf(':'));

/**
 * One partition per task queue (the server's default is 4): a single node has nothing to spread,
 * and the pollers of 4 partitions, forwarding tasks between them, cost the server CPU and each
 * task some latency for nothing. The unit tier's in-memory server takes them too.
 */
export const SINGLE_NODE_ARGS: readonly string[] = [
  '--dynamic-config-value',
  'matching.numTaskqueueReadPartitions=1',
  '--dynamic-config-value',
  'matching.numTaskqueueWritePartitions=1',
];

/**
 * The Temporal CLI's dev server, persisted to SQLite under the data directory, with the
 * namespace and search attributes of temporal.yaml registered at start.
 */
export function temporalServerSpec(config: LoadedConfig, opts: { headless: boolean }): DaemonSpec {
  const dir = path.join(config.dataDir, 'temporal');
  const args = [
    'server',
    'start-dev',
    '--ip',
    hostOf(config.temporal.address),
    '--port',
    String(portOf(config.temporal.address)),
    '--db-filename',
    path.join(dir, 'temporal.db'),
    // Write-ahead log, synced at checkpoints: every commit survives a crash or kill of the server
    // process (what `down`/`up` and the crash tests exercise); only a power cut of the machine can
    // lose the last commits. SQLite's default syncs the disk several times per commit.
    '--sqlite-pragma',
    'journal_mode=wal',
    '--sqlite-pragma',
    'synchronous=normal',
    '--namespace',
    config.temporal.namespace,
    '--log-level',
    'warn',
    ...SINGLE_NODE_ARGS,
  ];
  for (const [name, type] of Object.entries(config.temporal.searchAttributes)) {
    args.push('--search-attribute', `${name}=${type}`);
  }
  if (opts.headless || !config.dev.webUi) args.push('--headless');
  else args.push('--ui-port', String(new URL(config.temporal.webUi).port || 8233), '--ui-disable-news-fetch');
  return { name: 'temporal', command: toolBinary('temporal'), args, dirs: [dir] };
}

/** Healthy = the frontend answers and the namespace exists with every search attribute registered. */
export async function temporalHealthy(config: LoadedConfig): Promise<boolean> {
  const connection = await Connection.connect({ ...temporalConnectionOptions(config), connectTimeout: 2_000 });
  try {
    const described = await connection.workflowService.describeNamespace({ namespace: config.temporal.namespace });
    if (!described.namespaceInfo) return false;
    const attrs = await connection.operatorService.listSearchAttributes({ namespace: config.temporal.namespace });
    return Object.keys(config.temporal.searchAttributes).every((name) => name in (attrs.customAttributes ?? {}));
  } finally {
    await connection.close();
  }
}
