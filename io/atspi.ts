import * as path from 'node:path';
import type { z } from 'zod';
import { runCommand, type Env } from './process';

/**
 * Runs an app's accessibility-tree reader (a python script beside its driver, using the system
 * python's pyatspi) and validates the JSON it prints. Each app has its own script and schema;
 * how they are run is the same.
 */

export interface StateReaderOptions {
  readonly python: string;
  /** The display's environment: AT_SPI_BUS_ADDRESS says which accessibility bus to read. */
  readonly env: Env;
  /** The app process to read. */
  readonly pid: number;
  readonly timeoutMs: number;
}

/**
 * A reader script beside the compiled module in `dir` (its `__dirname`), in the source tree: build/
 * holds only compiled TypeScript, so `build/apps/kalgebra/local` reads from `apps/kalgebra/local`.
 */
export const readerScript = (dir: string, script: string): string => path.join(SOURCE_ROOT, path.relative(BUILD_ROOT, dir), script);

/** This module is build/io/atspi.js once compiled. */
const BUILD_ROOT = path.resolve(__dirname, '..');
const SOURCE_ROOT = path.resolve(__dirname, '..', '..');

/** Runs `script PID [args]` and parses its output; throws when the bus or the app does not answer in time. */
export async function readAtspiState<S extends z.ZodType>(script: string, schema: S, options: StateReaderOptions, args: readonly string[] = []): Promise<z.output<S>> {
  const out = await runCommand(options.python, [script, String(options.pid), ...args], { env: options.env, timeoutMs: options.timeoutMs });
  return schema.parse(JSON.parse(out.toString('utf8')));
}
