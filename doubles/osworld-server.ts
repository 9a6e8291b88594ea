import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { appendFile, open, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { homedir, constants as osConstants, tmpdir } from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import { readBody } from './openai-server';
import { listenLocally } from '../apps/double-server';

/**
 * TEST DOUBLE of the OSWorld in-VM server as ScienceBoard's VMs run it: vm_config/server.py of
 * github.com/OS-Copilot/ScienceBoard at 9896c9bfb432f4c2a82f9bd7dcf506572294b54e, a Flask app
 * started with `app.run(debug=True)`. Checked against that file run by hand (Flask 3.1.3,
 * Werkzeug 3.1.9, on Xvfb) for each behaviour below; test/desktop/osworld-client.test.ts runs the
 * same contract against a real server when OSWORLD_SERVER_URL names one.
 *
 * Like the real server it:
 *  - answers an uncaught exception with a 500 Werkzeug debugger page: the exception line in the
 *    title and `<p class="errormsg">`, the debugger's SECRET in a script (GET /read of a missing
 *    file, /cursor_position, a JSON body that is not an object, an unclosed quote in a command);
 *  - answers Werkzeug's small error pages: 404, 405 (with Allow) for a known route and another
 *    method, 415 when a JSON route gets another Content-Type, 400 for malformed JSON; Allow lists
 *    the methods in the order of a Python set, which follows the hash seed of the server's start;
 *  - answers JSON as Flask's debug mode writes it (keys sorted, 2-space indent, ASCII-only);
 *  - runs /execute and /setup/execute like subprocess.run(text=True, timeout=120): a string
 *    without `shell` split like shlex, a list with `shell: true` runs only its first element (the
 *    rest become $0, $1...), arguments starting with `~/` expanded, \r\n and \r in the output
 *    turned into \n, output that is not UTF-8 a JSON 500, a program that cannot start a JSON 500,
 *    a timeout a JSON 500 even while a background child still holds the output pipe;
 *  - answers /setup/launch with a JSON 500 for a program that cannot start (not under a shell:
 *    `sh -c missing-app` launches, so it answers 200);
 *  - reads /read in text mode (strict UTF-8, \r\n and \r turned into \n);
 *  - saves each screenshot to one shared file and sends that file, so overlapping /screenshot
 *    calls can answer empty or truncated PNGs or break off mid-body; and, as its Xcursor opens an
 *    X connection per screenshot and never closes it, can be made to run out of X clients: one
 *    500, then the crash (the real one segfaults: every connection is refused until systemd
 *    restarts it);
 *  - closes the connection after each response (`Connection: close`).
 *
 * It also has ScienceBoard's app routes the tasks use: /tex/check really runs pdflatex (and bibtex,
 * then pdflatex twice) in the document's folder, as the server does; /chimerax/run answers what a
 * test's stand-in ChimeraX says, and fails as the server does when no ChimeraX listens; /opt sets the
 * accessibility tree's depth (Celestia's `opt`); /lean/check looks for the theorem's header line in
 * /home/user/sci/Sci/Basic.lean and asks a stand-in `lake build` (a 500, as the server's
 * FileNotFoundError, without one); /setup/upload saves a multipart `file_data` at `file_path` (text
 * files only: the body is read as UTF-8).
 *
 * With `root`, the VM's files (/read, /write, /append, /setup/upload, /lean/check) live under that
 * folder instead of this machine's /, and with `launch` a test's stand-in apps start instead of real
 * programs, so tasks written for the VM's paths and apps run here unchanged.
 *
 * Commands really run on this machine unless the test's `execute` answers them. Faults can be
 * injected per route. Listens on 127.0.0.1 only.
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
  | { readonly kind: 'status'; readonly status: number; readonly body?: string | Buffer; readonly contentType?: string }
  /** Accepts the request and never answers. */
  | { readonly kind: 'hang' }
  /** Closes the connection without an answer. */
  | { readonly kind: 'drop' };

export interface OsworldServerDoubleOptions {
  readonly screen?: { readonly width: number; readonly height: number };
  /** Listen here instead of a free port (to come up where a client already knocks). */
  readonly port?: number;
  /** The order of a 405's Allow, which Werkzeug takes from a set (so from the hash seed): as declared by default, or reversed. */
  readonly allowOrder?: 'declared' | 'reversed';
  /** Answers /execute itself for the commands it returns an answer for (e.g. pyautogui, absent here). */
  readonly execute?: (command: unknown, shell: boolean) => ExecuteAnswer | undefined;
  /** subprocess.run's timeout (the server's is 120 s). */
  readonly executeTimeoutSeconds?: number;
  /** Screenshots that succeed before the X server refuses the leaked connections (about 250 on Xvfb). */
  readonly screenshotsBeforeXRefuses?: number;
  /** After the crash, listen again this much later on the same port, as systemd restarts it; never by default. */
  readonly restartAfterCrashMs?: number;
  /**
   * TEST DOUBLE of ChimeraX's REST server (absent here): its JSON answer to a command, e.g.
   * `{ error: null }`. Without it, /chimerax/run fails as the server does when nothing listens.
   */
  readonly chimerax?: (command: string, port: unknown) => Record<string, unknown> | undefined;
  /** Called before each screenshot is taken (a test's stand-in for what an agent does while it looks). */
  readonly onScreenshot?: () => void | Promise<void>;
  /** The VM's `/`: its files are read and written under this folder (this machine's / by default). */
  readonly root?: string;
  /**
   * Answers /setup/launch itself for the commands it returns an answer for: `undefined` to launch
   * for real, `null` when the stand-in started, or the message of a program that cannot start.
   */
  readonly launch?: (command: unknown, shell: boolean) => string | null | undefined;
  /** TEST DOUBLE of `lake build` in /home/user/sci (Lean): its exit code and output for the file's text. */
  readonly lake?: (basicLean: string) => { returncode: number; stdout: string };
}

export interface OsworldServerDouble {
  readonly url: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  /** Bodies of /execute requests, parsed. */
  readonly executed: Array<{ command: unknown; shell: unknown }>;
  /** Bodies of /setup/launch requests, parsed. */
  readonly launched: Array<{ command: unknown; shell: unknown }>;
  /** The accessibility tree's depth /opt last set (50 at start, as the server's MAX_DEPTH). */
  readonly treeDepth: () => number;
  /** The most /screenshot requests it was handling at once. */
  readonly screenshotsAtOnce: () => number;
  /** How often it crashed (ran out of X clients). */
  readonly crashes: () => number;
  fault(path: string, fault: Fault, times?: number): void;
  close(): Promise<void>;
}

/** An exception of the Python server, shown as its debugger page. */
class PythonError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }

  get line(): string {
    return `${this.type}: ${this.message}`;
  }
}

