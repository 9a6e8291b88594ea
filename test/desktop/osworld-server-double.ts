import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readBody } from '../../doubles/openai-server';
import { listenLocally, send } from './helpers';
import sharp from 'sharp';

/**
 * TEST DOUBLE of the OSWorld in-VM server as ScienceBoard's VMs run it (vm_config/server.py):
 * same routes, request shapes, status codes and quirks (the 500 of /cursor_position, Flask's
 * HTML 500 for a missing /read file or an unreachable ChimeraX). Commands really run on this
 * machine (execFile, no shell unless `shell` is true, 120 s limit) unless a test answers them
 * itself; /tex/check really runs pdflatex (and bibtex, pdflatex twice) in the folder, as the
 * server does; /chimerax/run answers what a test's stand-in ChimeraX says; /screenshot is a real
 * PNG drawn here. Faults can be injected per route. Listens on 127.0.0.1 only.
 */

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly body: string;
}

export interface ExecuteAnswer {
  readonly output: string;
  readonly error: string;
  readonly returncode: number;
}

/** What a route does instead of its job, for the next `times` requests. */
export type Fault =
  | { readonly kind: 'status'; readonly status: number; readonly body?: string; readonly contentType?: string }
  /** Accepts the request and never answers. */
  | { readonly kind: 'hang' }
  /** Closes the connection without an answer. */
  | { readonly kind: 'drop' };

export interface OsworldServerDoubleOptions {
  readonly screen?: { readonly width: number; readonly height: number };
  /** Listen here instead of a free port (to come up where a client already knocks). */
  readonly port?: number;
  /** Answers /execute itself for the commands it returns an answer for (e.g. pyautogui, absent here). */
  readonly execute?: (command: unknown, shell: boolean) => ExecuteAnswer | undefined;
  /**
   * TEST DOUBLE of ChimeraX's REST server (absent here): its JSON answer to a command, e.g.
   * `{ error: null }`. Without it, /chimerax/run fails as the server does when nothing listens.
   */
  readonly chimerax?: (command: string, port: unknown) => Record<string, unknown>;
}

export interface OsworldServerDouble {
  readonly url: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  /** Bodies of /execute requests, parsed. */
  readonly executed: Array<{ command: unknown; shell: unknown }>;
  fault(path: string, fault: Fault, times?: number): void;
  close(): Promise<void>;
}

const FLASK_500 =
  '<!doctype html>\n<html lang=en>\n<title>500 Internal Server Error</title>\n<h1>Internal Server Error</h1>\n' +
  '<p>The server encountered an internal error and was unable to complete your request. Either the server is overloaded or there is an error in the application.</p>\n';

