import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { stringifyPythonJson } from '../core/python-json';

/**
 * What the TEST DOUBLES of the apps' in-VM servers share: a Flask-like HTTP server on 127.0.0.1
 * that is not listening until the app is launched (as in the VM, where the app's server starts
 * with the app), closes each connection after its response, writes JSON as Python's json does (NaN,
 * Infinity), answers an uncaught error with a 500 HTML page (Flask without debug), and can be
 * told to fail its next requests with a status or to hang (accept and never answer).
 */

export interface DoubleRequest {
  readonly method: string;
  readonly path: string;
  readonly body: string;
}

export type DoubleFault = { readonly kind: 'status'; readonly status: number } | { readonly kind: 'hang' };

/** An error the view raised: Flask answers 500 with its generic page (400 for a body that is not JSON). */
export class ViewError extends Error {
  constructor(
    message: string,
    readonly status = 500,
  ) {
    super(message);
  }
}

export type Route = (request: DoubleRequest, url: URL) => { status?: number; type?: string; body: unknown } | undefined;

export interface AppServerDouble {
  /** The port the app serves on once launched (reserved by the test: the VM's appStatePort). */
  readonly port: number;
  readonly requests: DoubleRequest[];
  /** Whether the app runs (its server listens). */
  running(): boolean;
  /** Starts the app: its server listens on `port`. */
  launch(): Promise<void>;
  /** The app quits: connections are refused from now on. */
  quit(): Promise<void>;
  /** The next `times` requests fail so. */
  fail(fault: DoubleFault, times?: number): void;
}

const INTERNAL_ERROR_PAGE =
  '<!doctype html>\n<html lang=en>\n<title>500 Internal Server Error</title>\n<h1>Internal Server Error</h1>\n<p>The server encountered an internal error and was unable to complete your request. Either the server is overloaded or there is an error in the application.</p>\n';

const BAD_REQUEST_PAGE =
  '<!doctype html>\n<html lang=en>\n<title>400 Bad Request</title>\n<h1>Bad Request</h1>\n<p>The browser (or proxy) sent a request that this server could not understand.</p>\n';

const NOT_FOUND_PAGE =
  '<!doctype html>\n<html lang=en>\n<title>404 Not Found</title>\n<h1>Not Found</h1>\n<p>The requested URL was not found on the server. If you entered the URL manually please check your spelling and try again.</p>\n';

export function appServerDouble(port: number, route: Route): AppServerDouble {
  const requests: DoubleRequest[] = [];
  let server: Server | undefined;
  let fault: { fault: DoubleFault; left: number } | undefined;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://double');
    const request = { method: req.method ?? '', path: url.pathname, body: Buffer.concat(chunks).toString('utf8') };
    requests.push(request);
    if (fault !== undefined && fault.left > 0) {
      fault.left -= 1;
      if (fault.fault.kind === 'hang') return;
      return reply(res, fault.fault.status, 'text/html; charset=utf-8', INTERNAL_ERROR_PAGE);
    }
    let answer: ReturnType<Route>;
    try {
      answer = route(request, url);
    } catch (err) {
      if (!(err instanceof ViewError)) throw err;
      if (err.status === 400) return reply(res, 400, 'text/html; charset=utf-8', BAD_REQUEST_PAGE);
      return reply(res, 500, 'text/html; charset=utf-8', INTERNAL_ERROR_PAGE);
    }
    if (answer === undefined) return reply(res, 404, 'text/html; charset=utf-8', NOT_FOUND_PAGE);
    const json = typeof answer.body !== 'string';
    reply(res, answer.status ?? 200, answer.type ?? (json ? 'application/json' : 'text/html; charset=utf-8'), json ? `${stringifyPythonJson(answer.body)}\n` : (answer.body as string));
  }

  return {
    port,
    requests,
    running: () => server !== undefined,
    async launch() {
      if (server !== undefined) return;
      const started = createServer((req, res) => {
        void handle(req, res).catch((err: unknown) => reply(res, 500, 'text/plain', `double failed: ${String(err)}`));
      });
      await new Promise<void>((resolve, reject) => {
        started.once('error', reject);
        started.listen(port, '127.0.0.1', () => resolve());
      });
      if ((started.address() as AddressInfo).port !== port) throw new Error('the app double listens elsewhere');
      server = started;
    },
    async quit() {
      const stopping = server;
      server = undefined;
      if (stopping === undefined) return;
      stopping.closeAllConnections();
      await new Promise<void>((resolve) => stopping.close(() => resolve()));
    },
    fail(next, times = 1) {
      fault = { fault: next, left: times };
    },
  };
}

function reply(res: ServerResponse, status: number, type: string, body: string): void {
  if (res.headersSent) return;
  // Werkzeug's development server closes the connection after each response.
  res.writeHead(status, STATUS_CODES[status] ?? '', { 'content-type': type, 'content-length': Buffer.byteLength(body), connection: 'close' });
  res.end(body);
}

/** The JSON body of a request, or Flask's 400 for a body that is not JSON (`request.json`). */
export function jsonBody(request: DoubleRequest): unknown {
  try {
    return JSON.parse(request.body);
  } catch {
    throw new ViewError('Failed to decode JSON object', 400);
  }
}

/** Starts a test double's HTTP server on 127.0.0.1 (port 0: a free one) and returns its port. */
export async function listenLocally(server: Server, port = 0): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/** Answers a test double's request with `body` (its length set). */
export function send(res: ServerResponse, status: number, contentType: string, body: string | Buffer): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