/** An HTTP error Werkzeug raises (abort, bad JSON, wrong method), shown as its small page. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly description: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
  }
}

/** Routes and their methods (Flask adds HEAD and OPTIONS, which the 405's Allow lists). */
const ROUTES: Readonly<Record<string, 'GET' | 'POST'>> = {
  '/platform': 'GET',
  '/screenshot': 'GET',
  '/accessibility': 'GET',
  '/cursor_position': 'GET',
  '/read': 'GET',
  '/screen_size': 'POST',
  '/execute': 'POST',
  '/setup/execute': 'POST',
  '/setup/launch': 'POST',
  '/write': 'POST',
  '/append': 'POST',
  '/chimerax/run': 'POST',
  '/tex/check': 'POST',
  '/opt': 'POST',
  '/lean/check': 'POST',
  '/setup/upload': 'POST',
};

const DESCRIPTIONS: Readonly<Record<number, string>> = {
  400: 'The browser (or proxy) sent a request that this server could not understand.',
  404: 'The requested URL was not found on the server. If you entered the URL manually please check your spelling and try again.',
  405: 'The method is not allowed for the requested URL.',
};

/** One request as a route handler gets it. */
interface Call {
  readonly url: URL;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly body: string;
}

/** The server process and the VM it runs on: what it recorded, its faults, its X connections and screenshot file. */
class OsworldVm {
  readonly requests: RecordedRequest[] = [];
  readonly executed: Array<{ command: unknown; shell: unknown }> = [];
  readonly launchedRequests: Array<{ command: unknown; shell: unknown }> = [];
  readonly faults = new Map<string, { fault: Fault; left: number }>();
  readonly screen: { readonly width: number; readonly height: number };
  treeDepth = 50;
  xClients = 0;
  shooting = 0;
  mostShooting = 0;
  crashes = 0;
  /** The debugger's secret, one per server process as Werkzeug makes it. */
  secret = debuggerSecret();
  private readonly launched: ChildProcess[] = [];
  private readonly dir = mkdtempSync(path.join(tmpdir(), 'coda-osworld-double-'));
  private readonly screenshotFile = path.join(this.dir, 'screenshot.png');
  private closed = false;
  private restart: NodeJS.Timeout | undefined;
  private server: Server = this.serve();
  port = 0;

