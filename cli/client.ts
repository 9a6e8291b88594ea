import { Client, Connection } from '@temporalio/client';
import type { LoadedConfig } from '../config/load';

/** A Temporal client for the deployment temporal.yaml describes. Close its connection when done. */
export async function connectClient(config: LoadedConfig): Promise<Client> {
  const connection = await Connection.connect({ address: config.temporal.address });
  return new Client({ connection, namespace: config.temporal.namespace });
}

/** Web UI link to one workflow execution. */
export function workflowUrl(config: LoadedConfig, workflowId: string): string {
  return `${config.temporal.webUi.replace(/\/$/, '')}/namespaces/${config.temporal.namespace}/workflows/${encodeURIComponent(workflowId)}`;
}
