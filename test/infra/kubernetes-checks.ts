import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { z } from 'zod';
import { configRelative, parseConfig, type Env, type LoadedConfig } from '../../config/load';
import { toolPath } from '../../infra/tools';
import { chooseHostId } from '../../workers/vm-host';

/**
 * The checks of the Kubernetes manifests (infra/deploy/): rendering them with kustomize, validating
 * every object against the Kubernetes schemas offline (kubernetes-validate), and comparing what the
 * pods would run with temporal.yaml as each container would load it — from the rendered ConfigMap,
 * with the container's own environment. Each check returns the disagreements it finds, so a test can
 * show that a broken copy of the manifests is caught.
 */

export const ROOT = path.resolve(__dirname, '..', '..', '..');
export const DEPLOY = path.join(ROOT, 'infra', 'deploy');
/** The Kubernetes release the objects are validated against: the pod-index label the vm-hosts read is GA there. */
export const KUBERNETES_VERSION = '1.32.0';
/** What the secrets and field references stand for when a container's environment is resolved. */
export const POD_IP = '10.244.3.17';
const secretValue = (name: string, key: string): string => `<secret ${name}/${key}>`;
/** The variable temporal.yaml's viewer.auth.tokenEnv names by default: the manifests' viewer takes it from a Secret. */
export const VIEWER_TOKEN_ENV = 'CODA_VIEWER_TOKEN';

/** `kustomize build` of a kustomization folder; throws with kustomize's message. */
export function render(dir: string): string {
  // The example overlay makes its ConfigMap from the repository's temporal.yaml, outside its folder.
  const run = spawnSync(toolPath('kustomize'), ['build', '--load-restrictor', 'LoadRestrictionsNone', dir], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`kustomize build ${dir} failed: ${run.stderr}`);
  return run.stdout;
}

export const objectsOf = (text: string): K8sObject[] => parseAllDocuments(text).map((doc) => doc.toJS() as K8sObject);

export interface Validation {
  readonly status: number | null;
  /** kind/name of each object that passed, and of each that did not with the validator's reason. */
  readonly passed: string[];
  readonly failed: Array<{ object: string; reason: string }>;
  readonly output: string;
}

