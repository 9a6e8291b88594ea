import type { Command } from 'commander';
import { startViewer } from '../../viewer/server';
import { print, UsageError, type LazyContext } from '../context';

/** `coda view`: the web viewer, until the process is asked to stop. */
export function registerView(program: Command, ctx: LazyContext): void {
  program
    .command('view')
    .description('serve the web viewer: runs, trajectories, evaluation, training and judge pages (temporal.yaml `viewer`)')
    .option('--host <address>', 'where to listen (default: viewer.host, loopback)')
    .option('--port <port>', 'default: viewer.port')
    .action(async (options: { host?: string; port?: string }) => {
      // The same range as viewer.port: a 5-digit number above 65535 would reach listen() and end in its RangeError.
      if (options.port !== undefined && !(/^\d{1,5}$/.test(options.port) && Number(options.port) >= 1 && Number(options.port) <= 65535)) {
        throw new UsageError(`--port: expected a port number from 1 to 65535, got "${options.port}"`);
      }
      const viewer = await startViewer(ctx().config, process.env, { host: options.host, port: options.port === undefined ? undefined : Number(options.port) });
      print(`viewer at ${viewer.url}`);
      print(viewer.login.kind === 'token' ? `login: the token in ${viewer.login.tokenEnv} (HTTP Basic, any user; or Bearer)` : `warning: ${viewer.login.warning}`);
      await new Promise<void>((resolve) => ['SIGINT', 'SIGTERM'].forEach((signal) => process.once(signal, () => resolve())));
      await viewer.close();
    });
}
