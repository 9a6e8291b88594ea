import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions as TlsSocketOptions } from 'node:tls';
import { ValidationError } from '../core/validation';
import { configRelative, secretFromEnv, type Env, type LoadedConfig } from './load';
import type { PemSource } from './schema';

/**
 * The one way this project reaches Temporal: temporal.yaml's `temporal` section (address, tls,
 * apiKeyEnv) turned into the options that both @temporalio/client's Connection and
 * @temporalio/worker's NativeConnection take. Every client, worker, CLI command, the viewer,
 * schedules and cluster set-up connect through here.
 */
export interface TemporalConnectionOptions {
  readonly address: string;
  readonly tls?: {
    readonly serverRootCACertificate?: Buffer;
    readonly clientCertPair?: { readonly crt: Buffer; readonly key: Buffer };
    readonly serverNameOverride?: string;
  };
  /** Sent by the SDK as `authorization: Bearer <key>` on every call (what Temporal Cloud expects). */
  readonly apiKey?: string;
}

/** The connection options temporal.yaml describes; reads the PEM files and variables it names. */
export function temporalConnectionOptions(config: LoadedConfig, env: Env = process.env): TemporalConnectionOptions {
  const { address, tls, apiKeyEnv } = config.temporal;
  const apiKey = apiKeyEnv === undefined ? undefined : secretFromEnv(apiKeyEnv, 'temporal.apiKeyEnv', env);
  // An API key travels only over TLS: Temporal Cloud refuses it in the clear, and so should we.
  if (tls === undefined && apiKey === undefined) return { address };
  const pem = (source: PemSource | undefined, field: string, kind: PemKind) => (source === undefined ? undefined : readPem(config, source, `temporal.tls.${field}`, kind, env));
  const crt = pem(tls?.clientCert, 'clientCert', 'CERTIFICATE');
  const key = pem(tls?.clientKey, 'clientKey', 'PRIVATE KEY');
  const serverRootCACertificate = pem(tls?.serverCa, 'serverCa', 'CERTIFICATE');
  return {
    address,
    tls: {
      ...(serverRootCACertificate === undefined ? {} : { serverRootCACertificate }),
      ...(crt === undefined || key === undefined ? {} : { clientCertPair: { crt, key } }),
      ...(tls?.serverName === undefined ? {} : { serverNameOverride: tls.serverName }),
    },
    ...(apiKey === undefined ? {} : { apiKey }),
  };
}

/** A Temporal connection can be opened from these options (Connection and NativeConnection both). */
export interface TemporalConnector<C> {
  connect(options: TemporalConnectionOptions): Promise<C>;
}

/**
 * Opens a connection (`connectTemporal(config, Connection)` for clients,
 * `connectTemporal(config, NativeConnection)` for workers). A failure throws a
 * TemporalConnectError that says why in temporal.yaml's words (which field to set) where TLS
 * is the reason.
 */
export async function connectTemporal<C>(config: LoadedConfig, kind: TemporalConnector<C>, env: Env = process.env): Promise<C> {
  const options = temporalConnectionOptions(config, env);
  try {
    return await kind.connect(options);
  } catch (err) {
    throw await explainConnectFailure(config, options, err);
  }
}

/** Temporal could not be reached with the configured connection; the message names the field to change. */
export class TemporalConnectError extends Error {
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = 'TemporalConnectError';
  }
}

type PemKind = 'CERTIFICATE' | 'PRIVATE KEY';

function readPem(config: LoadedConfig, source: PemSource, field: string, kind: PemKind, env: Env): Buffer {
  let text: string;
  if (source.env !== undefined) {
    text = secretFromEnv(source.env, `${field}.env`, env);
  } else {
    const file = configRelative(config, source.path!);
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new ValidationError(config.file, [`${field}.path: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`]);
    }
  }
  // A certificate where a key belongs (or the reverse) is the commonest mix-up: say so here, not as an SDK parse error.
  if (!new RegExp(`-----BEGIN [A-Z ]*${kind}-----`).test(text)) {
    const where = source.env !== undefined ? `${field}.env (${source.env})` : `${field}.path (${source.path})`;
    throw new ValidationError(config.file, [`${where}: expected a PEM ${kind.toLowerCase()} (-----BEGIN ...${kind}-----)`]);
  }
  return Buffer.from(text);
}

async function explainConnectFailure(config: LoadedConfig, options: TemporalConnectionOptions, err: unknown): Promise<Error> {
  const said = sdkSaid(err);
  const over = options.tls === undefined ? '' : ' over TLS';
  const why = await trouble(config, options, said);
  const message = why === undefined ? `cannot connect to Temporal at ${options.address}${over}: ${said}` : `cannot connect to Temporal at ${options.address}${over}: ${why} (the SDK said: ${said})`;
  return new TemporalConnectError(message, { cause: err });
}

/**
 * Why a Temporal call failed, in temporal.yaml's words, when TLS or the API key is the reason;
 * undefined when they are not. For connections that fail after they were made (the viewer's lazy one).
 */
export function temporalTrouble(config: LoadedConfig, err: unknown, env: Env = process.env): Promise<string | undefined> {
  return trouble(config, temporalConnectionOptions(config, env), sdkSaid(err));
}

