import { setTimeout as sleep } from 'node:timers/promises';
import type { z } from 'zod';
import { VmHttpError } from './vm-http-error';

/**
 * HTTP to the servers inside a VM (the OSWorld server on port 5000, the app's state server on
 * 8000): one request at a time, per-request timeouts, and retries only where sending twice cannot
 * change the VM.
 */

/** Statuses a proxy or an overloaded server gives for a moment. */
const TRANSIENT_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

export interface RetryPolicy {
  /** Per attempt, headers and body together. */
  readonly timeoutMs: number;
  /** Attempts after the first. */
  readonly retries: number;
  /** Pause before the first retry; doubled before each further one. */
  readonly backoffMs: number;
}

/** 30 s per attempt, then 3 retries 0.5, 1 and 2 s apart. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { timeoutMs: 30_000, retries: 3, backoffMs: 500 };

export interface VmRequest {
  readonly method: 'GET' | 'POST';
  /** Path with its query, e.g. `/read?path=%2Ftmp%2Fa`. */
  readonly path: string;
  readonly json?: unknown;
  /** A JSON body already written (numbers spelled as a task file has them), sent as is with the JSON content type. */
  readonly jsonText?: string;
  readonly text?: string;
  /** A multipart/form-data body (OSWorld's /setup/upload). */
  readonly form?: FormData;
  /**
   * Sending it twice leaves the VM as sending it once does (reads, queries, overwrites): such a
   * request is retried after timeouts, dropped connections and 502/503/504. Any other request is
   * retried only when it never reached the server.
   */
  readonly idempotent: boolean;
  /** Overrides the policy for this request (a long-running command, a quick probe). */
  readonly timeoutMs?: number;
  readonly retries?: number;
}

export interface VmResponse {
  readonly status: number;
  readonly contentType: string;
  readonly body: Buffer;
}

export interface VmHttp {
  readonly server: string;
  /** The 2xx response, or a VmHttpError after the allowed retries. */
  send(request: VmRequest): Promise<VmResponse>;
  text(request: VmRequest): Promise<string>;
  /**
   * Parses the JSON answer with `schema`; a mismatch is a `protocol` failure. `parse` reads the
   * text (JSON.parse; core/python-json.ts parsePythonJson for a dump written by Python's json).
   */
  json<S extends z.ZodType>(request: VmRequest, schema: S, parse?: (text: string) => unknown): Promise<z.output<S>>;
  /** Builds the `protocol` failure for an answer the caller found wrong. */
  protocolError(request: VmRequest, detail: string): VmHttpError;
}

const endpointOf = (request: VmRequest): string => `${request.method} ${request.path.split('?')[0]}`;

/** The request's body and content type as fetch sends them. */
function bodyOf(request: VmRequest): { headers: Record<string, string>; body?: string | FormData } {
  if (request.json !== undefined || request.jsonText !== undefined) return { headers: { 'content-type': 'application/json' }, body: request.jsonText ?? JSON.stringify(request.json) };
  if (request.text !== undefined) return { headers: { 'content-type': 'text/plain; charset=utf-8' }, body: request.text };
  return { headers: {}, ...(request.form === undefined ? {} : { body: request.form }) };
}

/** One try of a request: its 2xx answer, or a VmHttpError saying what went wrong. */
async function attempt(base: string, request: VmRequest, timeoutMs: number): Promise<VmResponse> {
  try {
    const response = await fetch(base + request.path, { method: request.method, ...bodyOf(request), signal: AbortSignal.timeout(timeoutMs) });
    const bytes = Buffer.from(await response.arrayBuffer());
    const contentType = response.headers.get('content-type') ?? '';
    if (response.status < 200 || response.status > 299) {
      const detail = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
      const said = excerpt(bytes, contentType);
      throw new VmHttpError(base, endpointOf(request), 'status', said ? `${detail}: ${said}` : detail, response.status);
    }
    return { status: response.status, contentType, body: bytes };
  } catch (err) {
    throw classify(err, base, endpointOf(request), timeoutMs);
  }
}

/** The answer's JSON read by `parse` and checked by `schema`; anything else is a `protocol` failure. */
function parseAnswer<S extends z.ZodType>(base: string, request: VmRequest, response: VmResponse, schema: S, parse: (text: string) => unknown): z.output<S> {
  let parsed: unknown;
  try {
    parsed = parse(response.body.toString('utf8'));
  } catch {
    throw new VmHttpError(base, endpointOf(request), 'protocol', `expected JSON, got ${JSON.stringify(excerpt(response.body, ''))}`);
  }
  const result = schema.safeParse(parsed);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new VmHttpError(base, endpointOf(request), 'protocol', `unexpected answer (${problems}): ${JSON.stringify(parsed).slice(0, 200)}`);
  }
  return result.data;
}

