import type { Client } from '@temporalio/client';
import { loadConfig, type LoadedConfig } from '../config/load';
import { createObjectStore, type ObjectStore } from '../activities/storage/object-store';
import { devEnv } from '../infra/stack';
import { connectClient } from '../client/connection';
import { forTerminal } from './terminal';

/** What every `coda` command group receives: the deployment, and its Temporal client and S3 store made on first use. */

/** Bad input: `coda` exits 2 and nothing was started. */
export class UsageError extends Error {}

export interface Context {
  readonly config: LoadedConfig;
  client(): Promise<Client>;
  store(): ObjectStore;
}

function context(): Context {
  const config = loadConfig();
  let client: Promise<Client> | undefined;
  let store: ObjectStore | undefined;
  return {
    config,
    client: () => (client ??= connectClient(config)),
    // The dev stack's credentials fill in where the environment names none (as `npm run up` does).
    store: () => (store ??= createObjectStore(config.storage, devEnv(config))),
  };
}

/** The context, made when a command first needs it: `coda view --port 70000` fails before temporal.yaml is read. */
export type LazyContext = () => Context;

export function lazyContext(): LazyContext {
  let made: Context | undefined;
  return () => (made ??= context());
}

/** Everything the CLI prints goes through forTerminal: task text, replies and stored objects reach the terminal in it. */
export const print = (text: string): void => void process.stdout.write(`${forTerminal(text)}\n`);
export const json = (value: unknown): string => JSON.stringify(value, null, 2);
