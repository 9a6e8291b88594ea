import * as path from 'node:path';
import { secretFromEnv, type Env, type LoadedConfig } from '../config/load';
import type { DaemonSpec } from './daemon';
import { toolBinary } from './tools';

/**
 * MinIO serving the data directory, with the root credentials taken from the environment
 * variables that temporal.yaml names for storage, so the stack and its clients agree.
 */
export function minioServerSpec(config: LoadedConfig, env: Env = process.env): DaemonSpec {
  const dir = path.join(config.dataDir, 'minio');
  const api = new URL(config.storage.endpoint);
  return {
    name: 'minio',
    command: toolBinary('minio'),
    dirs: [dir],
    args: ['server', dir, '--address', `${api.hostname}:${api.port || 80}`, '--console-address', config.dev.minioConsole, '--quiet'],
    env: {
      MINIO_ROOT_USER: secretFromEnv(config.storage.accessKeyIdEnv, 'storage.accessKeyIdEnv', env),
      MINIO_ROOT_PASSWORD: secretFromEnv(config.storage.secretAccessKeyEnv, 'storage.secretAccessKeyEnv', env),
      MINIO_BROWSER: 'on',
      MINIO_UPDATE: 'off',
    },
  };
}

/** MinIO's own liveness endpoint. */
export async function minioHealthy(config: LoadedConfig): Promise<boolean> {
  const res = await fetch(new URL('/minio/health/live', config.storage.endpoint), { signal: AbortSignal.timeout(2_000) });
  return res.ok;
}