/** kubernetes-validate, strict (unknown fields are errors), of every object of `objects`. */
export function validate(objects: readonly K8sObject[]): Validation {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coda-k8s-'));
  try {
    const file = path.join(dir, 'rendered.yaml');
    writeFileSync(file, objects.map((o) => stringify(o)).join('---\n'));
    const run = spawnSync(toolPath('kubernetes-validate'), ['--kubernetes-version', KUBERNETES_VERSION, '--strict', file], { encoding: 'utf8' });
    const output = `${run.stdout}${run.stderr}`;
    const passed = [...output.matchAll(/^INFO .* passed for resource (\S+) against version/gm)].map((m) => m[1]!);
    const failed = [...output.matchAll(/^ERROR .* did not validate for resource (\S+) against version [\d.]+: (.*)$/gm)].map((m) => ({ object: m[1]!, reason: m[2]! }));
    return { status: run.status, passed, failed, output };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// --- the parts of the objects the checks read (kubernetes-validate checks the rest) ---

const labels = z.record(z.string(), z.string()).default({});
const envVar = z.object({
  name: z.string(),
  value: z.string().optional(),
  valueFrom: z
    .object({
      secretKeyRef: z.object({ name: z.string(), key: z.string(), optional: z.boolean().optional() }).optional(),
      fieldRef: z.object({ fieldPath: z.string() }).optional(),
      configMapKeyRef: z.object({ name: z.string(), key: z.string() }).optional(),
    })
    .optional(),
});
const probe = z.object({ httpGet: z.object({ path: z.string(), port: z.union([z.string(), z.number()]) }).optional() }).optional();
const container = z.object({
  name: z.string(),
  image: z.string(),
  command: z.array(z.string()).default([]),
  args: z.array(z.string()).default([]),
  env: z.array(envVar).default([]),
  envFrom: z.array(z.object({ configMapRef: z.object({ name: z.string() }).optional(), secretRef: z.object({ name: z.string() }).optional() })).default([]),
  ports: z.array(z.object({ name: z.string().optional(), containerPort: z.number() })).default([]),
  resources: z.object({ requests: z.record(z.string(), z.unknown()).optional(), limits: z.record(z.string(), z.unknown()).optional() }).default({}),
  volumeMounts: z.array(z.object({ name: z.string(), mountPath: z.string(), readOnly: z.boolean().optional() })).default([]),
  readinessProbe: probe,
  livenessProbe: probe,
});
const volume = z.object({
  name: z.string(),
  configMap: z.object({ name: z.string() }).optional(),
  secret: z.object({ secretName: z.string() }).optional(),
  emptyDir: z.object({ medium: z.string().optional(), sizeLimit: z.string().optional() }).optional(),
  persistentVolumeClaim: z.object({ claimName: z.string() }).optional(),
});
const workloadSchema = z.object({
  kind: z.enum(['Deployment', 'StatefulSet']),
  metadata: z.object({ name: z.string(), labels }),
  spec: z.object({
    replicas: z.number().default(1),
    template: z.object({
      metadata: z.object({ labels }),
      spec: z.object({
        containers: z.array(container),
        initContainers: z.array(container).default([]),
        volumes: z.array(volume).default([]),
        terminationGracePeriodSeconds: z.number().default(30),
        serviceAccountName: z.string().optional(),
      }),
    }),
  }),
});
const serviceSchema = z.object({
  metadata: z.object({ name: z.string() }),
  spec: z.object({
    selector: z.record(z.string(), z.string()).default({}),
    ports: z.array(z.object({ name: z.string().optional(), port: z.number(), targetPort: z.union([z.string(), z.number()]).optional() })),
  }),
});

export type K8sObject = { kind: string; metadata: { name: string; labels?: Record<string, string> }; [key: string]: unknown };
type Workload = z.output<typeof workloadSchema>;
type Container = z.output<typeof container>;

/** The worker kinds of the pipeline, by their pods' component label. */
const COMPONENTS = ['orchestrator', 'vm-host', 'gpu', 'viewer'] as const;
type Component = (typeof COMPONENTS)[number];

const isCoda = (w: Workload): boolean => w.spec.template.metadata.labels['app.kubernetes.io/name'] === 'coda';
const componentOf = (w: Workload): Component => w.spec.template.metadata.labels['app.kubernetes.io/component'] as Component;

/** The rendered objects, read for the checks. */
export class Manifests {
  readonly workloads: Workload[];
  constructor(readonly objects: readonly K8sObject[]) {
    this.workloads = objects.filter((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet').map((o) => workloadSchema.parse(o));
  }

  get coda(): Workload[] {
    return this.workloads.filter(isCoda);
  }

  workload(component: string): Workload | undefined {
    return this.workloads.find((w) => w.spec.template.metadata.labels['app.kubernetes.io/component'] === component);
  }

  configMap(name: string): Record<string, string> | undefined {
    const found = this.objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === name);
    return found === undefined ? undefined : ((found as { data?: Record<string, string> }).data ?? {});
  }

  /** A container's environment as the pod gets it: envFrom ConfigMaps, then env; secrets and field references stand-ins. */
  env(c: Container, podIndex = 0): Env {
    const env: Record<string, string> = {};
    for (const from of c.envFrom) {
      if (from.configMapRef !== undefined) Object.assign(env, this.configMap(from.configMapRef.name) ?? {});
    }
    for (const v of c.env) {
      const ref = v.valueFrom;
      if (v.value !== undefined) env[v.name] = v.value;
      else if (ref?.secretKeyRef !== undefined) env[v.name] = secretValue(ref.secretKeyRef.name, ref.secretKeyRef.key);
      else if (ref?.configMapKeyRef !== undefined) {
        const value = this.configMap(ref.configMapKeyRef.name)?.[ref.configMapKeyRef.key];
        if (value !== undefined) env[v.name] = value;
      } else if (ref?.fieldRef?.fieldPath === 'status.podIP') env[v.name] = POD_IP;
      else if (ref?.fieldRef?.fieldPath === "metadata.labels['apps.kubernetes.io/pod-index']") env[v.name] = String(podIndex);
    }
    return env;
  }

  /**
   * temporal.yaml as container `c` of workload `w` loads it: the file CODA_CONFIG names, which must
   * be a key of a ConfigMap mounted at its folder, with the container's environment.
   */
  config(w: Workload, c: Container, podIndex = 0): LoadedConfig {
    const env = this.env(c, podIndex);
    const file = env.CODA_CONFIG;
    if (file === undefined) throw new Error(`${c.name}: CODA_CONFIG is not set, so it would read the image's own temporal.yaml`);
    const mount = c.volumeMounts.find((m) => m.mountPath === path.dirname(file));
    const source = w.spec.template.spec.volumes.find((v) => v.name === mount?.name)?.configMap?.name;
    const text = source === undefined ? undefined : this.configMap(source)?.[path.basename(file)];
    if (text === undefined) throw new Error(`${c.name}: CODA_CONFIG=${file} is not a file of a ConfigMap mounted at ${path.dirname(file)}`);
    return parseConfig(text, file, env);
  }
}

const containersOf = (w: Workload): Container[] => [...w.spec.template.spec.initContainers, ...w.spec.template.spec.containers];
const mainContainer = (w: Workload): Container => w.spec.template.spec.containers[0]!;
const portNamed = (c: Container, name: string): number | undefined => c.ports.find((p) => p.name === name)?.containerPort;

/** Each check: the disagreements it finds, as sentences naming the object and the temporal.yaml field. */
export type Check = (m: Manifests) => string[];

/** Every worker kind is there, runs an entry point of this repository, and loads temporal.yaml from the ConfigMap. */
export const entryPoints: Check = (m) => {
  const problems: string[] = [];
  for (const component of COMPONENTS) if (m.workload(component) === undefined) problems.push(`no workload runs the ${component}`);
  for (const w of m.coda) {
    for (const c of containersOf(w)) {
      const [program, entry] = c.command;
      const source = entry === undefined ? '' : path.join(ROOT, entry.replace(/^build\//, '').replace(/\.js$/, '.ts'));
      if (program !== 'node' || !existsSync(source)) problems.push(`${w.metadata.name}/${c.name}: ${c.command.join(' ')} is not a compiled entry point of this repository`);
      try {
        m.config(w, c);
      } catch (err) {
        problems.push(`${w.metadata.name}/${c.name}: temporal.yaml does not load: ${(err as Error).message}`);
      }
    }
  }
  return problems;
};

/** Every task queue of temporal.yaml has its pollers: the orchestrators, the gpu workers, a vm-host pod per host. */
export const queues: Check = (m) => {
  const problems: string[] = [];
  const vmHost = m.workload('vm-host');
  if (vmHost === undefined) return ['no vm-host workload'];
  if (vmHost.kind !== 'StatefulSet') problems.push(`vm-host is a ${vmHost.kind}: a StatefulSet gives each pod the index that picks its host`);
  const c = mainContainer(vmHost);
  if (c.env.some((v) => v.name === 'CODA_HOST_ID') || c.command.includes('--host')) problems.push('vm-host: CODA_HOST_ID or --host pins every pod to one host');
  const config = m.config(vmHost, c);
  const ids = config.hosts.map((h) => h.id);
  if (vmHost.spec.replicas !== ids.length) problems.push(`vm-host: ${vmHost.spec.replicas} replicas for ${ids.length} host(s) of temporal.yaml (${ids.join(', ')}): one pod per host`);
  const served = new Map<string, string>();
  for (let i = 0; i < vmHost.spec.replicas; i++) {
    const podConfig = m.config(vmHost, c, i);
    try {
      const id = chooseHostId(podConfig, c.command, m.env(c, i));
      const host = podConfig.hosts.find((h) => h.id === id);
      if (host === undefined) problems.push(`vm-host-${i} runs host ${id}, which temporal.yaml does not have`);
      else served.set(host.taskQueue, `vm-host-${i}`);
    } catch (err) {
      problems.push(`vm-host-${i}: ${(err as Error).message}`);
    }
  }
  for (const host of config.hosts) if (!served.has(host.taskQueue)) problems.push(`host ${host.id}: no vm-host pod polls its queue ${host.taskQueue}`);
  const polled: Array<[string, string]> = [
    ['orchestrator', config.taskQueues.orchestrator],
    ['gpu', config.taskQueues.gpu],
    ['vm-host', config.taskQueues.desktopLeases],
  ];
  for (const [component, queue] of polled) {
    const w = m.workload(component);
    if (w === undefined || w.spec.replicas < 1) problems.push(`no ${component} pod polls ${queue}`);
  }
  for (const schedule of config.schedules) {
    if (!(schedule.taskQueue in config.taskQueues)) problems.push(`schedule ${schedule.id} runs on ${schedule.taskQueue}, no queue of temporal.yaml`);
  }
  return problems;
};

/** The metrics ports of temporal.yaml each worker kind listens on (several on a gpu worker). */
function metricsPorts(component: Component, config: LoadedConfig, hostIds: readonly string[] = []): Record<string, number[]> {
  const { ports } = config.metrics;
  switch (component) {
    case 'orchestrator':
      return { metrics: [ports.orchestrator] };
    case 'vm-host':
      return { metrics: config.hosts.filter((h) => hostIds.length === 0 || hostIds.includes(h.id)).map((h) => h.metricsPort ?? ports.vmHost) };
    case 'gpu':
      return { metrics: [ports.gpu], 'reward-metrics': [ports.rewardService] };
    case 'viewer':
      return {};
  }
}

/** Container ports, Services and probes agree with the ports and listen addresses of temporal.yaml. */
export const ports: Check = (m) => {
  const problems: string[] = [];
  for (const w of m.coda) {
    const component = componentOf(w);
    const c = mainContainer(w);
    const config = m.config(w, c);
    const expected: Record<string, number[]> = { ...metricsPorts(component, config) };
    if (component === 'gpu') expected.reward = [config.training.rewardService.port];
    if (component === 'viewer') expected.http = [config.viewer.port];
    for (const [name, numbers] of Object.entries(expected)) {
      const actual = portNamed(c, name);
      for (const n of new Set(numbers)) {
        if (actual !== n) problems.push(`${w.metadata.name}: container port "${name}" is ${actual ?? 'missing'}, temporal.yaml says ${n}`);
      }
    }
    if (component !== 'viewer' && config.metrics.host !== '0.0.0.0') problems.push(`${w.metadata.name}: metrics.host is ${config.metrics.host}: Prometheus cannot reach it`);
    if (component === 'viewer' && config.viewer.host !== '0.0.0.0') problems.push(`${w.metadata.name}: viewer.host is ${config.viewer.host}: its Service cannot reach it`);
    if (component === 'gpu' && config.training.rewardService.host !== POD_IP) {
      problems.push(`${w.metadata.name}: training.rewardService.host is ${config.training.rewardService.host}, not the pod's address: the Ray nodes cannot reach the URL the trainer is given`);
    }
    for (const p of [c.readinessProbe, c.livenessProbe]) {
      const port = p?.httpGet?.port;
      if (typeof port === 'string' && portNamed(c, port) === undefined) problems.push(`${w.metadata.name}: a probe names port "${port}", which the container does not have`);
    }
  }
  for (const o of m.objects.filter((x) => x.kind === 'Service')) {
    const svc = serviceSchema.parse(o);
    const pods = m.workloads.filter((w) => Object.entries(svc.spec.selector).every(([k, v]) => w.spec.template.metadata.labels[k] === v));
    if (pods.length === 0) problems.push(`Service ${svc.metadata.name} selects no pod`);
    for (const p of svc.spec.ports) {
      for (const w of pods) {
        const target = p.targetPort ?? p.port;
        const number = typeof target === 'number' ? target : portNamed(mainContainer(w), target);
        if (number !== p.port) problems.push(`Service ${svc.metadata.name}: port ${p.port} goes to ${w.metadata.name}'s ${target} (${number ?? 'no such port'})`);
      }
    }
  }
  return problems;
};

/** The env var names temporal.yaml's `...Env` fields hold (the secrets' names), with the field of each. */
export function secretNames(config: LoadedConfig): Map<string, string> {
  const names = new Map<string, string>();
  const walk = (value: unknown, at: string): void => {
    if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${at}[${i}]`));
    else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (k.endsWith('Env') && typeof v === 'string') names.set(v, `${at}.${k}`);
        else walk(v, `${at}.${k}`);
      }
    }
  };
  walk(config, 'temporal.yaml');
  return names;
}

/** The secrets each worker kind reads: S3 everywhere, the model keys where models are called. */
function neededSecrets(component: Component, config: LoadedConfig): string[] {
  const s3 = [config.storage.accessKeyIdEnv, config.storage.secretAccessKeyEnv];
  const models = config.models;
  const keys = (endpoints: ReadonlyArray<{ apiKeyEnv?: string }>): string[] => endpoints.flatMap((e) => (e.apiKeyEnv === undefined ? [] : [e.apiKeyEnv]));
  switch (component) {
    case 'orchestrator':
      return [...s3, ...keys([models.planner, models.executor, ...models.judges, models.taskGenerator])];
    case 'gpu':
      // The reward service calls the executor and, listening on the pod's address, takes only the trainer's token; servePlanner registers checkpoints with the planner's server.
      return [...s3, ...keys([models.planner, models.executor]), config.training.rewardService.tokenEnv];
    case 'vm-host':
      return s3;
    case 'viewer':
      return [...s3, config.viewer.auth.tokenEnv];
  }
}

/** Secrets come from Secrets, by reference only: none is written into the manifests or the ConfigMaps. */
export const secrets: Check = (m) => {
  const problems: string[] = [];
  for (const o of m.objects) if (o.kind === 'Secret') problems.push(`Secret ${o.metadata.name} is rendered: secrets are created in the cluster, referenced by name`);
  for (const w of m.coda) {
    const c = mainContainer(w);
    const config = m.config(w, c);
    const named = secretNames(config);
    const allowed = new Set(named.keys());
    // Every container connects to Temporal: whatever secret temporal.yaml's `temporal` section names (TLS, API key), each needs.
    const temporalSecrets = [...secretNames({ temporal: config.temporal } as LoadedConfig).keys()];
    const needs: Array<[Container, string[]]> = [
      [c, neededSecrets(componentOf(w), config)],
      ...containersOf(w).map((x): [Container, string[]] => [x, temporalSecrets]),
    ];
    for (const [x, names] of needs) {
      for (const name of names) {
        const v = x.env.find((e) => e.name === name);
        const where = x === c ? w.metadata.name : `${w.metadata.name}/${x.name}`;
        if (v?.valueFrom?.secretKeyRef === undefined) problems.push(`${where}: ${name} (${named.get(name) ?? 'a secret the worker reads'}) is not taken from a Secret`);
        else if (v.valueFrom.secretKeyRef.optional === true) problems.push(`${where}: ${name} is optional, but the worker fails without it`);
      }
    }
    for (const x of containersOf(w)) {
      for (const v of x.env) {
        if (allowed.has(v.name) && v.value !== undefined) problems.push(`${w.metadata.name}/${x.name}: ${v.name} is written in the manifest`);
        if (v.valueFrom?.secretKeyRef !== undefined && !allowed.has(v.name)) problems.push(`${w.metadata.name}/${x.name}: ${v.name} comes from a Secret, but no field of temporal.yaml names it`);
      }
      for (const from of x.envFrom) {
        const data = from.configMapRef === undefined ? {} : (m.configMap(from.configMapRef.name) ?? {});
        for (const key of Object.keys(data)) if (allowed.has(key)) problems.push(`${w.metadata.name}/${x.name}: ${key} is in ConfigMap ${from.configMapRef!.name}`);
      }
    }
  }
  return problems;
};

/** Prometheus scrapes every metrics port of the coda pods (each worker's and the reward service's), and no other port. */
export const prometheus: Check = (m) => {
  const problems: string[] = [];
  const w = m.workload('prometheus');
  if (w === undefined) return ['no Prometheus'];
  const c = mainContainer(w);
  const file = c.args.find((a) => a.startsWith('--config.file='))?.slice('--config.file='.length) ?? '';
  const mount = c.volumeMounts.find((vm) => vm.mountPath === path.dirname(file));
  const source = w.spec.template.spec.volumes.find((v) => v.name === mount?.name)?.configMap?.name;
  const text = source === undefined ? undefined : m.configMap(source)?.[path.basename(file)];
  if (text === undefined) return [`Prometheus reads ${file}, which no mounted ConfigMap holds`];
  const scrape = z
    .object({
      scrape_configs: z.array(
        z.object({
          job_name: z.string(),
          kubernetes_sd_configs: z.array(z.object({ role: z.literal('pod'), selectors: z.array(z.object({ role: z.string(), label: z.string() })).default([]) })),
          relabel_configs: z.array(z.object({ source_labels: z.array(z.string()).optional(), regex: z.string().optional(), action: z.string().optional() })).default([]),
        }),
      ),
    })
    .parse(parse(text));
  const job = scrape.scrape_configs[0]!;
  const keep = job.relabel_configs.find((r) => r.action === 'keep' && r.source_labels?.[0] === '__meta_kubernetes_pod_container_port_name');
  const kept = new RegExp(`^(?:${keep?.regex ?? '.*'})$`);
  const selector = job.kubernetes_sd_configs[0]?.selectors.find((s) => s.role === 'pod')?.label ?? '';
  const [key, value] = selector.split('=');
  for (const x of m.coda) {
    if (key !== undefined && x.spec.template.metadata.labels[key] !== value) problems.push(`Prometheus selects pods by ${selector}: ${x.metadata.name}'s pods are not among them`);
    const config = m.config(x, mainContainer(x));
    const metricNames = Object.keys(metricsPorts(componentOf(x), config));
    for (const p of mainContainer(x).ports) {
      const isMetrics = p.name !== undefined && metricNames.includes(p.name);
      const scraped = p.name !== undefined && kept.test(p.name);
      if (isMetrics && !scraped) problems.push(`Prometheus does not scrape ${x.metadata.name}'s port ${p.name} (${p.containerPort})`);
      if (!isMetrics && scraped) problems.push(`Prometheus scrapes ${x.metadata.name}'s port ${p.name ?? p.containerPort}, which serves no metrics`);
    }
  }
  const account = w.spec.template.spec.serviceAccountName;
  const role = m.objects.find((o) => o.kind === 'Role' && (o as { rules?: Array<{ resources?: string[]; verbs?: string[] }> }).rules?.some((r) => r.resources?.includes('pods') && ['list', 'watch'].every((v) => r.verbs?.includes(v))));
  const bound = m.objects.some(
    (o) =>
      o.kind === 'RoleBinding' &&
      (o as { roleRef?: { name?: string } }).roleRef?.name === role?.metadata.name &&
      (o as { subjects?: Array<{ kind: string; name: string }> }).subjects?.some((s) => s.kind === 'ServiceAccount' && s.name === account),
  );
  if (role === undefined || !bound) problems.push(`Prometheus's service account (${account ?? 'default'}) may not list and watch the pods it finds its targets among`);
  return problems;
};

/** The grace each worker gives in-flight activities after SIGTERM, read from its source (shutdownGraceTime). */
function shutdownGraceSeconds(worker: string): number {
  const match = /shutdownGraceTime: '(\d+) seconds'/.exec(readFileSync(path.join(ROOT, 'workers', `${worker}.ts`), 'utf8'));
  if (match === null) throw new Error(`workers/${worker}.ts sets no shutdownGraceTime`);
  return Number(match[1]);
}

/** GPUs as the GRPO command asks, the trainers' image, shared memory, writable folders and time to shut down. */
export const resources: Check = (m) => {
  const problems: string[] = [];
  const gpu = m.workload('gpu');
  const orchestrator = m.workload('orchestrator');
  const vmHost = m.workload('vm-host');
  if (gpu === undefined || orchestrator === undefined || vmHost === undefined) return ['a worker kind is missing'];
  const g = mainContainer(gpu);
  const config = m.config(gpu, g);
  const args = config.training.grpo.args;
  const perNode = args[args.indexOf('--actor.num_gpus_per_node') + 1];
  for (const which of ['requests', 'limits'] as const) {
    const asked = g.resources[which]?.['nvidia.com/gpu'];
    if (String(asked) !== perNode) problems.push(`gpu: ${which} nvidia.com/gpu is ${String(asked)}, temporal.yaml's GRPO command asks for ${perNode} per node (--actor.num_gpus_per_node)`);
  }
  if (g.image === mainContainer(orchestrator).image) problems.push(`gpu runs ${g.image}, the workers' image, not the trainers'`);
  // The orchestrator decides which tasks the local hosts run by probing their apps in its own container.
  if (mainContainer(orchestrator).image !== mainContainer(vmHost).image) problems.push(`orchestrator runs ${mainContainer(orchestrator).image}, the vm-hosts ${mainContainer(vmHost).image}: it probes the local hosts' apps in its own container`);
  for (const w of [vmHost, gpu]) {
    const mount = mainContainer(w).volumeMounts.find((vm) => vm.mountPath === '/dev/shm');
    const shm = w.spec.template.spec.volumes.find((v) => v.name === mount?.name);
    if (shm?.emptyDir?.medium !== 'Memory') problems.push(`${w.metadata.name}: no memory-backed /dev/shm`);
  }
  const grace: Array<[Workload, number, string]> = [
    [orchestrator, shutdownGraceSeconds('orchestrator'), 'its shutdownGraceTime'],
    [vmHost, shutdownGraceSeconds('vm-host'), 'its shutdownGraceTime'],
    [gpu, shutdownGraceSeconds('gpu') + config.training.cancelGraceSeconds, 'its shutdownGraceTime and training.cancelGraceSeconds'],
  ];
  for (const [w, seconds, what] of grace) {
    if (w.spec.template.spec.terminationGracePeriodSeconds <= seconds) problems.push(`${w.metadata.name}: terminationGracePeriodSeconds ${w.spec.template.spec.terminationGracePeriodSeconds} is not more than ${what} (${seconds} s)`);
  }
  for (const w of m.coda) {
    const c = mainContainer(w);
    const loaded = m.config(w, c);
    const written: Array<[string, string]> = [['dev.dataDir', loaded.dataDir]];
    if (componentOf(w) === 'gpu') written.push(['training.workDir', configRelative(loaded, loaded.training.workDir)], ['training.serving.dir', configRelative(loaded, loaded.training.serving.dir)]);
    for (const [field, dir] of written) {
      const writable = c.volumeMounts.some((vm) => vm.readOnly !== true && (dir === vm.mountPath || dir.startsWith(`${vm.mountPath}/`)));
      if (!writable) problems.push(`${w.metadata.name}: ${field} is ${dir}, on no writable volume`);
    }
  }
  return problems;
};

export const CHECKS = { entryPoints, queues, ports, secrets, prometheus, resources } as const;
