import type { Client } from '@temporalio/client';
import { SingleBar } from 'cli-progress';
import { Option, type Command } from 'commander';
import { COMPARISON_NOTE } from '../../core/report';
import { workflowUrl } from '../../client/connection';
import { json, print, type Context, type LazyContext } from '../context';
import { startRequest, type StartOptions } from '../start';
import { START_KINDS, type AnyStartKind } from '../start-options';
import { forTerminal } from '../terminal';

/** `coda start <workflow>` and `coda judge-eval`: start a workflow from its options, and wait for it where asked. */

/** Polls the workflow's `progress` query into a progress bar until it closes; returns its result. */
async function watch(client: Client, workflowId: string): Promise<unknown> {
  const handle = client.workflow.getHandle(workflowId);
  const bar = new SingleBar({ format: ' {bar} {value}/{total} {status}', hideCursor: true, clearOnComplete: false }, { barCompleteChar: '#', barIncompleteChar: '.', format: '' });
  let started = false;
  const tick = async (): Promise<void> => {
    const progress = (await handle.query('progress').catch(() => undefined)) as Record<string, unknown> | undefined;
    if (progress === undefined) return;
    const total = Number(progress.total ?? 0);
    const value = Number(progress.completed ?? 0);
    const status = forTerminal([progress.status, progress.current, progress.stage].filter((v) => typeof v === 'string').join(' '));
    if (!started) {
      bar.start(Math.max(total, 1), value, { status });
      started = true;
    } else {
      bar.setTotal(Math.max(total, 1));
      bar.update(value, { status });
    }
  };
  const timer = setInterval(() => void tick(), 1_000);
  try {
    await tick();
    const result = await handle.result();
    await tick();
    return result;
  } finally {
    clearInterval(timer);
    if (started) bar.stop();
  }
}

async function start(ctx: Context, kind: string, options: StartOptions & { wait?: boolean; json?: boolean }): Promise<void> {
  const request = startRequest(ctx.config, kind, options);
  const client = await ctx.client();
  await client.workflow.start(request.workflowType, {
    taskQueue: ctx.config.taskQueues.orchestrator,
    workflowId: request.workflowId,
    args: [request.input],
  });
  print(`started ${request.workflowType} ${request.workflowId}`);
  print(`  ${workflowUrl(ctx.config, request.workflowId)}`);
  if (!options.wait) return;
  const result = await watch(client, request.workflowId);
  print(json(result));
  // An evaluation's rows, a specialization's rounds: their vsBase interval is the sign-flip test's own.
  if (holdsComparison(result)) print(COMPARISON_NOTE);
}

/** Whether a workflow's result holds a comparison with the base (a `vsBase` anywhere in it). */
function holdsComparison(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([key, item]) => (key === 'vsBase' && item !== undefined) || holdsComparison(item));
}

/** A command's options, from the one table of what each kind takes (cli/start-options.ts). */
function withOptions(command: Command, kind: AnyStartKind): Command {
  for (const spec of kind.options) {
    const option = new Option(spec.flags, spec.help);
    if (spec.required) option.makeOptionMandatory();
    if (spec.shownDefault !== undefined) option.default(spec.shownDefault);
    command.addOption(option);
  }
  return command;
}

export function registerStart(program: Command, ctx: LazyContext): void {
  const startCommand = program.command('start').description('start a workflow; prints its id and Web UI link');
  for (const [kind, definition] of Object.entries(START_KINDS)) {
    if (kind === 'judge-eval') continue;
    withOptions(startCommand.command(kind).description(definition.description), definition)
      .option('--wait', 'show a progress bar until it ends, then print its result')
      .action((options: StartOptions) => start(ctx(), kind, options));
  }

  const judgeEval = START_KINDS['judge-eval'];
  withOptions(program.command('judge-eval').description(judgeEval.description), judgeEval).action(async (options: StartOptions) => {
    const c = ctx();
    const request = startRequest(c.config, 'judge-eval', options);
    const client = await c.client();
    await client.workflow.start(request.workflowType, { taskQueue: c.config.taskQueues.orchestrator, workflowId: request.workflowId, args: [request.input] });
    print(`started judgeEvaluation ${request.workflowId}\n  ${workflowUrl(c.config, request.workflowId)}`);
    const result = (await watch(client, request.workflowId)) as { markdownKey: string };
    print((await c.store().get(result.markdownKey)).toString('utf8'));
    print(`report: ${c.store().uri(result.markdownKey)}`);
  });
}
