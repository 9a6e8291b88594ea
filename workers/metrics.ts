import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Runtime } from '@temporalio/worker';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { Config } from '../config/schema';
import { freePort } from '../infra/ephemeral';

/**
 * The Prometheus endpoint of a process (temporal.yaml `metrics`): GET /metrics answers the
 * project's metrics (activities/metrics.ts) from a prom-client Registry, and, on a worker's
 * endpoint, the Temporal SDK's own metrics and the process's (CPU, memory, event loop). The SDK
 * exports through Core's Prometheus exporter, which listens on a loopback port of its own; the
 * endpoint appends what it answers, so Prometheus scrapes one port per process.
 */

export type MetricsKind = keyof Config['metrics']['ports'];

export interface ProcessMetrics {
  /** Where the process's metrics are recorded; register activities/metrics.ts groups on it. */
  readonly registry: Registry;
  /** The endpoint's URL; undefined when its port is 0. */
  readonly url?: string;
  close(): Promise<void>;
}

/**
 * Installs this process's Temporal runtime with Core's Prometheus exporter on a free loopback port
 * and returns the exporter's URL. Runtime.install is process-wide: call it once, before any worker
 * or NativeConnection is created (else it throws).
 */
export async function installTemporalMetrics(): Promise<string> {
  const port = await freePort();
  Runtime.install({
    telemetryOptions: {
      metrics: { prometheus: { bindAddress: `127.0.0.1:${port}`, countersTotalSuffix: true, useSecondsForDurations: true, unitSuffix: true } },
    },
  });
  return `http://127.0.0.1:${port}/metrics`;
}

/**
 * Starts the metrics endpoint of one kind of process on its port from temporal.yaml. With
 * `temporal`, this is a worker's endpoint: it installs the SDK's exporter (see above) and adds the
 * process's own metrics. A port that is taken fails here, naming the field.
 */
export async function startProcessMetrics(config: Config, kind: MetricsKind, opts: { temporal: boolean; port?: number }): Promise<ProcessMetrics> {
  const registry = new Registry();
  const port = opts.port ?? config.metrics.ports[kind];
  if (port === 0) return { registry, close: async () => undefined };
  const sdkUrl = opts.temporal ? await installTemporalMetrics() : undefined;
  if (opts.temporal) collectDefaultMetrics({ register: registry });
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('metrics are at /metrics\n');
      return;
    }
    void (async () => {
      const sdk = sdkUrl === undefined ? '' : await fetch(sdkUrl, { signal: AbortSignal.timeout(5_000) }).then((r) => r.text(), (err: Error) => `# the Temporal SDK's exporter did not answer: ${err.message}\n`);
      res.writeHead(200, { 'content-type': registry.contentType }).end(`${await registry.metrics()}\n${sdk}`);
    })().catch((err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${err.message}\n`));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new Error(`metrics port ${port} of the ${kind} (metrics.ports.${kind}) on ${config.metrics.host} is in use: give this process another port in temporal.yaml, or 0 for none`) : err),
    );
    server.listen(port, config.metrics.host, () => resolve());
  });
  // The endpoint lives as long as the process, and never keeps a stopped worker's process alive.
  server.unref();
  const address = server.address() as AddressInfo;
  return {
    registry,
    url: `http://${config.metrics.host}:${address.port}/metrics`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
