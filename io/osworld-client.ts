import { z } from 'zod';
import { createVmHttp, DEFAULT_RETRY_POLICY, type RetryPolicy, type VmHttp } from './vm-http';
import { VmHttpError } from './vm-http-error';

/**
 * Typed client of the OSWorld in-VM server (port 5000) with ScienceBoard's additions
 * (/read, /write, /append, /chimerax/run, /tex/check). Request and answer shapes follow the
 * server ScienceBoard's VMs run (vm_config/server.py, extracted from OSWorld's
 * desktop_env/server/main.py).
 */

/** What /execute answers: the command ran (whatever its exit code). */
export interface ExecuteResult {
  readonly output: string;
  readonly error: string;
  readonly returncode: number;
}

export interface ExecuteOptions {
  /** false (the default): `command` is an argv list run without a shell, so no text in it is interpreted. */
  readonly shell?: boolean;
  readonly timeoutMs?: number;
  /** Through POST /setup/execute, the route set-up steps use (the same handler as /execute). */
  readonly setup?: boolean;
}

/** For one call: a quick probe (no retries, short timeout) or a slow read. */
export interface CallOptions {
  readonly timeoutMs?: number;
  readonly retries?: number;
}

export interface OsworldClientOptions extends Partial<RetryPolicy> {
  /** /execute runs commands for up to 120 s on the server; the request must outlive that. */
  readonly executeTimeoutMs?: number;
  /** The VM's Python with pyautogui, as OSWorld's controller calls it. */
  readonly python?: string;
}

export interface OsworldClient {
  /** Base URL of the in-VM server, e.g. http://10.0.3.11:5000. */
  readonly url: string;
  /** GET /screenshot: the screen (with the pointer) as one complete PNG. */
  screenshot(options?: CallOptions): Promise<Buffer>;
  /** POST /execute (or /setup/execute): runs a command and waits for it (the server kills it after 120 s). */
  execute(command: readonly string[] | string, options?: ExecuteOptions): Promise<ExecuteResult>;
  /** POST /setup/launch: starts a command and returns at once, without its output. */
  launch(command: readonly string[] | string, options?: { readonly shell?: boolean }): Promise<void>;
  /** GET /accessibility: the AT-SPI tree as XML. */
  accessibilityTree(options?: CallOptions): Promise<string>;
  /** POST /screen_size: the X screen's size in pixels (asks the X server, so it also proves the display lives). */
  screenSize(options?: CallOptions): Promise<{ width: number; height: number }>;
  /** GET /platform: `Linux`, `Windows` or `Darwin`. */
  platform(options?: CallOptions): Promise<string>;
  /** Where the pointer is, in screen pixels. */
  cursorPosition(): Promise<{ x: number; y: number }>;
  /** GET /read?path=: a text file of the VM (UTF-8). */
  readFile(path: string, options?: CallOptions): Promise<string>;
  /** POST /write: replaces a text file of the VM. */
  writeFile(path: string, content: string): Promise<void>;
  /** POST /append: appends to a text file of the VM. */
  appendFile(path: string, content: string): Promise<void>;
  /** POST /chimerax/run: a ChimeraX command through its REST server in the VM (on `port`); ChimeraX's error text, or null. */
  chimeraxRun(command: string, port: number): Promise<string | null>;
  /** POST /tex/check: pdflatex (+ bibtex, pdflatex twice) of `file`.tex in the VM folder `path` all exited with 0. */
  texCheck(path: string, file: string, bibtex: boolean, options?: CallOptions): Promise<boolean>;
}

const executeAnswer = z.object({
  status: z.literal('success'),
  output: z.string(),
  error: z.string(),
  returncode: z.number().int(),
});

const accessibilityAnswer = z.object({ AT: z.string() });

const screenSizeAnswer = z.object({ width: z.number().int().positive(), height: z.number().int().positive() });

/** A fixed server answers `[x, y]` (Flask's jsonify of two values) or `{x, y}`. */
const cursorAnswer = z.union([
  z.tuple([z.number(), z.number()]).transform(([x, y]) => ({ x, y })),
  z.object({ x: z.number(), y: z.number() }),
]);

/** ChimeraX's REST answer with `json true`: the command's error, null when it ran. */
const chimeraxAnswer = z.object({ error: z.unknown() }).transform(({ error }): string | null => {
  if (error === null || error === undefined) return null;
  const message = (error as { message?: unknown }).message;
  return typeof message === 'string' ? message : JSON.stringify(error);
});

const texCheckAnswer = z.object({ pass: z.boolean() });

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * Why `bytes` is not one complete PNG, or undefined: the signature, IHDR first, every chunk within
 * the bytes, IEND last. The server sends whatever its screenshot file holds, which another
 * screenshot may have emptied or be halfway through writing.
 */
export function pngDefect(bytes: Buffer): string | undefined {
  if (!bytes.subarray(0, PNG_SIGNATURE.length).equals(PNG_SIGNATURE)) return 'no PNG signature';
  for (let at = PNG_SIGNATURE.length; at + 12 <= bytes.length; ) {
    const length = bytes.readUInt32BE(at);
    const type = bytes.toString('latin1', at + 4, at + 8);
    const end = at + 12 + length;
    if (at === PNG_SIGNATURE.length && (type !== 'IHDR' || length !== 13)) return `the first chunk is ${type}, not IHDR`;
    if (end > bytes.length) return `chunk ${type} at byte ${at} runs past the end`;
    if (type === 'IEND') return end === bytes.length ? undefined : `${bytes.length - end} bytes after IEND`;
    at = end;
  }
  return 'no IEND chunk';
}