  constructor(
    readonly options: OsworldServerDoubleOptions,
    private readonly png: Buffer,
  ) {
    this.screen = options.screen ?? { width: 1280, height: 800 };
  }

  async listen(): Promise<void> {
    this.port = await listenLocally(this.server, this.options.port);
  }

  /** A VM path as a path of this machine: under `root` when the test gave one. */
  onVm(file: string): string {
    return this.options.root === undefined ? file : path.join(this.options.root, path.resolve('/', file));
  }

  private serve(): Server {
    return createServer((req, res) => {
      void this.handle(req, res).catch((err: unknown) => answer(res, 500, 'text/plain', `double failed: ${String(err)}`));
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://double');
    this.requests.push({ method: req.method ?? '', path: url.pathname + url.search, body });
    const injected = this.faults.get(url.pathname);
    if (injected && injected.left > 0) {
      injected.left -= 1;
      const { fault } = injected;
      if (fault.kind === 'hang') return;
      if (fault.kind === 'drop') return void req.socket.destroy();
      const page = fault.body ?? debuggerPage(new PythonError('RuntimeError', 'injected fault'), this.secret);
      return answer(res, fault.status, fault.contentType ?? 'text/html; charset=utf-8', page);
    }
    try {
      const method = ROUTES[url.pathname];
      if (method === undefined) throw new HttpError(404, DESCRIPTIONS[404] as string);
      if (req.method !== method) {
        const allowed = method === 'GET' ? ['GET', 'HEAD', 'OPTIONS'] : ['POST', 'OPTIONS'];
        const allow = (this.options.allowOrder === 'reversed' ? allowed.reverse() : allowed).join(', ');
        throw new HttpError(405, DESCRIPTIONS[405] as string, { allow });
      }
      await ROUTE_HANDLERS[url.pathname]!(this, { url, req, res, body });
    } catch (err) {
      if (err instanceof HttpError) return answer(res, err.status, 'text/html; charset=utf-8', errorPage(err), err.headers);
      const exception = err instanceof PythonError ? err : new PythonError('Exception', String(err));
      answer(res, 500, 'text/html; charset=utf-8', debuggerPage(exception, this.secret));
    }
  }

  /** Saves the screen to the shared file in pieces (as PIL writes it), then sends whatever that file holds. */
  async screenshot(res: ServerResponse): Promise<void> {
    const limit = this.options.screenshotsBeforeXRefuses ?? Infinity;
    if (this.xClients > limit) return this.crash();
    this.xClients += 1;
    if (this.xClients > limit) {
      throw new PythonError('subprocess.CalledProcessError', `Command '['gnome-screenshot', '-f', '/tmp/tmpq3v8x1ab.png']' returned non-zero exit status 1.`);
    }
    this.shooting += 1;
    this.mostShooting = Math.max(this.mostShooting, this.shooting);
    try {
      await this.writeScreenshot();
      const { size } = await stat(this.screenshotFile);
      const bytes = (await readFile(this.screenshotFile)).subarray(0, size);
      res.writeHead(200, 'OK', { 'content-type': 'image/png', 'content-length': size, connection: 'close' });
      // Another request truncated the file after the stat: Werkzeug sends what is left and hangs up.
      if (bytes.length < size) return void res.write(bytes, () => res.socket?.destroy());
      res.end(bytes);
    } finally {
      this.shooting -= 1;
    }
  }

  private async writeScreenshot(): Promise<void> {
    const { png } = this;
    const file = await open(this.screenshotFile, 'w');
    try {
      const piece = Math.ceil(png.length / 8);
      for (let at = 0; at < png.length; at += piece) {
        await file.write(png, at, Math.min(piece, png.length - at), at);
        await sleep(5);
      }
    } finally {
      await file.close();
    }
  }

  /** The server process dies: every open connection drops, and nothing listens until the restart. */
  private crash(): void {
    this.crashes += 1;
    this.server.closeAllConnections();
    this.server.close();
    if (this.options.restartAfterCrashMs === undefined) return;
    this.restart = setTimeout(() => {
      if (this.closed) return;
      this.xClients = 0;
      this.secret = debuggerSecret();
      this.server = this.serve();
      void listenLocally(this.server, this.port);
    }, this.options.restartAfterCrashMs);
  }

  /** Popen without waiting: a JSON 500 message when the program cannot start. */
  launch(argv: string[]): Promise<string | undefined> {
    if (argv.length === 0) return Promise.resolve('list index out of range');
    return new Promise((resolve) => {
      const child = spawn(argv[0] as string, argv.slice(1), { stdio: 'ignore' });
      this.launched.push(child);
      child.once('spawn', () => resolve(undefined));
      child.once('error', (err) => resolve(osError(err, argv[0] as string).message));
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.restart);
    for (const child of this.launched) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A file of the VM read as the server reads it (an OSError page when it cannot be). */
const readOnVm = (vm: OsworldVm, file: string): Promise<Buffer> =>
  readFile(vm.onVm(file)).catch((err: unknown) => {
    throw osError(err, file);
  });

async function execute(vm: OsworldVm, { req, res, body }: Call): Promise<void> {
  const data = requestJson(req, body);
  const shell = truthy(data.shell ?? false);
  vm.executed.push({ command: data.command, shell: data.shell });
  const argv = commandLine('command' in data ? data.command : shell ? '' : [], shell);
  const stood = vm.options.execute?.(data.command, shell);
  if (stood) return answerJson(res, 200, { status: 'success', ...stood });
  const outcome = await run(argv, vm.options.executeTimeoutSeconds ?? 120);
  if ('message' in outcome) return answerJson(res, 500, { status: 'error', message: outcome.message });
  return answerJson(res, 200, { status: 'success', ...outcome });
}

async function setupLaunch(vm: OsworldVm, { req, res, body }: Call): Promise<void> {
  const data = requestJson(req, body);
  const shell = truthy(data.shell ?? false);
  const command = 'command' in data ? data.command : shell ? '' : [];
  vm.launchedRequests.push({ command: data.command, shell: data.shell });
  const argv = commandLine(command, shell);
  const stood = vm.options.launch?.(data.command, shell);
  const failure = stood === undefined ? await vm.launch(argv) : (stood ?? undefined);
  if (failure !== undefined) return answerJson(res, 500, { status: 'error', message: failure });
  const shown = shell ? (Array.isArray(command) ? pythonList(argv.slice(2)) : String(command)) : argv.join(' ');
  return answer(res, 200, 'text/html; charset=utf-8', `${shown} launched successfully`);
}

/** pdflatex (and, with bibtex, bibtex then pdflatex twice) in the document's folder, as the server runs them. */
async function texCheck(vm: OsworldVm, { req, res, body }: Call): Promise<void> {
  const data = requestJson(req, body);
  const file = String(data.file ?? 'main');
  const latex = ['pdflatex', `${file}.tex`];
  const runs = truthy(data.bibtex ?? false) ? [latex, ['bibtex', file], latex, latex] : [latex];
  for (const argv of runs) {
    const outcome = await run(argv, vm.options.executeTimeoutSeconds ?? 120, String(data.path ?? '/home/user'));
    if ('message' in outcome || outcome.returncode !== 0) return answerJson(res, 200, { pass: false });
  }
  return answerJson(res, 200, { pass: true });
}

async function leanCheck(vm: OsworldVm, { req, res, body }: Call): Promise<void> {
  const data = requestJson(req, body);
  const header = typeof data.header === 'string' ? data.header : '__PANIC__';
  const basic = '/home/user/sci/Sci/Basic.lean';
  const text = universalNewlines(decodeUtf8(await readOnVm(vm, basic)));
  if (!text.split('\n').includes(header)) return answerJson(res, 200, { pass: false });
  if (vm.options.lake === undefined) throw osError(Object.assign(new Error('no lake'), { code: 'ENOENT' }), '/home/user/.elan/bin/lake');
  const lake = vm.options.lake(text);
  return answerJson(res, 200, { pass: !lake.stdout.includes("declaration uses 'sorry'") && lake.returncode === 0 });
}

async function setupUpload(vm: OsworldVm, { req, res, body }: Call): Promise<void> {
  const form = multipartForm(req, body);
  const target = form.get('file_path');
  const data = form.get('file_data');
  if (target === undefined || data?.filename === undefined) return answerJson(res, 400, { error: 'file_path and file_data are required' });
  const file = target.value.startsWith('~/') ? path.join('/home/user', target.value.slice(2)) : target.value;
  await writeFile(vm.onVm(file), data.value, 'utf8').catch((err: unknown) => {
    throw osError(err, file);
  });
  return answer(res, 200, 'text/html; charset=utf-8', 'File Uploaded');
}

async function writeOrAppend(vm: OsworldVm, { url, req, res, body }: Call): Promise<void> {
  const data = requestJson(req, body);
  const file = typeof data.path === 'string' ? data.path : '/dev/null';
  const content = typeof data.content === 'string' ? data.content : '';
  await (url.pathname === '/write' ? writeFile : appendFile)(vm.onVm(file), content, 'utf8').catch((err: unknown) => {
    throw osError(err, file);
  });
  return answer(res, 200, 'text/html; charset=utf-8', 'OK');
}

/** What each route of ROUTES does, as vm_config/server.py's views do it. */
const ROUTE_HANDLERS: Readonly<Record<string, (vm: OsworldVm, call: Call) => Promise<void> | void>> = {
  '/platform': (_vm, { res }) => answer(res, 200, 'text/html; charset=utf-8', 'Linux'),
  '/screenshot': async (vm, { res }) => {
    await vm.options.onScreenshot?.();
    return vm.screenshot(res);
  },
  '/screen_size': (vm, { res }) => {
    if (vm.xClients >= (vm.options.screenshotsBeforeXRefuses ?? Infinity)) {
      throw new PythonError('Xlib.error.DisplayConnectionError', `Can't connect to display ":0": b'Maximum number of clients reached'`);
    }
    return answerJson(res, 200, { width: vm.screen.width, height: vm.screen.height });
  },
  '/accessibility': (_vm, { res }) =>
    answerJson(res, 200, { AT: '<desktop-frame xmlns:st="https://accessibility.ubuntu.example.org/ns/state"><application name="double"/></desktop-frame>' }),
  '/cursor_position': () => {
    // The view returns a bare (x, y) tuple, which Flask refuses (OSWorld issue #117).
    throw new PythonError(
      'TypeError',
      'The view function did not return a valid response. The return type must be a string, dict, list, tuple with headers or status, Response instance, or WSGI callable, but it was a int.',
    );
  },
  '/execute': execute,
  '/setup/execute': execute,
  '/setup/launch': setupLaunch,
  '/read': async (vm, { url, res }) => {
    const file = url.searchParams.get('path') ?? '/dev/null';
    return answer(res, 200, 'text/html; charset=utf-8', universalNewlines(decodeUtf8(await readOnVm(vm, file))));
  },
  '/chimerax/run': (vm, { req, res, body }) => {
    const data = requestJson(req, body);
    const said = vm.options.chimerax?.(String(data.command ?? ''), data.port ?? 8000);
    if (said === undefined) throw new PythonError('requests.exceptions.ConnectionError', `HTTPConnectionPool(host='localhost', port=${String(data.port ?? 8000)}): Max retries exceeded`);
    return answerJson(res, 200, said);
  },
  '/tex/check': texCheck,
  '/opt': (vm, { req, res, body }) => {
    const data = requestJson(req, body);
    vm.treeDepth = typeof data.depth === 'number' ? data.depth : 50;
    return answer(res, 200, 'text/html; charset=utf-8', 'OK');
  },
  '/lean/check': leanCheck,
  '/setup/upload': setupUpload,
  '/write': writeOrAppend,
  '/append': writeOrAppend,
};

export async function startOsworldServerDouble(options: OsworldServerDoubleOptions = {}): Promise<OsworldServerDouble> {
  const screen = options.screen ?? { width: 1280, height: 800 };
  const vm = new OsworldVm(options, await drawScreen(screen.width, screen.height));
  await vm.listen();
  return {
    url: `http://127.0.0.1:${vm.port}`,
    port: vm.port,
    requests: vm.requests,
    executed: vm.executed,
    launched: vm.launchedRequests,
    treeDepth: () => vm.treeDepth,
    screenshotsAtOnce: () => vm.mostShooting,
    crashes: () => vm.crashes,
    fault(route, fault, times = 1) {
      vm.faults.set(route, { fault, left: times });
    },
    close: () => vm.close(),
  };
}

/** subprocess.run(argv, stdout=PIPE, stderr=PIPE, text=True, timeout=...), as the server calls it. */
function run(argv: string[], timeoutSeconds: number, cwd?: string): Promise<ExecuteAnswer | { message: string }> {
  if (argv.length === 0) return Promise.resolve({ message: 'list index out of range' });
  return new Promise((resolve) => {
    const child = spawn(argv[0] as string, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], cwd });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let streamsOpen = 2;
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    const timer = setTimeout(() => {
      // Like communicate(): the process is killed, and a child of it that still holds the pipes
      // does not keep the answer waiting.
      child.kill('SIGKILL');
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({ message: `Command '${pythonList(argv)}' timed out after ${timeoutSeconds} seconds` });
    }, timeoutSeconds * 1000);
    const finish = () => {
      if (exit === undefined || streamsOpen > 0) return;
      clearTimeout(timer);
      try {
        const output = universalNewlines(decodeUtf8(Buffer.concat(out)));
        const error = universalNewlines(decodeUtf8(Buffer.concat(err)));
        const returncode = exit.code ?? -(osConstants.signals[exit.signal as NodeJS.Signals] ?? 0);
        resolve({ output, error, returncode });
      } catch (e) {
        resolve({ message: (e as Error).message });
      }
    };
    child.stdout.on('close', () => {
      streamsOpen -= 1;
      finish();
    });
    child.stderr.on('close', () => {
      streamsOpen -= 1;
      finish();
    });
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      finish();
    });
    child.once('error', (e) => {
      clearTimeout(timer);
      resolve({ message: osError(e, argv[0] as string).message });
    });
  });
}

/** The argv the server runs: shlex for a string without a shell, `~/` expanded, `sh -c` for a shell. */
function commandLine(command: unknown, shell: boolean): string[] {
  const parts = typeof command === 'string' && !shell ? shlexSplit(command) : command;
  if (typeof parts === 'string') return ['/bin/sh', '-c', parts];
  if (!Array.isArray(parts)) throw new PythonError('TypeError', `'${pythonType(parts)}' object is not iterable`);
  const expanded = parts.map((arg: unknown) => {
    if (typeof arg !== 'string') throw new PythonError('AttributeError', `'${pythonType(arg)}' object has no attribute 'startswith'`);
    return arg.startsWith('~/') ? path.join(process.env.HOME ?? homedir(), arg.slice(2)) : arg;
  });
  return shell ? ['/bin/sh', '-c', ...expanded] : expanded;
}

/** shlex.split (POSIX mode, no comments). */
function shlexSplit(text: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && (text[i + 1] === '"' || text[i + 1] === '\\')) word += text[++i];
      else word += c;
    } else if (' \t\r\n'.includes(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      inWord = true;
      if (c === "'" || c === '"') quote = c;
      else if (c === '\\') {
        if (i + 1 >= text.length) throw new PythonError('ValueError', 'No escaped character');
        word += text[++i];
      } else word += c;
    }
  }
  if (quote !== undefined) throw new PythonError('ValueError', 'No closing quotation');
  if (inWord) words.push(word);
  return words;
}

