import { connect, type Socket } from 'node:net';

/**
 * A client of QEMU's machine protocol (QMP) on the VM's unix socket: JSON objects one per line;
 * the server greets first, `qmp_capabilities` leaves negotiation, then each command gets one
 * `return` or `error` answer in order, with asynchronous `event`s in between (kept, not awaited).
 * One command at a time, as the protocol answers them in order anyway.
 */

export class QmpError extends Error {
  constructor(readonly command: string, readonly errorClass: string, readonly description: string) {
    super(`QMP ${command}: ${errorClass}: ${description}`);
    this.name = 'QmpError';
  }
}

interface Waiting {
  readonly command: string;
  resolve(value: unknown): void;
  reject(err: Error): void;
}

export class QmpClient {
  private buffered = '';
  private waiting: Waiting[] = [];
  private closedWith: Error | undefined;
  /** The events QEMU sent, oldest first (STOP, RESUME, SHUTDOWN, ...). */
  readonly events: string[] = [];

  private constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.receive(chunk));
    const close = (err?: Error) => this.fail(err ?? new Error('QMP socket closed'));
    socket.on('error', close);
    socket.on('close', () => close());
  }

  /** Connects, waits for the greeting and leaves capabilities negotiation. */
  static async connect(socketPath: string, timeoutMs = 10_000): Promise<QmpClient> {
    const socket = connect(socketPath);
    const client = new QmpClient(socket);
    const greeted = new Promise<unknown>((resolve, reject) => client.waiting.push({ command: 'greeting', resolve, reject }));
    await withTimeout(greeted, timeoutMs, `QMP greeting on ${socketPath}`);
    await client.execute('qmp_capabilities', undefined, timeoutMs);
    return client;
  }

  /** Runs a QMP command; its `return` value, or a QmpError with QEMU's class and description. */
  execute(command: string, args?: Record<string, unknown>, timeoutMs = 60_000): Promise<unknown> {
    if (this.closedWith !== undefined) return Promise.reject(this.closedWith);
    const answer = new Promise<unknown>((resolve, reject) => this.waiting.push({ command, resolve, reject }));
    this.socket.write(`${JSON.stringify(args === undefined ? { execute: command } : { execute: command, arguments: args })}\n`);
    return withTimeout(answer, timeoutMs, `QMP ${command}`);
  }

  /** A monitor (HMP) command through QMP, for those QMP lacks in QEMU 7 (savevm, loadvm); its text, which is where HMP puts its errors. */
  async human(commandLine: string, timeoutMs = 120_000): Promise<string> {
    const text = await this.execute('human-monitor-command', { 'command-line': commandLine }, timeoutMs);
    return typeof text === 'string' ? text : '';
  }

  close(): void {
    this.socket.destroy();
  }

  private receive(chunk: string): void {
    this.buffered += chunk;
    let newline: number;
    while ((newline = this.buffered.indexOf('\n')) >= 0) {
      const line = this.buffered.slice(0, newline).trim();
      this.buffered = this.buffered.slice(newline + 1);
      if (line !== '') this.message(JSON.parse(line) as Record<string, unknown>);
    }
  }

  private message(message: Record<string, unknown>): void {
    if (typeof message.event === 'string') {
      this.events.push(message.event);
      return;
    }
    const waiting = this.waiting.shift();
    if (waiting === undefined) return;
    if ('QMP' in message || 'return' in message) return waiting.resolve(message.return);
    const error = (message.error ?? {}) as { class?: string; desc?: string };
    waiting.reject(new QmpError(waiting.command, error.class ?? 'GenericError', error.desc ?? JSON.stringify(message)));
  }

  private fail(err: Error): void {
    this.closedWith ??= err;
    for (const waiting of this.waiting.splice(0)) waiting.reject(new Error(`${waiting.command}: ${err.message}`));
  }
}

function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${timeoutMs / 1000} s`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