export async function startOsworldServerDouble(options: OsworldServerDoubleOptions = {}): Promise<OsworldServerDouble> {
  const screen = options.screen ?? { width: 1280, height: 800 };
  const requests: RecordedRequest[] = [];
  const executed: Array<{ command: unknown; shell: unknown }> = [];
  const faults = new Map<string, { fault: Fault; left: number }>();
  const launched: ChildProcess[] = [];
  const screenshot = await drawScreen(screen.width, screen.height);

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => send(res, 500, 'text/plain', `double failed: ${String(err)}`));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://double');
    requests.push({ method: req.method ?? '', path: url.pathname + url.search, body });

    const injected = faults.get(url.pathname);
    if (injected && injected.left > 0) {
      injected.left -= 1;
      const { fault } = injected;
      if (fault.kind === 'hang') return;
      if (fault.kind === 'drop') {
        req.socket.destroy();
        return;
      }
      return send(res, fault.status, fault.contentType ?? 'text/html; charset=utf-8', fault.body ?? FLASK_500);
    }

    const route = `${req.method} ${url.pathname}`;
    switch (route) {
      case 'GET /platform':
        return send(res, 200, 'text/html; charset=utf-8', 'Linux');
      case 'GET /screenshot':
        return send(res, 200, 'image/png', screenshot);
      case 'POST /screen_size':
        return sendJson(res, 200, { width: screen.width, height: screen.height });
      case 'GET /accessibility':
        return sendJson(res, 200, {
          AT: '<desktop-frame xmlns:st="https://accessibility.ubuntu.example.org/ns/state"><application name="double"/></desktop-frame>',
        });
      case 'GET /cursor_position':
        // The released server returns a bare tuple, which Flask cannot serialise (OSWorld #117).
        return send(res, 500, 'text/html; charset=utf-8', FLASK_500);
      case 'POST /execute':
      case 'POST /setup/execute': {
        const { command, shell } = parseJson(body);
        executed.push({ command, shell });
        const answer = options.execute?.(command, shell === true) ?? (await run(command, shell === true));
        if ('message' in answer) return sendJson(res, 500, { status: 'error', message: answer.message });
        return sendJson(res, 200, { status: 'success', ...answer });
      }
      case 'POST /setup/launch': {
        const { command, shell } = parseJson(body);
        const argv = toArgv(command, shell === true);
        try {
          const child = spawn(argv[0] ?? '', argv.slice(1), { stdio: 'ignore' });
          child.on('error', () => undefined);
          launched.push(child);
        } catch (err) {
          return sendJson(res, 500, { status: 'error', message: String(err) });
        }
        return send(res, 200, 'text/html; charset=utf-8', `${shell === true ? String(command) : argv.join(' ')} launched successfully`);
      }
      case 'POST /chimerax/run': {
        const { command, port } = parseJson(body);
        if (options.chimerax === undefined) return send(res, 500, 'text/html; charset=utf-8', FLASK_500);
        return sendJson(res, 200, options.chimerax(String(command ?? ''), port ?? 8000));
      }
      case 'POST /tex/check': {
        const { path, file, bibtex } = parseJson(body);
        const runs = [['pdflatex', `${String(file ?? 'main')}.tex`]];
        if (bibtex === true) runs.push(['bibtex', String(file ?? 'main')], runs[0]!, runs[0]!);
        for (const argv of runs) {
          const answer = await run(argv, false, String(path ?? '/home/user'));
          if ('message' in answer || answer.returncode !== 0) return sendJson(res, 200, { pass: false });
        }
        return sendJson(res, 200, { pass: true });
      }
      case 'GET /read': {
        try {
          return send(res, 200, 'text/html; charset=utf-8', await readFile(url.searchParams.get('path') ?? '/dev/null', 'utf8'));
        } catch {
          return send(res, 500, 'text/html; charset=utf-8', FLASK_500);
        }
      }
      case 'POST /write':
      case 'POST /append': {
        const { path, content } = parseJson(body);
        const write = route === 'POST /write' ? writeFile : appendFile;
        try {
          await write(typeof path === 'string' ? path : '/dev/null', typeof content === 'string' ? content : '', 'utf8');
        } catch {
          return send(res, 500, 'text/html; charset=utf-8', FLASK_500);
        }
        return send(res, 200, 'text/html; charset=utf-8', 'OK');
      }
      default:
        return send(res, 404, 'text/html; charset=utf-8', '<!doctype html><title>404 Not Found</title><h1>Not Found</h1>');
    }
  }

  const port = await listenLocally(server, options.port);

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    executed,
    fault(path, fault, times = 1) {
      faults.set(path, { fault, left: times });
    },
    async close() {
      for (const child of launched) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Like the server's subprocess.run: argv without a shell, or one string through /bin/sh; killed after 120 s. */
function run(command: unknown, shell: boolean, cwd?: string): Promise<ExecuteAnswer | { message: string }> {
  const argv = toArgv(command, shell);
  return new Promise((resolve) => {
    const child = execFile(argv[0] ?? '', argv.slice(1), { cwd, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const failure = err as (Error & { code?: number | string }) | null;
      if (failure && typeof failure.code !== 'number') return resolve({ message: failure.message });
      resolve({ output: stdout, error: stderr, returncode: failure ? (failure.code as number) : 0 });
    });
    // The server's programs read no terminal: TeX stops at its first error instead of asking.
    child.stdin?.end();
  });
}

/** A string without a shell is split on whitespace (the server uses shlex; the tests need no quoting). */
function toArgv(command: unknown, shell: boolean): string[] {
  if (shell) return ['/bin/sh', '-c', Array.isArray(command) ? command.join(' ') : String(command)];
  if (Array.isArray(command)) return command.map(String);
  return String(command).split(/\s+/).filter((part) => part !== '');
}

/** A desktop-ish picture: a grey screen with a dark title bar, so the PNG has real content. */
async function drawScreen(width: number, height: number): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3, 0xd0);
  pixels.fill(0x30, 0, width * 3 * Math.min(height, 32));
  return sharp(pixels, { raw: { width, height, channels: 3 } }).png().toBuffer();
}

function parseJson(body: string): Record<string, unknown> {
  const parsed: unknown = JSON.parse(body === '' ? '{}' : body);
  return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json', JSON.stringify(value));
}
