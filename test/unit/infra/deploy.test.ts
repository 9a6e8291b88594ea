import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { loadConfig } from '../../../config/load';
import { viewerLogin } from '../../../viewer/auth';
import { REPO_CONFIG } from '../../../infra/ephemeral';

const ROOT = path.dirname(REPO_CONFIG);
const COMPOSE = path.join(ROOT, 'infra', 'deploy', 'compose.yaml');
const PROMETHEUS = path.join(ROOT, 'infra', 'deploy', 'prometheus.yml');

/** Compose interpolation of `${VAR}`, `${VAR:-default}`, `${VAR:?message}` with the given values. */
function interpolate(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\{([A-Z_][A-Z0-9_]*)(?::([-?])([^}]*))?\}/g, (_m, name: string, op?: string, arg?: string) => {
    const value = vars[name];
    if (value !== undefined) return value;
    if (op === '-') return arg ?? '';
    throw new Error(`compose needs ${name}: ${arg}`);
  });
}

const service = z.object({
  image: z.string().optional(),
  build: z.object({ context: z.string(), dockerfile: z.string() }).optional(),
  command: z.array(z.string()).optional(),
  environment: z.record(z.string(), z.string()).optional(),
  depends_on: z.array(z.string()).optional(),
  ports: z.array(z.string()).optional(),
  volumes: z.array(z.string()).optional(),
});
const composeSchema = z.object({ name: z.string(), services: z.record(z.string(), service), volumes: z.record(z.string(), z.unknown()) });

describe('infra/deploy: the cluster deployment description', () => {
  const secrets = { POSTGRES_PASSWORD: 'pw', CODA_S3_ACCESS_KEY_ID: 'key', CODA_S3_SECRET_ACCESS_KEY: 'secret', CODA_VIEWER_TOKEN: 'viewer-token-from-the-lab' };
  const compose = composeSchema.parse(parse(interpolate(readFileSync(COMPOSE, 'utf8'), secrets), { merge: true }));
  const services = compose.services;
  const workers = ['orchestrator', 'vm-host', 'gpu'];

  it('declares Temporal on PostgreSQL, its UI, MinIO, the cluster setup, the three worker kinds, the viewer and Prometheus', () => {
    assert.deepEqual(Object.keys(services).sort(), ['gpu', 'minio', 'orchestrator', 'postgresql', 'prometheus', 'setup', 'temporal', 'temporal-ui', 'viewer', 'vm-host']);
    assert.equal(services.temporal?.environment?.DB, 'postgres12');
    assert.equal(services.temporal?.environment?.POSTGRES_SEEDS, 'postgresql');
    assert.deepEqual(services.temporal?.depends_on, ['postgresql']);
  });

  it('needs its secrets from the environment', () => {
    for (const name of Object.keys(secrets)) {
      const without = Object.fromEntries(Object.entries(secrets).filter(([k]) => k !== name));
      assert.throws(() => interpolate(readFileSync(COMPOSE, 'utf8'), without), new RegExp(`compose needs ${name}: set `));
    }
  });

  it('pins every outside image and only depends on declared services', () => {
    for (const [name, svc] of Object.entries(services)) {
      if (svc.build === undefined) assert.match(svc.image ?? '', /^[a-z0-9./-]+:[A-Za-z0-9._-]+$/, `${name} pins its image`);
      if (svc.build === undefined) assert.doesNotMatch(svc.image ?? '', /:latest$/, `${name} is not :latest`);
      for (const dep of svc.depends_on ?? []) assert.ok(dep in services, `${name} depends on unknown ${dep}`);
    }
    assert.ok(existsSync(path.join(path.dirname(COMPOSE), services.orchestrator!.build!.context, services.orchestrator!.build!.dockerfile)));
  });

  it('gives every worker an environment in which temporal.yaml loads and points at the cluster', () => {
    for (const name of [...workers, 'setup', 'viewer']) {
      const env = services[name]?.environment ?? {};
      const config = loadConfig(REPO_CONFIG, env);
      assert.equal(config.temporal.address, 'temporal:7233', name);
      assert.equal(config.storage.endpoint, 'http://minio:9000', name);
      assert.ok(env[config.storage.accessKeyIdEnv] && env[config.storage.secretAccessKeyEnv], `${name} has the S3 credentials`);
    }
    assert.equal(services['vm-host']?.environment?.CODA_HOST_ID, 'local-1');
    const viewerEnv = services.viewer?.environment ?? {};
    assert.equal(viewerEnv[loadConfig(REPO_CONFIG, viewerEnv).viewer.auth.tokenEnv], secrets.CODA_VIEWER_TOKEN, 'the viewer, listening beyond its container, has its login token');
    assert.equal(viewerLogin(loadConfig(REPO_CONFIG, viewerEnv), services.viewer!.command![4]!, viewerEnv).kind, 'token');
    assert.ok(loadConfig(REPO_CONFIG, {}).hosts.some((h) => h.id === 'local-1'));
  });

  it('runs compiled entry points of this repository', () => {
    const missing = [...workers, 'setup', 'viewer']
      .map((name) => services[name]?.command?.[1] ?? '')
      .filter((entry) => !existsSync(path.join(ROOT, entry.replace(/^build\//, '').replace(/\.js$/, '.ts'))));
    assert.deepEqual(missing, []);
  });

  it('has Prometheus scrape every worker kind and the reward service on the ports of temporal.yaml, reachable from its network', () => {
    const scrape = z
      .object({ scrape_configs: z.array(z.object({ job_name: z.string(), dns_sd_configs: z.array(z.object({ names: z.array(z.string()), type: z.literal('A'), port: z.number() })) })) })
      .parse(parse(readFileSync(PROMETHEUS, 'utf8')));
    const jobs = Object.fromEntries(scrape.scrape_configs.map((job) => [job.job_name, job.dns_sd_configs.map((sd) => ({ names: sd.names, port: sd.port }))]));
    const ports = (name: string) => loadConfig(REPO_CONFIG, services[name]?.environment ?? {}).metrics;
    assert.deepEqual(jobs, {
      orchestrator: [{ names: ['orchestrator'], port: ports('orchestrator').ports.orchestrator }],
      'vm-host': [{ names: ['vm-host'], port: ports('vm-host').ports.vmHost }],
      gpu: [{ names: ['gpu'], port: ports('gpu').ports.gpu }],
      'reward-service': [{ names: ['gpu'], port: ports('gpu').ports.rewardService }],
    });
    for (const name of workers) assert.equal(ports(name).host, '0.0.0.0', `${name} listens beyond its container`);
    assert.ok(services.prometheus?.volumes?.some((v) => v.startsWith('./prometheus.yml:')), 'Prometheus reads this file');
  });
});