/** request.form and request.files of a multipart/form-data body (parts by name; a file part has its filename). */
function multipartForm(req: IncomingMessage, body: string): Map<string, { value: string; filename?: string }> {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(req.headers['content-type'] ?? '');
  const parts = new Map<string, { value: string; filename?: string }>();
  const mark = boundary?.[1] ?? boundary?.[2];
  if (mark === undefined) return parts;
  for (const chunk of body.split(`--${mark}`).slice(1)) {
    const split = chunk.indexOf('\r\n\r\n');
    if (split === -1) continue;
    const head = chunk.slice(0, split);
    const name = /name="([^"]*)"/.exec(head)?.[1];
    const filename = /filename="([^"]*)"/.exec(head)?.[1];
    if (name === undefined) continue;
    const value = chunk.slice(split + 4).replace(/\r\n$/, '');
    parts.set(name, filename === undefined ? { value } : { value, filename });
  }
  return parts;
}

/** request.json: 415 without a JSON Content-Type, 400 for malformed JSON; the view then calls data.get. */
function requestJson(req: IncomingMessage, body: string): Record<string, unknown> {
  const mimetype = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (mimetype !== 'application/json' && !mimetype.endsWith('+json')) {
    throw new HttpError(415, "Did not attempt to load JSON data because the request Content-Type was not 'application/json'.");
  }
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch (err) {
    throw new HttpError(400, `Failed to decode JSON object: ${(err as Error).message}`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new PythonError('AttributeError', `'${pythonType(data)}' object has no attribute 'get'`);
  }
  return data as Record<string, unknown>;
}

/** Strict UTF-8, failing as Python's codec does. */
function decodeUtf8(bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    const at = firstBadByte(bytes);
    const byte = bytes[at] ?? 0;
    const reason = byte >= 0x80 && byte < 0xc2 ? 'invalid start byte' : byte > 0xf4 ? 'invalid start byte' : 'invalid continuation byte';
    throw new PythonError('UnicodeDecodeError', `'utf-8' codec can't decode byte 0x${byte.toString(16).padStart(2, '0')} in position ${at}: ${reason}`);
  }
}

