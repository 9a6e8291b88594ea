import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { startDaemon, stopDaemon, waitUntilHealthy } from '../../infra/daemon';
import { freePort } from '../stack';

/**
 * Real TLS terminators in front of the test stack's Temporal dev server (which speaks plain
 * gRPC), as a lab puts one in front of a cluster: Debian's stunnel4 and haproxy, both demanding
 * a client certificate signed by a throwaway CA that Debian's openssl makes for the test.
 */

const run = promisify(execFile);

/** A throwaway PKI: a CA, a server certificate for `temporal.test`, a client certificate, and a CA nobody uses. */
export interface TestPki {
  readonly dir: string;
  readonly ca: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly clientCert: string;
  readonly clientKey: string;
  /** A CA that signed nothing the servers present: trusting only it must fail. */
  readonly otherCa: string;
  /** The name in the server certificate (not the address the tests dial, 127.0.0.1). */
  readonly serverName: string;
}

export async function makeTestPki(dir: string): Promise<TestPki> {
  const at = (name: string) => path.join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const ca = async (name: string) => run('openssl', ['req', '-x509', ...ec, '-keyout', at(`${name}.key`), '-out', at(`${name}.pem`), '-days', '2', '-subj', `/CN=${name}`]);
  const leaf = async (name: string, subject: string, extensions: string) => {
    await run('openssl', ['req', ...ec, '-keyout', at(`${name}.key`), '-out', at(`${name}.csr`), '-subj', `/CN=${subject}`]);
    writeFileSync(at(`${name}.ext`), extensions);
    await run('openssl', ['x509', '-req', '-in', at(`${name}.csr`), '-CA', at('ca.pem'), '-CAkey', at('ca.key'), '-CAcreateserial', '-out', at(`${name}.pem`), '-days', '2', '-extfile', at(`${name}.ext`)]);
  };
  await ca('ca');
  await ca('other-ca');
  await leaf('server', 'temporal.test', 'subjectAltName=DNS:temporal.test\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n');
  await leaf('client', 'coda-worker', 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=clientAuth\n');
  return {
    dir,
    ca: at('ca.pem'),
    serverCert: at('server.pem'),
    serverKey: at('server.key'),
    clientCert: at('client.pem'),
    clientKey: at('client.key'),
    otherCa: at('other-ca.pem'),
    serverName: 'temporal.test',
  };
}

export interface Terminator {
  /** host:port the clients dial. */
  readonly address: string;
  stop(): Promise<void>;
}

const listening = (port: number) => (): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = netConnect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

async function startTerminator(pki: TestPki, name: string, command: string, args: (conf: string) => string[], conf: (port: number) => string): Promise<Terminator> {
  const port = await freePort();
  const file = path.join(pki.dir, `${name}.conf`);
  writeFileSync(file, conf(port));
  startDaemon(pki.dir, { name, command, args: args(file) });
  await waitUntilHealthy(pki.dir, name, listening(port), 30_000);
  return { address: `127.0.0.1:${port}`, stop: async () => void (await stopDaemon(pki.dir, name)) };
}

/** stunnel4 with `requireCert`: no client certificate signed by the CA, no connection. It offers no ALPN. */
export function startStunnel(pki: TestPki, target: string): Promise<Terminator> {
  return startTerminator(pki, 'stunnel', 'stunnel4', (conf) => [conf], (port) => [
    'foreground = yes',
    'pid =',
    '[temporal]',
    `accept = 127.0.0.1:${port}`,
    `connect = ${target}`,
    `cert = ${pki.serverCert}`,
    `key = ${pki.serverKey}`,
    `CAfile = ${pki.ca}`,
    'verifyChain = yes',
    'requireCert = yes',
    '',
  ].join('\n'));
}

/** haproxy terminating TLS in TCP mode with `verify required` and ALPN h2, as gRPC clients built on tonic and grpc-go require. */
export function startHaproxy(pki: TestPki, target: string): Promise<Terminator> {
  const bundle = path.join(pki.dir, 'server-bundle.pem');
  return startTerminator(pki, 'haproxy', 'haproxy', (conf) => ['-db', '-f', conf], (port) => {
    // haproxy wants the certificate and its key in one file.
    writeFileSync(bundle, readFileSync(pki.serverCert, 'utf8') + readFileSync(pki.serverKey, 'utf8'));
    return [
      'defaults',
      '  mode tcp',
      '  timeout connect 5s',
      '  timeout client 1h',
      '  timeout server 1h',
      'frontend temporal',
      `  bind 127.0.0.1:${port} ssl crt ${bundle} ca-file ${pki.ca} verify required alpn h2`,
      '  default_backend dev',
      'backend dev',
      `  server dev ${target}`,
      '',
    ].join('\n');
  });
}