/** The screen as the server saves it, refused unless it is a whole PNG (a concurrent screenshot may have cut it short). */
async function screenshot(http: VmHttp, opts: CallOptions): Promise<Buffer> {
  const request = { method: 'GET', path: '/screenshot', idempotent: true, ...opts } as const;
  const { body, contentType } = await http.send(request);
  const defect = pngDefect(body);
  if (defect !== undefined) {
    const type = contentType.split(';')[0] || 'unknown type';
    throw http.protocolError(request, `expected a complete PNG, got ${body.length} bytes of ${type}: ${defect}`);
  }
  return body;
}

/**
 * Where the pointer is. The released server returns a bare (x, y) tuple, which Flask turns into a
 * 500 (OSWorld issue #117), so the VM's pyautogui is asked through /execute instead.
 */
async function cursorPosition(http: VmHttp, execute: (command: readonly string[]) => Promise<ExecuteResult>, python: string): Promise<{ x: number; y: number }> {
  try {
    return await http.json({ method: 'GET', path: '/cursor_position', idempotent: true }, cursorAnswer);
  } catch (err) {
    if (!(err instanceof VmHttpError) || err.status !== 500) throw err;
  }
  const request = { method: 'POST', path: '/execute', idempotent: false } as const;
  const result = await execute([python, '-c', 'import pyautogui; p = pyautogui.position(); print(p.x, p.y)']);
  const match = /^\s*(\d+) (\d+)\s*$/.exec(result.output);
  if (result.returncode !== 0 || !match) {
    throw http.protocolError(request, `pointer position query failed (exit ${result.returncode}): ${(result.error || result.output).trim().slice(-300)}`);
  }
  return { x: Number(match[1]), y: Number(match[2]) };
}

export function createOsworldClient(url: string, options: OsworldClientOptions = {}): OsworldClient {
  const http: VmHttp = createVmHttp(url, {
    timeoutMs: options.timeoutMs ?? DEFAULT_RETRY_POLICY.timeoutMs,
    retries: options.retries ?? DEFAULT_RETRY_POLICY.retries,
    backoffMs: options.backoffMs ?? DEFAULT_RETRY_POLICY.backoffMs,
  });
  const executeTimeoutMs = options.executeTimeoutMs ?? 130_000;
  const python = options.python ?? 'python';

  async function execute(command: readonly string[] | string, opts: ExecuteOptions = {}): Promise<ExecuteResult> {
    const answer = await http.json(
      {
        method: 'POST',
        path: opts.setup ? '/setup/execute' : '/execute',
        json: { command, shell: opts.shell ?? false },
        idempotent: false,
        timeoutMs: opts.timeoutMs ?? executeTimeoutMs,
      },
      executeAnswer,
    );
    return { output: answer.output, error: answer.error, returncode: answer.returncode };
  }

  /** The text routes of ScienceBoard's server answer exactly `OK` on success. */
  async function expectOk(path: string, json: unknown, idempotent: boolean): Promise<void> {
    const request = { method: 'POST', path, json, idempotent } as const;
    const answer = await http.text(request);
    if (answer !== 'OK') throw http.protocolError(request, `expected "OK", got ${JSON.stringify(answer.slice(0, 200))}`);
  }

  return {
    url: http.server,
    execute,

    screenshot: (opts = {}) => screenshot(http, opts),

    async launch(command, opts = {}) {
      await http.send({ method: 'POST', path: '/setup/launch', json: { command, shell: opts.shell ?? false }, idempotent: false });
    },

    async accessibilityTree(opts = {}) {
      return (await http.json({ method: 'GET', path: '/accessibility', idempotent: true, ...opts }, accessibilityAnswer)).AT;
    },

    async screenSize(opts = {}) {
      return http.json({ method: 'POST', path: '/screen_size', idempotent: true, ...opts }, screenSizeAnswer);
    },

    async platform(opts = {}) {
      return (await http.text({ method: 'GET', path: '/platform', idempotent: true, ...opts })).trim();
    },

    cursorPosition: () => cursorPosition(http, (command) => execute(command), python),

    async readFile(path, opts = {}) {
      return http.text({ method: 'GET', path: `/read?${new URLSearchParams({ path }).toString()}`, idempotent: true, ...opts });
    },

    async writeFile(path, content) {
      await expectOk('/write', { path, content }, true);
    },

    async appendFile(path, content) {
      await expectOk('/append', { path, content }, false);
    },

    async chimeraxRun(command, port) {
      return http.json({ method: 'POST', path: '/chimerax/run', json: { command, port }, idempotent: false }, chimeraxAnswer);
    },

    async texCheck(path, file, bibtex, opts = {}) {
      // Compiling writes only the document's own outputs: running it twice is the same as once.
      const request = { method: 'POST', path: '/tex/check', json: { path, file, bibtex }, idempotent: true, timeoutMs: executeTimeoutMs, ...opts } as const;
      return (await http.json(request, texCheckAnswer)).pass;
    },
  };
}
