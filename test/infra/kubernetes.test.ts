import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { loadConfig } from '../../config/load';
import { chooseHostId } from '../../workers/vm-host';
import { CHECKS, DEPLOY, Manifests, objectsOf, render, ROOT, validate, VIEWER_TOKEN_ENV, type K8sObject } from './kubernetes-checks';

/**
 * infra/deploy/'s Kubernetes manifests (docs/deploy.md): the example overlay rendered by the real
 * kustomize, every object validated offline against the Kubernetes schemas by PyPI's
 * kubernetes-validate (both installed by infra/install.sh), and what the pods would run compared
 * with temporal.yaml as each container loads it. Broken copies show that each check can fail.
 */
describe('infra/deploy: the Kubernetes manifests', () => {
  let rendered: K8sObject[];
  let manifests: Manifests;
  before(function () {
    this.timeout(300_000);
    rendered = objectsOf(render(path.join(DEPLOY, 'overlays', 'example')));
    manifests = new Manifests(rendered);
  });

  /** A copy of the rendered objects with `change` applied to the object of that kind and name. */
  const broken = (kind: string, name: string, change: (o: any) => void): Manifests => {
    const copy = structuredClone(rendered) as K8sObject[];
    const target = copy.find((o) => o.kind === kind && o.metadata.name.startsWith(name));
    assert.ok(target, `${kind} ${name} is rendered`);
    change(target);
    return new Manifests(copy);
  };
  const container = (o: any, name: string) => o.spec.template.spec.containers.find((c: { name: string }) => c.name === name);

  it('renders the orchestrator, the vm-hosts, the gpu worker, the viewer, Prometheus and their ConfigMaps, Services and RBAC', () => {
    const names = rendered.map((o) => `${o.kind}/${o.metadata.name.replace(/-[a-z0-9]{10}$/, '')}`).sort();
    assert.deepEqual(names, [
      'ConfigMap/coda-config', 'ConfigMap/coda-env', 'ConfigMap/prometheus-config',
      'Deployment/gpu', 'Deployment/orchestrator', 'Deployment/prometheus', 'Deployment/viewer',
      'Namespace/coda', 'PersistentVolumeClaim/coda-served', 'Role/prometheus', 'RoleBinding/prometheus',
      'Service/prometheus', 'Service/reward-service', 'Service/viewer', 'Service/vm-host',
      'ServiceAccount/prometheus', 'StatefulSet/vm-host',
    ]);
    // The ConfigMap is the repository's temporal.yaml, as the pods read it.
    const file = manifests.configMap(rendered.find((o) => o.metadata.name.startsWith('coda-config-'))!.metadata.name)!['temporal.yaml'];
    assert.deepEqual(parse(file!), parse(readFileSync(path.join(ROOT, 'temporal.yaml'), 'utf8')));
  });

  it('validates every object against the Kubernetes 1.32 schemas, strictly, offline', function () {
    this.timeout(300_000);
    const result = validate(rendered);
    assert.deepEqual(result.failed, [], result.output);
    assert.equal(result.status, 0, result.output);
    assert.equal(result.passed.length, rendered.length, result.output);
  });

  it('fails the validation of an object with an unknown field or a wrong type', function () {
    this.timeout(300_000);
    const copy = structuredClone(rendered) as K8sObject[];
    const orchestrator = copy.find((o) => o.kind === 'Deployment' && o.metadata.name === 'orchestrator') as any;
    orchestrator.spec.template.spec.containers[0].shmSize = '2Gi';
    const vmHost = copy.find((o) => o.kind === 'StatefulSet') as any;
    vmHost.spec.replicas = 'one per host';
    const result = validate(copy);
    assert.notEqual(result.status, 0);
    assert.deepEqual(result.failed.map((f) => f.object).sort(), ['deployment/orchestrator', 'statefulset/vm-host']);
    assert.match(result.failed.find((f) => f.object === 'deployment/orchestrator')!.reason, /shmSize/);
    assert.match(result.failed.find((f) => f.object === 'statefulset/vm-host')!.reason, /replicas/);
    assert.equal(result.passed.length, rendered.length - 2);
  });

  for (const [name, check] of Object.entries(CHECKS)) {
    it(`agrees with temporal.yaml: ${name}`, () => assert.deepEqual(check(manifests), []));
  }

  it('runs pod i of the vm-host StatefulSet as the i-th host of temporal.yaml, or fails naming the hosts', () => {
    const two = { hosts: [{ id: 'local-1' }, { id: 'rack-3' }] } as Parameters<typeof chooseHostId>[0];
    assert.equal(chooseHostId(two, ['node', 'vm-host.js'], { CODA_HOST_INDEX: '1' }), 'rack-3');
    assert.equal(chooseHostId(two, ['node', 'vm-host.js'], { CODA_HOST_INDEX: '0' }), 'local-1');
    assert.equal(chooseHostId(two, ['node', 'vm-host.js', '--host', 'rack-3'], { CODA_HOST_INDEX: '0' }), 'rack-3');
    assert.equal(chooseHostId(two, ['node', 'vm-host.js'], { CODA_HOST_ID: 'local-1', CODA_HOST_INDEX: '1' }), 'local-1');
    assert.throws(() => chooseHostId(two, [], { CODA_HOST_INDEX: '2' }), /CODA_HOST_INDEX=2: expected a position in temporal.yaml's hosts, 0 to 1 \(local-1, rack-3\)/);
    assert.throws(() => chooseHostId(two, [], { CODA_HOST_INDEX: 'vm-host-0' }), /CODA_HOST_INDEX=vm-host-0/);
    assert.throws(() => chooseHostId(two, [], {}), /several hosts in temporal.yaml \(local-1, rack-3\)/);
    assert.equal(chooseHostId({ hosts: [two.hosts[0]!] }, [], {}), 'local-1');
  });

  describe('catches manifests that disagree with temporal.yaml', () => {
    it('a vm-host pod too many, or a host of temporal.yaml without its pod', () => {
      const extra = broken('StatefulSet', 'vm-host', (o) => (o.spec.replicas = 2));
      assert.deepEqual(CHECKS.queues(extra), [
        'vm-host: 2 replicas for 1 host(s) of temporal.yaml (local-1): one pod per host',
        "vm-host-1: CODA_HOST_INDEX=1: expected a position in temporal.yaml's hosts, 0 to 0 (local-1)",
      ]);
      const moreHosts = broken('ConfigMap', 'coda-config-', (o) => {
        const file = parse(o.data['temporal.yaml']);
        file.hosts.push({ ...file.hosts[0], id: 'local-2', taskQueue: 'coda-vm-local-2' });
        o.data['temporal.yaml'] = stringify(file);
      });
      assert.deepEqual(CHECKS.queues(moreHosts), [
        'vm-host: 1 replicas for 2 host(s) of temporal.yaml (local-1, local-2): one pod per host',
        'host local-2: no vm-host pod polls its queue coda-vm-local-2',
      ]);
      const pinned = broken('StatefulSet', 'vm-host', (o) => container(o, 'vm-host').env.push({ name: 'CODA_HOST_ID', value: 'local-1' }));
      assert.match(CHECKS.queues(pinned).join('\n'), /CODA_HOST_ID or --host pins every pod to one host/);
      const noGpu = broken('Deployment', 'gpu', (o) => (o.spec.replicas = 0));
      assert.deepEqual(CHECKS.queues(noGpu), [`no gpu pod polls ${loadConfig(path.join(ROOT, 'temporal.yaml'), {}).taskQueues.gpu}`]);
    });

    it('a port or a listen address other than temporal.yaml says', () => {
      const viewer = broken('Deployment', 'viewer', (o) => (container(o, 'viewer').ports[0].containerPort = 8301));
      assert.deepEqual(CHECKS.ports(viewer), [
        'viewer: container port "http" is 8301, temporal.yaml says 8300',
        "Service viewer: port 8300 goes to viewer's http (8301)",
      ]);
      const rewards = broken('Deployment', 'gpu', (o) => {
        const c = container(o, 'gpu');
        c.env = c.env.filter((e: { name: string }) => e.name !== 'CODA_REWARD_HOST');
      });
      assert.match(CHECKS.ports(rewards).join('\n'), /training\.rewardService\.host is 127\.0\.0\.1, not the pod's address/);
      const metrics = broken('ConfigMap', 'coda-env-', (o) => delete o.data.CODA_METRICS_HOST);
      assert.equal(CHECKS.ports(metrics).filter((p) => /metrics\.host is 127\.0\.0\.1: Prometheus cannot reach it/.test(p)).length, 3);
    });

    it('a secret written into a manifest, or one no worker reads', () => {
      const literal = broken('Deployment', 'orchestrator', (o) => {
        const c = container(o, 'orchestrator');
        c.env = c.env.map((e: { name: string }) => (e.name === 'CODA_S3_SECRET_ACCESS_KEY' ? { name: e.name, value: 'minio123' } : e));
      });
      assert.deepEqual(CHECKS.secrets(literal), [
        'orchestrator: CODA_S3_SECRET_ACCESS_KEY (temporal.yaml.storage.secretAccessKeyEnv) is not taken from a Secret',
        'orchestrator/orchestrator: CODA_S3_SECRET_ACCESS_KEY is written in the manifest',
      ]);
      const stray = broken('Deployment', 'gpu', (o) => container(o, 'gpu').env.push({ name: 'CODA_S3_KEY', valueFrom: { secretKeyRef: { name: 'coda-s3', key: 'access-key-id' } } }));
      assert.deepEqual(CHECKS.secrets(stray), ['gpu/gpu: CODA_S3_KEY comes from a Secret, but no field of temporal.yaml names it']);
      const noLogin = broken('Deployment', 'viewer', (o) => {
        const c = container(o, 'viewer');
        c.env = c.env.filter((e: { name: string }) => e.name !== VIEWER_TOKEN_ENV);
      });
      assert.deepEqual(CHECKS.secrets(noLogin), [`viewer: ${VIEWER_TOKEN_ENV} (temporal.yaml.viewer.auth.tokenEnv) is not taken from a Secret`]);
      const openRewards = broken('Deployment', 'gpu', (o) => {
        const c = container(o, 'gpu');
        c.env = c.env.filter((e: { name: string }) => e.name !== 'CODA_REWARD_TOKEN');
      });
      assert.deepEqual(CHECKS.secrets(openRewards), ['gpu: CODA_REWARD_TOKEN (temporal.yaml.training.rewardService.tokenEnv) is not taken from a Secret']);
    });

    it('a metrics port Prometheus does not scrape', () => {
      const narrow = broken('ConfigMap', 'prometheus-config-', (o) => {
        o.data['prometheus.yml'] = o.data['prometheus.yml'].replace('regex: metrics|reward-metrics', 'regex: metrics');
      });
      assert.deepEqual(CHECKS.prometheus(narrow), ["Prometheus does not scrape gpu's port reward-metrics (9467)"]);
    });

    it('GPUs other than the GRPO command asks for, the workers\' image on the gpu worker, a read-only data folder, an orchestrator that cannot probe the hosts\' apps', () => {
      const fewer = broken('Deployment', 'gpu', (o) => {
        const c = container(o, 'gpu');
        c.resources.limits['nvidia.com/gpu'] = '4';
        c.image = container(rendered.find((x) => x.metadata.name === 'orchestrator'), 'orchestrator').image;
      });
      assert.deepEqual(CHECKS.resources(fewer), [
        "gpu: limits nvidia.com/gpu is 4, temporal.yaml's GRPO command asks for 8 per node (--actor.num_gpus_per_node)",
        "gpu runs registry.example.org/coda/coda-pipeline:0.1.0, the workers' image, not the trainers'",
      ]);
      const readOnly = broken('StatefulSet', 'vm-host', (o) => {
        for (const m of container(o, 'vm-host').volumeMounts) m.readOnly = true;
      });
      assert.deepEqual(CHECKS.resources(readOnly), ['vm-host: dev.dataDir is /var/lib/coda, on no writable volume']);
      const elsewhere = broken('Deployment', 'orchestrator', (o) => (container(o, 'orchestrator').image = 'registry.example.org/coda/coda-orchestrator:0.1.0'));
      assert.deepEqual(CHECKS.resources(elsewhere), [
        "orchestrator runs registry.example.org/coda/coda-orchestrator:0.1.0, the vm-hosts registry.example.org/coda/coda-pipeline:0.1.0: it probes the local hosts' apps in its own container",
      ]);
    });
  });
});
