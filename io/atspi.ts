import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import type { z } from 'zod';
import type { Env } from './process';

/**
 * Reading an app's accessibility (AT-SPI) tree. Each app has a reader module beside its driver
 * (a python file with read(pid, args), using the system python's pyatspi) and a zod schema of
 * what it returns; a desktop has one long-lived reader process (atspi_reader.py) that imports
 * the modules once and answers each read over a line protocol, as the JSON the module returns.
 */

/**
 * A python file beside the compiled module in `dir` (its `__dirname`), in the source tree: build/
 * holds only compiled TypeScript, so `build/apps/kalgebra/local` reads from `apps/kalgebra/local`.
 */
export const readerScript = (dir: string, script: string): string => path.join(SOURCE_ROOT, path.relative(BUILD_ROOT, dir), script);

/** This module is build/io/atspi.js once compiled. */
const BUILD_ROOT = path.resolve(__dirname, '..');
const SOURCE_ROOT = path.resolve(__dirname, '..', '..');

const READER = readerScript(__dirname, 'atspi_reader.py');

export interface AtspiReaderOptions {
  /** The system python, which has pyatspi. */
  readonly python: string;
  /**
   * The desktop's environment: AT_SPI_BUS_ADDRESS says which accessibility bus to read, and the
   * desktop's marker (MARKER_VAR) lets its cleanup find the reader with its other processes.
   */
  readonly env: Env;
}

/** A read that failed: the reader's answer, its death, or its silence past the read's time. */
export class AtspiReadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AtspiReadError';
  }
}

interface Pending {
  readonly id: number;
  resolve(value: unknown): void;
  reject(err: Error): void;
}

/** Keeps the last bytes a process wrote to stderr, to say why it died. */
const STDERR_TAIL = 2_000;

/**
 * One desktop's AT-SPI reader: a python process started on the first read and kept, one read at
 * a time (reads wait their turn). A read that does not answer within its time kills the reader
 * and fails; so does one whose reader died; the next read starts a new reader. close() kills it.
 */
export class AtspiReader {
  private child: ChildProcess | undefined;
  private pending: Pending | undefined;
  private buffered = '';
  private stderr = '';
  private lastId = 0;
  private turn: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(private readonly options: AtspiReaderOptions) {}

  /** The reader's pid while it runs (tests and benchmarks look at it). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the reader now rather than at the first read (python's start-up off the first read's time), also after close(). */
  start(): void {
    this.closed = false;
    this.child ??= this.spawn();
  }

  /** What the app's reader `module` returns for `pid` and `args`; throws AtspiReadError. */
  read(module: string, pid: number, args: readonly string[], timeoutMs: number): Promise<unknown> {
    const next = this.turn.then(() => this.ask(module, pid, args, timeoutMs));
    this.turn = next.catch(() => undefined);
    return next;
  }

  /** Kills the reader; reads after this fail. */
  async close(): Promise<void> {
    this.closed = true;
    await this.kill();
  }

  private ask(module: string, pid: number, args: readonly string[], timeoutMs: number): Promise<unknown> {
    if (this.closed) return Promise.reject(new AtspiReadError('the AT-SPI reader is closed'));
    const child = (this.child ??= this.spawn());
    const id = (this.lastId += 1);
    const what = `${path.basename(module)} ${[pid, ...args].join(' ')}`;
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending = undefined;
        void this.kill();
        reject(new AtspiReadError(`AT-SPI read ${what} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      const settle = (): void => {
        clearTimeout(timer);
        this.pending = undefined;
      };
      this.pending = {
        id,
        resolve: (value) => {
          settle();
          resolve(value);
        },
        reject: (err) => {
          settle();
          reject(new AtspiReadError(`AT-SPI read ${what}: ${err.message}`));
        },
      };
      child.stdin?.write(`${JSON.stringify({ id, module, pid, args, timeoutMs })}\n`);
    });
  }

  private spawn(): ChildProcess {
    // Its own process group, as every desktop process: killing the group leaves nothing behind.
    const child = spawn(this.options.python, [READER], {
      env: { ...this.options.env, ATSPI_NO_CACHE: '1' },
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.buffered = '';
    this.stderr = '';
    child.stdin?.on('error', () => undefined); // a reader that died: its exit says so
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => this.onOutput(chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-STDERR_TAIL);
    });
    child.once('error', (err) => this.onExit(child, `could not start ${this.options.python}: ${err.message}`));
    child.once('exit', (code, signal) => this.onExit(child, signal !== null ? `the reader was killed by ${signal}` : `the reader exited with code ${code ?? '?'}`));
    return child;
  }

  private onOutput(chunk: string): void {
    this.buffered += chunk;
    for (let end = this.buffered.indexOf('\n'); end >= 0; end = this.buffered.indexOf('\n')) {
      const line = this.buffered.slice(0, end);
      this.buffered = this.buffered.slice(end + 1);
      this.onAnswer(line);
    }
  }

  private onAnswer(line: string): void {
    const pending = this.pending;
    if (pending === undefined) return; // the answer to a read that timed out
    let answer: { id?: unknown; ok?: unknown; error?: unknown };
    try {
      answer = JSON.parse(line) as typeof answer;
    } catch {
      pending.reject(new Error(`the reader printed ${JSON.stringify(line.slice(0, 200))}, not JSON`));
      void this.kill();
      return;
    }
    if (answer.id !== pending.id) return;
    if (typeof answer.error === 'string') pending.reject(new Error(answer.error));
    else if ('ok' in answer) pending.resolve(answer.ok);
    else pending.reject(new Error(`the reader answered ${line.slice(0, 200)}`));
  }

  private onExit(child: ChildProcess, how: string): void {
    if (this.child !== child) return;
    this.child = undefined;
    const stderr = this.stderr.trim();
    this.pending?.reject(new Error(`${how}${stderr === '' ? '' : `: ${stderr.slice(-500)}`}`));
  }

  /** SIGKILLs the reader's group and waits for it to exit. */
  private async kill(): Promise<void> {
    const child = this.child;
    if (child === undefined) return;
    this.child = undefined;
    if (child.pid === undefined) return; // it never started
    const exited = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
    await exited;
  }
}

export interface StateReaderOptions {
  /** The desktop's reader. */
  readonly reader: AtspiReader;
  /** The app process to read. */
  readonly pid: number;
  /** How long the read may take before the reader counts as hung (it is killed, and the read fails). */
  readonly timeoutMs: number;
}

/** Reads `pid` with the app's reader `script` and validates what it returns; throws when the bus or the app does not answer in time. */
export async function readAtspiState<S extends z.ZodType>(script: string, schema: S, options: StateReaderOptions, args: readonly string[] = []): Promise<z.output<S>> {
  return schema.parse(await options.reader.read(script, options.pid, args, options.timeoutMs));
}
