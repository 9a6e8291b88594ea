import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createSecureServer, type Http2SecureServer, type ServerHttp2Session } from 'node:http2';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { NativeConnection } from '@temporalio/worker';
import { parse, stringify } from 'yaml';
import { loadConfig, type Env, type LoadedConfig } from '../../config/load';
import { connectTemporal, TemporalConnectError } from '../../config/temporal-connection';
import { connectClient, lazyClient } from '../../client/connection';
import { setupCluster } from '../../cli/setup-cluster';
import { toolPath } from '../../infra/tools';
import { ViewerError } from '../../viewer/errors';
import { ViewerSources } from '../../viewer/sources';
import type { BatchResult } from '../../workflows/rollout/batch';
import { startHarness, type Harness } from '../support/harness';
import { freePort, REPO_CONFIG, testStack, type TestStack } from '../stack';
import { makeTestPki, startHaproxy, startStunnel, type Terminator, type TestPki } from './tls-terminators';
import { batchWorkflowId } from '../../workflows/names';

const execFileAsync = promisify(execFile);
const CODA = path.resolve(__dirname, '..', '..', 'cli', 'coda.js');

describe('Temporal over TLS: mTLS through real terminators, API keys as Temporal Cloud expects them', function () {
  this.timeout(600_000);
  let stack: TestStack;
  let dir: string;
  let pki: TestPki;
  let stunnel: Terminator;
  let haproxy: Terminator;
  let written = 0;

  before(async () => {
    stack = await testStack();
    dir = mkdtempSync(path.join(tmpdir(), 'coda-tls-'));
    pki = await makeTestPki(dir);
    stunnel = await startStunnel(pki, stack.config.temporal.address);
    haproxy = await startHaproxy(pki, stack.config.temporal.address);
  });
  after(async () => {
    await stunnel?.stop();
    await haproxy?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  /** The repository's temporal.yaml with `temporal` changed, written beside the PKI so relative paths resolve there. */
  const configWith = (temporal: Record<string, unknown>, env: Env = stack.env): LoadedConfig => {
    const doc = parse(readFileSync(REPO_CONFIG, 'utf8')) as { temporal: Record<string, unknown> };
    Object.assign(doc.temporal, temporal);
    const file = path.join(dir, `temporal-${written++}.yaml`);
    writeFileSync(file, stringify(doc));
    return loadConfig(file, env);
  };
  const serverCa = { path: 'ca.pem' };
  const clientPair = { clientCert: { path: 'client.pem' }, clientKey: { path: 'client.key' } };

  const refusedFor = (pattern: RegExp) => (err: unknown) => {
    assert.ok(err instanceof TemporalConnectError, `a TemporalConnectError, got ${String(err)}`);
    assert.match(err.message, pattern);
    return true;
  };

  it('stunnel refuses a client without a client certificate, and the error says to set temporal.tls.clientCert', async () => {
    const config = configWith({ address: stunnel.address, tls: { serverCa, serverName: pki.serverName } });
    const noCert = /^cannot connect to Temporal at 127\.0\.0\.1:\d+ over TLS: the server demands a client certificate \(mTLS\) and none is configured: set temporal\.tls\.clientCert and temporal\.tls\.clientKey \(the SDK said: /;
    await assert.rejects(connectClient(config, stack.env), refusedFor(noCert));
    await assert.rejects(connectTemporal(config, NativeConnection, stack.env), refusedFor(noCert));
  });

  it('through stunnel with the certificate pair (key from an env var), the client reaches the namespace and cluster set-up runs; the worker SDK needs ALPN h2, which stunnel lacks', async () => {
    const key = readFileSync(pki.clientKey, 'utf8');
    const env = { ...stack.env, CODA_TEST_TEMPORAL_CLIENT_KEY: key };
    const config = configWith({ address: stunnel.address, tls: { serverCa, clientCert: { path: 'client.pem' }, clientKey: { env: 'CODA_TEST_TEMPORAL_CLIENT_KEY' }, serverName: pki.serverName } }, env);
    const client = await connectClient(config, env);
    try {
      const described = await client.workflowService.describeNamespace({ namespace: config.temporal.namespace });
      assert.equal(described.namespaceInfo?.name, stack.config.temporal.namespace);
    } finally {
      await client.connection.close();
    }
    assert.deepEqual(await setupCluster(configWith({ address: stunnel.address, tls: { serverCa, ...clientPair, serverName: pki.serverName } })), []);
    await assert.rejects(connectTemporal(config, NativeConnection, env), refusedFor(/over TLS: the TLS endpoint does not negotiate HTTP\/2 \(ALPN h2\)/));
  });

  it('the viewer reads Temporal through stunnel with the pair, and without it its 503 page names temporal.tls.clientCert', async () => {
    const withPair = configWith({ address: stunnel.address, tls: { serverCa, ...clientPair, serverName: pki.serverName } });
    const withoutPair = configWith({ address: stunnel.address, tls: { serverCa, serverName: pki.serverName } });
    const namespace = (config: LoadedConfig) => async () => {
      const client = lazyClient(config);
      try {
        const described = await new ViewerSources(config, stack.store, client, 20_000).temporal('the namespace', (c) => c.workflowService.describeNamespace({ namespace: config.temporal.namespace }));
        return described.namespaceInfo?.name;
      } finally {
        await client.connection.close();
      }
    };
    assert.equal(await namespace(withPair)(), stack.config.temporal.namespace);
    await assert.rejects(namespace(withoutPair)(), (err: unknown) => {
      assert.ok(err instanceof ViewerError, String(err));
      assert.equal(err.status, 503);
      assert.match(err.message, /^Temporal at 127\.0\.0\.1:\d+ \(namespace [^)]+\) did not answer: the server demands a client certificate \(mTLS\) and none is configured: set temporal\.tls\.clientCert and temporal\.tls\.clientKey\./);
      return true;
    });
  });

  it('a server certificate from another CA is refused, naming temporal.tls.serverCa; an API key alone implies TLS', async () => {
    const config = configWith({ address: haproxy.address, tls: { serverCa: { path: 'other-ca.pem' }, ...clientPair, serverName: pki.serverName } });
    await assert.rejects(connectClient(config, stack.env), refusedFor(/over TLS: the server's certificate is not signed by a CA this client trusts \([A-Z_]+\): set temporal\.tls\.serverCa/));
    const keyOnly = configWith({ address: haproxy.address, apiKeyEnv: 'CODA_TEST_TEMPORAL_API_KEY' }, { ...stack.env, CODA_TEST_TEMPORAL_API_KEY: 'k' });
    // No temporal.tls, yet TLS: the system's roots do not know the test CA.
    await assert.rejects(connectClient(keyOnly, { ...stack.env, CODA_TEST_TEMPORAL_API_KEY: 'k' }), refusedFor(/over TLS: the server's certificate is not signed by a CA this client trusts/));
  });

  describe('a rollout batch end to end, every connection through haproxy with the certificate pair', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness({
        name: 'tls',
        desktops: 1,
        displayFrom: 720,
        ownConnections: true,
        edit: (doc) => {
          doc.temporal.address = haproxy.address;
          doc.temporal.tls = { serverCa: { path: pki.ca }, clientCert: { path: pki.clientCert }, clientKey: { path: pki.clientKey }, serverName: pki.serverName };
        },
      });
      await h.startVmHost();
    });
    after(async () => h?.stop());

    it('orchestrator and vm-host workers, the client, coda and the temporal CLI all go through the terminator', async () => {
      assert.equal(h.config.temporal.address, haproxy.address);
      const run = `tls${Date.now()}`;
      const workflowId = batchWorkflowId(run, 'KAlgebra');
      const result = (await h.execute('rolloutBatch', workflowId, { run, stage: 'evaluation', software: 'KAlgebra', attempts: 1, taskIds: ['C-03'] })) as BatchResult;
      assert.deepEqual({ total: result.total, completed: result.completed, passed: result.passed, errors: result.errors }, { total: 1, completed: 1, passed: 1, errors: 0 });

      // The CLI reads the same settings from its TEMPORAL_* variables (docs/temporal-security.md).
      const cliEnv = {
        ...process.env,
        TEMPORAL_ADDRESS: haproxy.address,
        TEMPORAL_NAMESPACE: h.config.temporal.namespace,
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.ca,
        TEMPORAL_TLS_SERVER_NAME: pki.serverName,
      };
      const describe = (env: NodeJS.ProcessEnv) => execFileAsync(toolPath('temporal'), ['workflow', 'describe', '--workflow-id', workflowId, '-o', 'json'], { env });
      const described = JSON.parse((await describe({ ...cliEnv, TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCert, TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKey })).stdout) as { workflowExecutionInfo: { status: string } };
      assert.equal(described.workflowExecutionInfo.status, 'WORKFLOW_EXECUTION_STATUS_COMPLETED');
      await assert.rejects(describe(cliEnv), /certificate required|tls|handshake/i);

      // The project's own CLI reads temporal.tls from the file CODA_CONFIG names.
      const coda = (env: NodeJS.ProcessEnv) => execFileAsync(process.execPath, [CODA, 'progress', workflowId], { env, timeout: 120_000 });
      const progress = JSON.parse((await coda(h.env)).stdout) as { run: string; completed: number };
      assert.deepEqual({ run: progress.run, completed: progress.completed }, { run, completed: 1 });
      const withoutPair = configWith({ address: haproxy.address, tls: { serverCa, serverName: pki.serverName } });
      await assert.rejects(coda({ ...h.env, CODA_CONFIG: withoutPair.file }), (err: { code?: number; stderr?: string }) => {
        assert.equal(err.code, 1);
        assert.match(err.stderr ?? '', /^cannot connect to Temporal at 127\.0\.0\.1:\d+ over TLS: the server demands a client certificate \(mTLS\) and none is configured: set temporal\.tls\.clientCert/m);
        return true;
      });
    });
  });

  describe('API key', () => {
    /** A TLS HTTP/2 endpoint standing where Temporal Cloud would: it records what each call carries and refuses it as Cloud refuses a bad key. */
    let server: Http2SecureServer;
    let address: string;
    const sessions = new Set<ServerHttp2Session>();
    const seen: Array<{ path: string; authorization: string | undefined; encrypted: boolean; alpn: string | false | undefined }> = [];
    before(async () => {
      server = createSecureServer({ cert: readFileSync(pki.serverCert), key: readFileSync(pki.serverKey), ALPNProtocols: ['h2'] });
      // A connection whose connect failed keeps its channel open; the endpoint ends them itself.
      server.on('session', (session) => sessions.add(session));
      server.on('stream', (stream, headers) => {
        const authorization = headers.authorization;
        seen.push({ path: String(headers[':path']), authorization: Array.isArray(authorization) ? authorization.join(',') : authorization, encrypted: stream.session?.encrypted === true, alpn: stream.session?.alpnProtocol });
        stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '16', 'grpc-message': 'Request unauthorized.' }, { endStream: true });
      });
      const port = await freePort();
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
      address = `127.0.0.1:${port}`;
    });
    after(async () => {
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve) => server?.close(() => resolve()));
    });

    for (const [sdk, connect] of [
      ['client', (config: LoadedConfig, env: Env) => connectClient(config, env)],
      ['worker', (config: LoadedConfig, env: Env) => connectTemporal(config, NativeConnection, env)],
    ] as const) {
      it(`the ${sdk} SDK sends it as "authorization: Bearer <key>" over TLS (h2), and a refusal names temporal.apiKeyEnv`, async () => {
        const key = `coda-test-key-${sdk}-${Date.now()}`;
        const env = { ...stack.env, CODA_TEST_TEMPORAL_API_KEY: key };
        const config = configWith({ address, tls: { serverCa, serverName: pki.serverName }, apiKeyEnv: 'CODA_TEST_TEMPORAL_API_KEY' }, env);
        seen.length = 0;
        await assert.rejects(connect(config, env), refusedFor(/over TLS: the server refused the API key in CODA_TEST_TEMPORAL_API_KEY \(temporal\.apiKeyEnv\)/));
        assert.ok(seen.length > 0, 'the endpoint saw a call');
        for (const call of seen) {
          assert.match(call.path, /^\/temporal\.api\.workflowservice\.v1\.WorkflowService\//);
          assert.deepEqual({ authorization: call.authorization, encrypted: call.encrypted, alpn: call.alpn }, { authorization: `Bearer ${key}`, encrypted: true, alpn: 'h2' });
        }
      });
    }

    it('an unset API key variable is named before anything is sent', async () => {
      const config = configWith({ address, tls: { serverCa }, apiKeyEnv: 'CODA_TEST_TEMPORAL_API_KEY' });
      seen.length = 0;
      await assert.rejects(connectClient(config, stack.env), /temporal\.apiKeyEnv: environment variable CODA_TEST_TEMPORAL_API_KEY is not set/);
      assert.equal(seen.length, 0);
    });
  });
});
