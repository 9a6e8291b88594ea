#!/usr/bin/env node
import { WorkflowFailedError } from '@temporalio/client';
import { Command } from 'commander';
import { ValidationError } from '../core/validation';
import { registerControl } from './commands/control';
import { registerFetch } from './commands/fetch';
import { registerRuns } from './commands/runs';
import { registerSchedules } from './commands/schedules';
import { registerStart } from './commands/start';
import { registerTasks } from './commands/tasks';
import { registerView } from './commands/view';
import { lazyContext, UsageError } from './context';
import { forTerminal } from './terminal';

/**
 * `coda`: one command for every operation on a CODA deployment (the one temporal.yaml describes,
 * or $CODA_CONFIG). Each has a plain `temporal` CLI equivalent, listed in docs/operations.md. Exit codes:
 * 0 done, 1 the operation failed, 2 bad input (nothing was started). Each group of commands is a
 * file of cli/commands/, registered here in the order `coda --help` lists them.
 */

function program(): Command {
  const coda = new Command('coda')
    .description('Operate a CODA deployment on Temporal (temporal.yaml, or $CODA_CONFIG)')
    .showHelpAfterError()
    .configureOutput({ writeOut: (text) => process.stdout.write(forTerminal(text)), writeErr: (text) => process.stderr.write(forTerminal(text)) })
    .exitOverride();
  const ctx = lazyContext();
  registerStart(coda, ctx);
  registerRuns(coda, ctx);
  registerView(coda, ctx);
  registerControl(coda, ctx);
  registerSchedules(coda, ctx);
  registerFetch(coda, ctx);
  registerTasks(coda);
  return coda;
}

async function main(argv: string[]): Promise<void> {
  try {
    await program().parseAsync(argv);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'commander.helpDisplayed' || code === 'commander.version' || code === 'commander.help') return;
    if (typeof code === 'string' && code.startsWith('commander.')) {
      process.exitCode = 2;
      return;
    }
    throw err;
  }
}

if (require.main === module) {
  main(process.argv)
    .catch((err: unknown) => {
      const fail = (text: string, code: number): void => {
        console.error(forTerminal(text));
        process.exitCode = code;
      };
      if (err instanceof ValidationError || err instanceof UsageError) fail(err.message, 2);
      else if (err instanceof WorkflowFailedError) fail(`the workflow failed: ${err.cause?.message ?? err.message}`, 1);
      else fail(err instanceof Error ? err.message : String(err), 1);
    })
    .finally(() => setTimeout(() => process.exit(), 50).unref());
}