function firstBadByte(bytes: Buffer): number {
  for (let at = 0; at < bytes.length; ) {
    const lead = bytes[at] as number;
    const length = lead < 0x80 ? 1 : lead >= 0xc2 && lead < 0xe0 ? 2 : lead >= 0xe0 && lead < 0xf0 ? 3 : lead >= 0xf0 && lead < 0xf5 ? 4 : 0;
    if (length === 0) return at;
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(at, at + length));
    } catch {
      return at;
    }
    at += length;
  }
  return 0;
}

/** Python's text mode: \r\n and lone \r read as \n. */
const universalNewlines = (text: string): string => text.replace(/\r\n?/g, '\n');

/** OSError as Python words it, e.g. `[Errno 2] No such file or directory: '/x'`. */
function osError(err: unknown, file: string): PythonError {
  const code = (err as { code?: string }).code ?? '';
  const known: Record<string, [string, number, string]> = {
    ENOENT: ['FileNotFoundError', 2, 'No such file or directory'],
    EACCES: ['PermissionError', 13, 'Permission denied'],
    EISDIR: ['IsADirectoryError', 21, 'Is a directory'],
    ENOTDIR: ['NotADirectoryError', 20, 'Not a directory'],
  };
  const [type, errno, text] = known[code] ?? ['OSError', 5, String((err as Error).message)];
  return new PythonError(type, `[Errno ${errno}] ${text}: ${pythonString(file)}`);
}

