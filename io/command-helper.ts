import { execFile } from 'node:child_process';

/**
 * The command helper's own process (io/process.ts starts it: `runCommandOutput`). It runs each
 * short command it is sent with Node's execFile, exactly as the worker would, and sends back what
 * execFile gave: starting a process from this small one costs about 1 ms of CPU, from a worker of
 * several hundred MB (the kernel copies its page tables) about 14 ms.
 */

/** A command to run: execFile's arguments. */
export interface HelperRequest {
  readonly id: number;
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly timeoutMs: number;
  readonly input: string;
}

/** How execFile reported a failure (undefined on success). */
export interface HelperFailure {
  readonly code?: number | string;
  readonly killed?: boolean;
  readonly signal?: string;
  readonly message: string;
}

export interface HelperReply {
  readonly id: number;
  readonly stdout: Uint8Array;
  readonly stderr: Uint8Array;
  readonly failure?: HelperFailure;
}

function run(request: HelperRequest): void {
  const child = execFile(
    request.command,
    [...request.args],
    { env: { ...request.env }, cwd: request.cwd, timeout: request.timeoutMs, killSignal: 'SIGKILL', maxBuffer: 256 * 1024 * 1024, encoding: 'buffer' },
    (error, stdout, stderr) => {
      const failed = error as (NodeJS.ErrnoException & { killed?: boolean; signal?: string; code?: number | string }) | null;
      const failure = failed === null ? undefined : { code: failed.code, killed: failed.killed, signal: failed.signal ?? undefined, message: failed.message };
      const reply: HelperReply = { id: request.id, stdout, stderr, ...(failure === undefined ? {} : { failure }) };
      process.send?.(reply);
    },
  );
  // A program that exits without reading its input must not crash the helper with EPIPE.
  child.stdin?.on('error', () => undefined);
  child.stdin?.end(request.input);
}

if (require.main === module) {
  process.on('message', (request: HelperRequest) => run(request));
  // The worker that started it is gone (or let it go): nothing more will come.
  process.on('disconnect', () => process.exit(0));
}
