import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { loadConfig, type LoadedConfig } from '../../config/load';
import { createObjectStore } from '../../activities/storage/object-store';
import { connectClient } from '../../client/connection';
import { startDaemon } from '../../infra/daemon';
import { freePort } from '../../infra/ephemeral';
import { devEnv, stackDown, stackStatus, stackUp } from '../../infra/stack';
import { isolatedEnv, REPO_CONFIG } from '../stack';

/** Pids of live processes whose command line mentions `text`. */
function processesMentioning(text: string): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,stat=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => line.includes(text) && !/^\s*\d+\s+Z/.test(line))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

describe('infra: the dev stack (up | down | status) on real processes', function () {
  this.timeout(240_000);
  let dataDir: string;
  let env: Record<string, string>;
  let config: LoadedConfig;

  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'coda-infra-'));
    const base = await isolatedEnv(dataDir, 'coda-infra');
    config = loadConfig(REPO_CONFIG, base);
    // The viewer process behind its login, as a lab runs it (docs/viewer.md).
    env = { ...devEnv(config, base), CODA_VIEWER_TOKEN: `stack-test-viewer-${Date.now().toString(36)}` };
  });

  after(async () => {
    await stackDown(config, { env });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("gives free ports below the kernel's ephemeral range (where outgoing connections cannot take them), never the same twice", async () => {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    const ports = await Promise.all(Array.from({ length: 50 }, () => freePort()));
    assert.equal(new Set(ports).size, 50, 'all distinct');
    for (const port of ports) assert.ok(port >= 10_000 && port + 1_000 < low, `${port} in 10000..${low - 1001}`);
  });

  it('reports a stack that never ran as stopped, and describing it creates nothing', () => {
    assert.deepEqual(
      stackStatus(config, { env }).processes.map((p) => [p.name, p.running]),
      [['temporal', false], ['minio', false], ['scripted-models', false], ['orchestrator', false], ['vm-host-local-1', false], ['gpu', false], ['viewer', false]],
    );
    assert.deepEqual(readdirSync(dataDir), []);
  });

  it('refuses to start a server whose binary is missing, naming the install command', () => {
    const missing = path.join(dataDir, 'no-such-tool', 'minio');
    assert.throws(() => startDaemon(dataDir, { name: 'minio', command: missing, args: [] }), new RegExp(`minio is not installed at ${missing}: run \`bash infra/install.sh\``));
  });

  it('comes up healthy with Temporal, MinIO, the scripted models, the workers and the viewer, and up twice changes nothing', async () => {
    const first = await stackUp(config, { env, headless: true });
    assert.deepEqual(
      first.processes.map((p) => [p.name, p.running]),
      [
        ['temporal', true],
        ['minio', true],
        ['scripted-models', true],
        ['orchestrator', true],
        ['vm-host-local-1', true],
        ['gpu', true],
        ['viewer', true],
      ],
    );
    assert.equal(first.viewer, `http://127.0.0.1:${env.CODA_VIEWER_PORT}`);
    assert.equal((await fetch(`${first.viewer}/runs`)).status, 401, 'the viewer asks for its login');
    const runs = await fetch(`${first.viewer}/runs`, { headers: { authorization: `Bearer ${env.CODA_VIEWER_TOKEN}` } });
    assert.equal(runs.status, 200, 'the viewer reads the stack');
    for (const kind of ['ORCHESTRATOR', 'VM_HOST', 'GPU']) {
      const metrics = await fetch(`http://127.0.0.1:${env[`CODA_${kind}_METRICS_PORT`]}/metrics`);
      assert.match(await metrics.text(), /^temporal_worker_start_total/m, `the ${kind.toLowerCase()} worker's metrics endpoint`);
    }
    const rewards = await fetch(`http://127.0.0.1:${env.CODA_REWARD_SERVICE_METRICS_PORT}/metrics`);
    assert.match(await rewards.text(), /^# HELP coda_reward_requests_total/m, "the gpu worker's reward service metrics endpoint");
    assert.equal((await fetch(`http://127.0.0.1:${env.CODA_REWARD_PORT}/health`)).status, 200, 'the reward service answers');
    const second = await stackUp(config, { env, headless: true });
    assert.deepEqual(
      second.processes.map((p) => p.pid),
      first.processes.map((p) => p.pid),
    );
    assert.deepEqual(
      stackStatus(config, { env }).processes.map((p) => p.running),
      [true, true, true, true, true, true, true],
    );
  });

  it('keeps completed workflow histories and stored objects across down and up', async () => {
    const client = await connectClient(config);
    const workflowId = `persisted-${Date.now()}`;
    const result = (await client.workflow.execute('stackCheck', {
      taskQueue: config.taskQueues.orchestrator,
      workflowId,
      args: [],
    })) as { key: string };
    await client.connection.close();

    assert.deepEqual((await stackDown(config, { env })).sort(), ['gpu', 'minio', 'orchestrator', 'scripted-models', 'temporal', 'viewer', 'vm-host-local-1']);
    assert.deepEqual(processesMentioning(dataDir), [], 'no process of the stack survives down');
    await stackUp(config, { env, headless: true });

    const again = await connectClient(config);
    const handle = again.workflow.getHandle(workflowId);
    assert.equal((await handle.describe()).status.name, 'COMPLETED');
    const events = (await handle.fetchHistory()).events ?? [];
    assert.ok(events.length >= 10, `history has ${events.length} events`);
    assert.deepEqual(await handle.result(), result);
    await again.connection.close();
    const stored = await createObjectStore(config.storage, env).getJson<{ id: string }>(result.key);
    assert.equal(stored.id, workflowId);
  });

  it('restarts on up the processes that read another config file than the one they were started on, or the same file edited, and leaves Temporal and MinIO running', async () => {
    const before = await stackUp(config, { env, headless: true });
    const copy = path.join(dataDir, 'another', 'temporal.yaml');
    mkdirSync(path.dirname(copy), { recursive: true });
    writeFileSync(copy, readFileSync(REPO_CONFIG, 'utf8'));
    const other = loadConfig(copy, env);
    const after = await stackUp(other, { env, headless: true });
    const pids = (info: typeof before): Record<string, number | undefined> => Object.fromEntries(info.processes.map((p) => [p.name, p.pid]));
    const [was, now] = [pids(before), pids(after)];
    assert.deepEqual(Object.keys(now).filter((name) => now[name] === was[name]), ['temporal', 'minio'], 'only the servers, which read no config file, kept their processes');
    assert.ok(after.processes.every((p) => p.running));
    // The same file edited: the processes that read it start again on its new text.
    writeFileSync(copy, `${readFileSync(REPO_CONFIG, 'utf8')}\n# edited\n`);
    const edited = pids(await stackUp(other, { env, headless: true }));
    assert.deepEqual(Object.keys(edited).filter((name) => edited[name] === now[name]), ['temporal', 'minio']);
    // And back: the same restart the other way, so the next tests find the stack on the repository's config.
    const back = pids(await stackUp(config, { env, headless: true }));
    assert.deepEqual(Object.keys(back).filter((name) => back[name] === edited[name]), ['temporal', 'minio']);
  });

  it('replaces a stale pid file whose process is gone or is another program', async () => {
    await stackDown(config, { env });
    const runDir = path.join(dataDir, 'run');
    mkdirSync(runDir, { recursive: true });
    // A pid that does not exist, and a live pid that is not MinIO (this test process).
    writeFileSync(path.join(runDir, 'temporal.pid'), JSON.stringify({ pid: 2 ** 22 - 7, command: 'temporal', startedAt: '' }));
    writeFileSync(path.join(runDir, 'minio.pid'), JSON.stringify({ pid: process.pid, command: '/x/minio', startedAt: '' }));
    assert.deepEqual(
      stackStatus(config, { env }).processes.map((p) => p.running),
      [false, false, false, false, false, false, false],
    );
    const info = await stackUp(config, { env, headless: true });
    assert.ok(info.processes.every((p) => p.running && p.pid !== process.pid));
    const record = JSON.parse(readFileSync(path.join(runDir, 'minio.pid'), 'utf8')) as { pid: number };
    assert.notEqual(record.pid, process.pid);
  });

  it('fails fast, with the server log, when a server cannot start', async () => {
    await stackDown(config, { env });
    // MinIO refuses to start when its API port is already taken by the Temporal server's.
    const clash = { ...env, CODA_S3_ENDPOINT: `http://${config.temporal.address}` };
    const broken = loadConfig(REPO_CONFIG, clash);
    const started = Date.now();
    await assert.rejects(stackUp(broken, { env: clash, headless: true }), (err: Error) => {
      assert.match(err.message, /^minio exited during start-up/);
      assert.match(err.message, /last lines of .*minio\.log/);
      return true;
    });
    assert.ok(Date.now() - started < 50_000, 'did not wait for the full start timeout');
    await stackDown(broken, { env: clash });
  });
});
