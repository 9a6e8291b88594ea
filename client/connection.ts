import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import type { Env, LoadedConfig } from '../config/load';
import { connectTemporal, temporalConnectionOptions } from '../config/temporal-connection';

/** A Temporal client for the deployment temporal.yaml describes (its TLS, its API key). Close its connection when done. */
export async function connectClient(config: LoadedConfig, env: Env = process.env): Promise<Client> {
  const connection = await connectTemporal(config, Connection, env);
  return new Client({ connection, namespace: config.temporal.namespace });
}

/**
 * A Temporal client that connects on first use (so the viewer starts while Temporal is down) and
 * retries a refused call twice only, so a page says "Temporal is down" in seconds, not a minute.
 */
export function lazyClient(config: LoadedConfig): Client {
  const connection = Connection.lazy({
    ...temporalConnectionOptions(config),
    connectTimeout: '5 seconds',
    interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: 2 }))],
  });
  return new Client({ connection, namespace: config.temporal.namespace });
}

/** Web UI link to one workflow execution. */
export function workflowUrl(config: LoadedConfig, workflowId: string): string {
  return `${config.temporal.webUi.replace(/\/$/, '')}/namespaces/${config.temporal.namespace}/workflows/${encodeURIComponent(workflowId)}`;
}
