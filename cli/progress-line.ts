import { forTerminal } from './terminal';

/**
 * One line of progress with its elapsed time. On a terminal it is rewritten in place; elsewhere (a
 * CI log, a pipe) a plain line is printed when the text changes, at most one per `plainEveryMs`, so
 * a log keeps a readable trace instead of a line per poll. Its text is escaped for the terminal
 * (terminal.ts): it names stages and a trainer's phase read from Temporal.
 */
export interface ProgressOutput {
  readonly isTTY?: boolean;
  readonly columns?: number;
  write(text: string): unknown;
}

export class ProgressLine {
  private readonly started: number;
  private lastText = '';
  private lastPlainAt: number | undefined;
  private readonly tty: boolean;

  constructor(
    private readonly out: ProgressOutput = process.stdout,
    private readonly plainEveryMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {
    this.tty = out.isTTY === true;
    this.started = now();
  }

  /** Seconds since the line started. */
  elapsedSeconds(): number {
    return (this.now() - this.started) / 1000;
  }

  /** Shows `text` with the elapsed time. */
  update(text: string): void {
    if (this.tty) {
      this.out.write(`\r\x1b[K${this.fit(this.withTime(text))}`);
    } else if (text !== this.lastText && (this.lastPlainAt === undefined || this.now() - this.lastPlainAt >= this.plainEveryMs)) {
      this.out.write(`${this.withTime(text)}\n`);
      this.lastPlainAt = this.now();
    } else {
      return;
    }
    this.lastText = text;
  }

  /** Ends the line with its final text (always printed, terminal or not). */
  end(text: string): void {
    this.out.write(`${this.tty ? '\r\x1b[K' : ''}${this.withTime(text)}\n`);
  }

  private withTime(text: string): string {
    return `${forTerminal(text)} (${formatElapsed(this.elapsedSeconds())})`;
  }

  /** A terminal line longer than the window would wrap, and `\r` would then rewrite only its last row. */
  private fit(text: string): string {
    const columns = this.out.columns ?? 0;
    return columns > 1 && text.length >= columns ? `${text.slice(0, columns - 2)}…` : text;
  }
}

/** Seconds as `m:ss` (`0:07`, `12:30`). */
export function formatElapsed(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds));
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
}
