import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { status as grpcStatus } from '@grpc/grpc-js';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { loadConfig, type LoadedConfig } from '../config/load';
import { connectTemporal } from '../config/temporal-connection';

const INDEXED_TYPES: Record<string, temporal.api.enums.v1.IndexedValueType> = {
  Keyword: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  Text: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
  Int: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT,
  Double: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  Bool: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
  Datetime: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
  KeywordList: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

/**
 * Prepares an existing Temporal cluster for this deployment: creates the namespace when missing
 * and registers the search attributes of temporal.yaml. Safe to run again. (The dev server does
 * the same at start from its flags.)
 */
export async function setupCluster(config: LoadedConfig, retentionDays = 30): Promise<string[]> {
  const connection = await connectTemporal(config, Connection);
  const namespace = config.temporal.namespace;
  const done: string[] = [];
  try {
    try {
      await connection.workflowService.describeNamespace({ namespace });
    } catch {
      await connection.workflowService.registerNamespace({
        namespace,
        workflowExecutionRetentionPeriod: msToTs(`${retentionDays} days`),
      });
      done.push(`created namespace ${namespace}`);
    }
    const existing = await untilNamespaceVisible(() => connection.operatorService.listSearchAttributes({ namespace }));
    const missing = Object.entries(config.temporal.searchAttributes).filter(([name]) => !(name in (existing.customAttributes ?? {})));
    if (missing.length > 0) {
      await connection.operatorService.addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(missing.map(([name, type]) => [name, INDEXED_TYPES[type]!])),
      });
      done.push(`registered search attributes ${missing.map(([n]) => n).join(', ')}`);
    }
  } finally {
    await connection.close();
  }
  return done;
}

/** A new namespace reaches every frontend only after the server's namespace cache refreshes (~10 s). */
async function untilNamespaceVisible<T>(call: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await call();
    } catch (err) {
      if ((err as { code?: number }).code !== grpcStatus.NOT_FOUND || Date.now() > deadline) throw err;
      await sleep(500);
    }
  }
}

if (require.main === module) {
  setupCluster(loadConfig())
    .then((done) => console.log(done.length > 0 ? done.join('\n') : 'cluster already set up'))
    .catch((err) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    });
}