export function createVmHttp(server: string, policy: RetryPolicy): VmHttp {
  const base = server.replace(/\/+$/, '');

  /**
   * The request before this one, settled or not. The in-VM server is not safe to call in parallel:
   * overlapping screenshots share one file (and answer empty or cut-off PNGs) and one X
   * connection (measured: after a few rounds of four at once its screenshots hang for good).
   */
  let previous: Promise<unknown> = Promise.resolve();
  function inTurn<T>(work: () => Promise<T>): Promise<T> {
    const turn = previous.then(work, work);
    previous = turn.catch(() => undefined);
    return turn;
  }

  async function send(request: VmRequest): Promise<VmResponse> {
    const retries = request.retries ?? policy.retries;
    for (let tried = 0; ; tried++) {
      try {
        return await inTurn(() => attempt(base, request, request.timeoutMs ?? policy.timeoutMs));
      } catch (err) {
        if (!(err instanceof VmHttpError) || tried >= retries || !worthRetrying(err, request.idempotent)) throw err;
        await sleep(policy.backoffMs * 2 ** tried);
      }
    }
  }

  return {
    server: base,
    send,
    protocolError: (request, detail) => new VmHttpError(base, endpointOf(request), 'protocol', detail),
    text: async (request) => (await send(request)).body.toString('utf8'),
    json: async (request, schema, parse = JSON.parse) => parseAnswer(base, request, await send(request), schema, parse),
  };
}

function worthRetrying(err: VmHttpError, idempotent: boolean): boolean {
  if (err.undelivered) return true;
  if (!idempotent) return false;
  return err.failure === 'timeout' || err.failure === 'connection' || (err.status !== undefined && TRANSIENT_STATUSES.has(err.status));
}

/** Maps what fetch throws (undici's TypeError with a coded cause, the timeout's DOMException) to a VmHttpError. */
function classify(err: unknown, server: string, endpoint: string, timeoutMs: number): VmHttpError {
  if (err instanceof VmHttpError) return err;
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') {
    return new VmHttpError(server, endpoint, 'timeout', `no answer within ${timeoutMs} ms`);
  }
  const code = e.cause?.code;
  const reason = e.cause?.message ?? e.message ?? String(err);
  return new VmHttpError(server, endpoint, 'connection', code ? `${describeCode(code)} (${code})` : reason, undefined, code);
}

function describeCode(code: string): string {
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused: nothing listens there';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection dropped by the server';
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'could not connect in time';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host name does not resolve';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    default:
      return 'connection failed';
  }
}

/**
 * What an error answer said, in one line: Flask's JSON `message`/`error`; of an HTML page only
 * its error line. The in-VM server runs in debug mode, where a 500 is Werkzeug's debugger page:
 * its script holds the debugger's SECRET and its body the traceback, neither of which may reach
 * a log or a workflow's history.
 */
function excerpt(body: Buffer, contentType: string): string {
  const text = body.toString('utf8');
  if (contentType.includes('json')) {
    try {
      const parsed = JSON.parse(text) as { message?: unknown; error?: unknown };
      const said = parsed.message ?? parsed.error;
      if (typeof said === 'string') return oneLine(said);
    } catch {
      // not JSON after all: fall through to the plain text
    }
  }
  if (contentType.includes('html') || /^\s*<(!doctype|html)/i.test(text)) return pageError(text);
  return oneLine(text);
}

/**
 * The error line of an HTML page: a debugger page's title is the exception line plus
 * ` // Werkzeug Debugger`; Werkzeug's other error pages describe the error in their one <p>.
 * Anything else is named by its title alone.
 */
function pageError(page: string): string {
  const title = /<title>([\s\S]*?)<\/title>/i.exec(page)?.[1] ?? '';
  const exception = /^([\s\S]*?)\s*\/\/ Werkzeug Debugger\s*$/.exec(title)?.[1];
  if (exception !== undefined) return oneLine(htmlText(exception));
  const description = /<p>([\s\S]*?)<\/p>/i.exec(page)?.[1];
  return oneLine(htmlText(description ?? title));
}

/** Text of an HTML fragment: tags dropped, the entities Werkzeug escapes with decoded. */
function htmlText(html: string): string {
  return html
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#\d+|#x[\da-f]+|quot|amp|lt|gt|apos);/gi, (_, entity: string) => {
      const lower = entity.toLowerCase();
      if (lower.startsWith('#x')) return String.fromCodePoint(parseInt(lower.slice(2), 16));
      if (lower.startsWith('#')) return String.fromCodePoint(Number(lower.slice(1)));
      return { quot: '"', amp: '&', lt: '<', gt: '>', apos: "'" }[lower] as string;
    });
}

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim().slice(0, 300);
