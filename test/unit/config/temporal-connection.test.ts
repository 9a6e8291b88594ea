import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { parseConfig, type Env } from '../../../config/load';
import { temporalConnectionOptions } from '../../../config/temporal-connection';
import { ValidationError } from '../../../core/validation';
import { REPO_CONFIG } from '../../../infra/ephemeral';

/** PEM-shaped text: the options are built without parsing certificates (the SDKs do that). */
const pem = (label: string, body: string) => `-----BEGIN ${label}-----\n${Buffer.from(body).toString('base64')}\n-----END ${label}-----\n`;
const CA = pem('CERTIFICATE', 'the lab CA');
const CERT = pem('CERTIFICATE', 'the worker certificate');
const KEY = pem('PRIVATE KEY', 'the worker key');

describe('temporal.tls and temporal.apiKeyEnv: connection options from temporal.yaml', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'coda-tls-config-'));
    writeFileSync(path.join(dir, 'ca.pem'), CA);
    writeFileSync(path.join(dir, 'worker.pem'), CERT);
    writeFileSync(path.join(dir, 'worker.key'), KEY);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** The repo's temporal.yaml, its `temporal` section changed, as if written in `dir`. */
  const load = (temporal: Record<string, unknown>, env: Env = {}) => {
    const doc = parse(readFileSync(REPO_CONFIG, 'utf8')) as { temporal: Record<string, unknown> };
    Object.assign(doc.temporal, temporal);
    return parseConfig(stringify(doc), path.join(dir, 'temporal.yaml'), env);
  };
  const problemsOf = (temporal: Record<string, unknown>): string[] => {
    try {
      load(temporal);
    } catch (err) {
      assert.ok(err instanceof ValidationError, String(err));
      return err.problems;
    }
    assert.fail('expected the file to be rejected');
  };
  const optionsError = (temporal: Record<string, unknown>, env: Env = {}): string => {
    const config = load(temporal, env);
    try {
      temporalConnectionOptions(config, env);
    } catch (err) {
      assert.ok(err instanceof ValidationError, String(err));
      return err.problems.join('\n');
    }
    assert.fail('expected the options to be refused');
  };

  it('plain gRPC when neither is set (the dev server)', () => {
    assert.deepEqual(temporalConnectionOptions(load({}), {}), { address: '127.0.0.1:7233' });
  });

  it('reads PEM files relative to temporal.yaml and PEM text from the variables named, with the server name override', () => {
    const options = temporalConnectionOptions(
      load({ tls: { serverCa: { path: 'ca.pem' }, clientCert: { path: path.join(dir, 'worker.pem') }, clientKey: { env: 'LAB_TEMPORAL_KEY' }, serverName: 'temporal.lab.internal' } }),
      { LAB_TEMPORAL_KEY: KEY },
    );
    assert.deepEqual(
      { address: options.address, ca: options.tls?.serverRootCACertificate?.toString(), crt: options.tls?.clientCertPair?.crt.toString(), key: options.tls?.clientCertPair?.key.toString(), name: options.tls?.serverNameOverride, apiKey: options.apiKey },
      { address: '127.0.0.1:7233', ca: CA, crt: CERT, key: KEY, name: 'temporal.lab.internal', apiKey: undefined },
    );
  });

  it('an API key comes from its variable and implies TLS on the system roots (Temporal Cloud)', () => {
    assert.deepEqual(temporalConnectionOptions(load({ apiKeyEnv: 'TEMPORAL_CLOUD_KEY' }), { TEMPORAL_CLOUD_KEY: 'abc.def' }), { address: '127.0.0.1:7233', tls: {}, apiKey: 'abc.def' });
    assert.deepEqual(temporalConnectionOptions(load({ tls: {} }), {}), { address: '127.0.0.1:7233', tls: {} });
  });

  it('refuses, naming the field: half a pair, both sources, a secret where a name belongs', () => {
    assert.deepEqual(problemsOf({ tls: { clientCert: { path: 'worker.pem' } } }), ['temporal.tls.clientKey: clientCert and clientKey go together (mTLS needs both)']);
    assert.deepEqual(problemsOf({ tls: { clientKey: { env: 'K' } } }), ['temporal.tls.clientCert: clientCert and clientKey go together (mTLS needs both)']);
    assert.deepEqual(problemsOf({ tls: { serverCa: { path: 'ca.pem', env: 'CA' } } }), [
      'temporal.tls.serverCa: expected either `path` (a PEM file) or `env` (the NAME of a variable holding the PEM), not both',
    ]);
    assert.deepEqual(problemsOf({ tls: { serverCa: {} } }), ['temporal.tls.serverCa: expected either `path` (a PEM file) or `env` (the NAME of a variable holding the PEM), not both']);
    const [secret] = problemsOf({ tls: { serverCa: { env: CA } } });
    assert.match(secret ?? '', /^temporal\.tls\.serverCa\.env: expected the NAME of an environment variable/);
    const [key] = problemsOf({ apiKeyEnv: 'sk-live-123' });
    assert.match(key ?? '', /^temporal\.apiKeyEnv: expected the NAME of an environment variable/);
    assert.deepEqual(problemsOf({ tls: { caFile: 'ca.pem' } }), ['temporal.tls: Unrecognized key: "caFile"']);
  });

  it('refuses, naming the field: a missing file, an unset variable, a key where a certificate belongs', () => {
    assert.equal(optionsError({ tls: { serverCa: { path: 'nope.pem' } } }), `temporal.tls.serverCa.path: cannot read ${path.join(dir, 'nope.pem')}: ENOENT`);
    assert.equal(optionsError({ tls: { clientCert: { path: 'worker.pem' }, clientKey: { env: 'LAB_TEMPORAL_KEY' } } }), 'temporal.tls.clientKey.env: environment variable LAB_TEMPORAL_KEY is not set');
    assert.equal(optionsError({ apiKeyEnv: 'TEMPORAL_CLOUD_KEY' }), 'temporal.apiKeyEnv: environment variable TEMPORAL_CLOUD_KEY is not set');
    assert.equal(
      optionsError({ tls: { clientCert: { path: 'worker.key' }, clientKey: { path: 'worker.pem' } } }),
      'temporal.tls.clientCert.path (worker.key): expected a PEM certificate (-----BEGIN ...CERTIFICATE-----)',
    );
    assert.equal(
      optionsError({ tls: { clientCert: { path: 'worker.pem' }, clientKey: { env: 'LAB_TEMPORAL_KEY' } } }, { LAB_TEMPORAL_KEY: CERT }),
      'temporal.tls.clientKey.env (LAB_TEMPORAL_KEY): expected a PEM private key (-----BEGIN ...PRIVATE KEY-----)',
    );
  });
});