const truthy = (value: unknown): boolean => !(value === false || value === null || value === 0 || value === '' || (Array.isArray(value) && value.length === 0));

function pythonType(value: unknown): string {
  if (value === null) return 'NoneType';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'string') return 'str';
  return 'dict';
}

/** repr() of a str: single quotes unless the text has one and no double quote. */
function pythonString(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  return quote + text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t').replaceAll(quote, `\\${quote}`) + quote;
}

const pythonList = (items: readonly string[]): string => `[${items.map(pythonString).join(', ')}]`;

const escapeHtml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** 20 letters and digits, as Werkzeug's gen_salt makes the secret. */
function debuggerSecret(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from(randomBytes(20), (byte) => alphabet[byte % alphabet.length]).join('');
}

/** Werkzeug's page for an HTTP error: status, name, description. */
function errorPage(err: HttpError): string {
  const name = STATUS_CODES[err.status] ?? 'Error';
  return `<!doctype html>\n<html lang=en>\n<title>${err.status} ${name}</title>\n<h1>${name}</h1>\n<p>${escapeHtml(err.description)}</p>\n`;
}

/** The interactive debugger's page for an uncaught exception: the exception line, the traceback, and the console's secret. */
function debuggerPage(err: PythonError, secret: string): string {
  const line = escapeHtml(err.line);
  return [
    '<!doctype html>',
    '<html lang=en>',
    '  <head>',
    `    <title>${line}\n // Werkzeug Debugger</title>`,
    '    <script>',
    '      var CONSOLE_MODE = false,',
    '          EVALEX = true,',
    '          EVALEX_TRUSTED = false,',
    `          SECRET = "${secret}";`,
    '    </script>',
    '  </head>',
    '  <body style="background-color: #fff">',
    '    <div class="debugger">',
    `<h1>${escapeHtml(err.type)}</h1>`,
    '<div class="detail">',
    `  <p class="errormsg">${line}\n</p>`,
    '</div>',
    '<h2 class="traceback">Traceback <em>(most recent call last)</em></h2>',
    `<div class="traceback"><pre>  File "/home/user/server/main.py", in view\n${line}</pre></div>`,
    `<div class="plain"><textarea cols="50" rows="10" name="code" readonly>Traceback (most recent call last):\n  File "/home/user/server/main.py", in view\n${line}</textarea></div>`,
    '    </div>',
    '  </body>',
    '</html>',
    '',
  ].join('\n');
}

/** Flask's jsonify in debug mode: sorted keys, indented, non-ASCII escaped, a final newline. */
function answerJson(res: ServerResponse, status: number, value: Record<string, unknown>): void {
  const sorted = Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const text = JSON.stringify(sorted, null, 2).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  answer(res, status, 'application/json', `${text}\n`);
}

/** Werkzeug's dev server: upper-case reason phrase, and the connection closed after every response. */
function answer(res: ServerResponse, status: number, contentType: string, body: string | Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(status, (STATUS_CODES[status] ?? '').toUpperCase(), {
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
    connection: 'close',
    ...headers,
  });
  res.end(body);
}

/** A desktop-ish picture: a grey screen with a dark title bar, so the PNG has real content. */
async function drawScreen(width: number, height: number): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3, 0xd0);
  pixels.fill(0x30, 0, width * 3 * Math.min(height, 32));
  return sharp(pixels, { raw: { width, height, channels: 3 } }).png().toBuffer();
}