async function trouble(config: LoadedConfig, options: TemporalConnectionOptions, said: string): Promise<string | undefined> {
  if (options.tls === undefined) return undefined;
  const probed = await probeTls(options);
  // @temporalio/client does without ALPN: blame it only where the SDK did (tonic, grpc-go).
  if (probed === undefined || (probed === NO_H2 && !/H2NotNegotiated|ALPN/i.test(said))) return refusedKey(config, said);
  return probed;
}

/** The error's first line and its causes' (@temporalio/client hides the gRPC status in the cause). */
function sdkSaid(err: unknown): string {
  const lines: string[] = [];
  for (let e: unknown = err; e !== undefined && lines.length < 4; e = e instanceof Error ? e.cause : undefined) {
    lines.push((e instanceof Error ? e.message : String(e)).split('\n')[0]!);
  }
  return lines.join(': ');
}

function refusedKey(config: LoadedConfig, said: string): string | undefined {
  const env = config.temporal.apiKeyEnv;
  if (env === undefined || !/unauthenticated|permission.?denied|authentication credentials/i.test(said)) return undefined;
  return `the server refused the API key in ${env} (temporal.apiKeyEnv)`;
}

const UNTRUSTED = new Set(['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT', 'CERT_UNTRUSTED']);

/**
 * A TLS handshake of our own with the same certificates, for the reason the SDKs do not give
 * (@temporalio/client only says "Failed to connect before the deadline"). Undefined when TLS
 * itself is fine. With TLS 1.3 a refused client certificate arrives as an alert after the
 * handshake, so the probe then opens HTTP/2 (its preface and SETTINGS frame) and waits for the
 * server's answer: SETTINGS back means accepted, the alert means refused.
 */
function probeTls(options: TemporalConnectionOptions): Promise<string | undefined> {
  const tls = options.tls!;
  const host = options.address.slice(0, options.address.lastIndexOf(':'));
  const name = tls.serverNameOverride ?? host;
  const socketOptions: TlsSocketOptions = {
    host,
    port: Number(options.address.slice(options.address.lastIndexOf(':') + 1)),
    ALPNProtocols: ['h2'],
    ...(isIP(name) ? {} : { servername: name }),
    ...(tls.serverRootCACertificate === undefined ? {} : { ca: tls.serverRootCACertificate }),
    ...(tls.clientCertPair === undefined ? {} : { cert: tls.clientCertPair.crt, key: tls.clientCertPair.key }),
  };
  return new Promise((resolve) => {
    let handshaken = false;
    const done = (verdict: string | undefined) => {
      socket.destroy();
      resolve(verdict);
    };
    const socket = tlsConnect(socketOptions, () => {
      handshaken = true;
      socket.write(H2_PREFACE);
    });
    socket.once('data', () => done(socket.alpnProtocol === 'h2' ? undefined : NO_H2));
    socket.once('end', () => done(tls.clientCertPair === undefined ? CLOSED_WITHOUT_CERT : 'the server closed the TLS connection without a word'));
    socket.setTimeout(10_000, () => done(handshaken ? undefined : 'the TLS handshake did not finish in 10 s'));
    socket.once('error', (err: NodeJS.ErrnoException & { reason?: string }) => done(tlsReason(err, tls.clientCertPair !== undefined, name)));
  });
}

/** HTTP/2's client connection preface followed by an empty SETTINGS frame (RFC 9113 §3.4). */
const H2_PREFACE = Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]);

const CLOSED_WITHOUT_CERT = 'the server closed the TLS connection, as servers that demand a client certificate do: set temporal.tls.clientCert and temporal.tls.clientKey if it is one';

const NO_H2 =
  'the TLS endpoint does not negotiate HTTP/2 (ALPN h2), which the worker SDK and the temporal CLI require: configure the terminator to offer h2 (haproxy `alpn h2`, nginx, envoy; stunnel cannot)';

function tlsReason(err: NodeJS.ErrnoException & { reason?: string }, withCert: boolean, name: string): string {
  const code = err.code ?? '';
  if (code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENOTFOUND') return `nothing answers there (${code})`;
  if (UNTRUSTED.has(code)) return `the server's certificate is not signed by a CA this client trusts (${code}): set temporal.tls.serverCa to the CA that signed it`;
  if (code === 'CERT_HAS_EXPIRED') return "the server's certificate has expired";
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `the server's certificate is not for ${name} (${err.reason ?? code}): set temporal.tls.serverName to a name it carries`;
  if (/WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG/.test(code) || /wrong version number/.test(err.message)) return 'the server does not speak TLS there: remove temporal.tls (or use its TLS port)';
  if (/CERTIFICATE_REQUIRED|HANDSHAKE_FAILURE/.test(code) && !withCert) {
    return 'the server demands a client certificate (mTLS) and none is configured: set temporal.tls.clientCert and temporal.tls.clientKey';
  }
  if (/ALERT/.test(code) && withCert) return `the server refused the client certificate of temporal.tls.clientCert (${code}): is it signed by a CA the server trusts, and not expired?`;
  if (code === 'ECONNRESET' && !withCert) return CLOSED_WITHOUT_CERT;
  return `TLS failed: ${code || err.message}`;
}
