import { Client, Connection } from '@temporalio/client';
import type { Env, LoadedConfig } from '../config/load';
import { connectTemporal } from '../config/temporal-connection';

/** A Temporal client for the deployment temporal.yaml describes (its TLS, its API key). Close its connection when done. */
export async function connectClient(config: LoadedConfig, env: Env = process.env): Promise<Client> {
  const connection = await connectTemporal(config, Connection, env);
  return new Client({ connection, namespace: config.temporal.namespace });
}

/** Web UI link to one workflow execution. */
export function workflowUrl(config: LoadedConfig, workflowId: string): string {
  return `${config.temporal.webUi.replace(/\/$/, '')}/namespaces/${config.temporal.namespace}/workflows/${encodeURIComponent(workflowId)}`;
}
