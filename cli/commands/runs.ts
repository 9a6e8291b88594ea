import type { WorkflowExecutionInfo } from '@temporalio/client';
import { Option, type Command } from 'commander';
import { formatHistory, summarizeHistory } from '../../client/history';
import { listRuns, runAttributes, STATUS_NAMES } from '../../client/runs';
import { json, print, UsageError, type LazyContext } from '../context';
import { textTable } from '../table';

/** `coda runs`, `coda progress`, `coda history`: what runs and ran, read from Temporal. */

function runRow(e: WorkflowExecutionInfo): string[] {
  const { software, stage, run, round } = runAttributes(e);
  return [e.workflowId, e.type, e.status.name, software, stage, run, String(round ?? ''), e.startTime.toISOString().replace('T', ' ').slice(0, 19)];
}

type RunsOptions = { limit: string; json?: boolean; type?: string; software?: string; stage?: string; run?: string; status?: string; round?: string };

async function runs(ctx: LazyContext, options: RunsOptions): Promise<void> {
  if (!/^\d{1,6}$/.test(options.limit) || Number(options.limit) < 1) throw new UsageError(`--limit: expected a number of rows from 1 to 999999, got "${options.limit}"`);
  const { rows: executions, query } = await listRuns(await ctx().client(), options, Number(options.limit));
  const rows = executions.map(runRow);
  if (options.json) for (const r of rows) print(JSON.stringify({ workflowId: r[0], type: r[1], status: r[2], software: r[3], stage: r[4], run: r[5], round: r[6], started: r[7] }));
  else print(rows.length === 0 ? `no workflows${query === '' ? '' : ` match ${query}`}` : textTable([['WORKFLOW ID', 'TYPE', 'STATUS', 'SOFTWARE', 'STAGE', 'RUN', 'ROUND', 'STARTED (UTC)'], ...rows]));
}

export function registerRuns(program: Command, ctx: LazyContext): void {
  program
    .command('runs')
    .description('workflows with status, software, stage, run and round (Temporal visibility)')
    .option('--type <workflowType>', 'e.g. evaluation, rolloutBatch, rollout, judgeTrajectory')
    .option('--software <name>')
    .option('--stage <name>')
    .option('--run <id>')
    .option('--round <n>')
    .addOption(new Option('--status <status>').choices(Object.keys(STATUS_NAMES)))
    .option('--limit <n>', 'most rows', '30')
    .option('--json', 'one JSON object per workflow')
    .action((options: RunsOptions) => runs(ctx, options));

  program
    .command('progress <workflowId>')
    .description("the workflow's progress query")
    .action(async (workflowId: string) => {
      print(json(await (await ctx().client()).workflow.getHandle(workflowId).query('progress')));
    });

  program
    .command('history <workflowId>')
    .description('a readable summary of the event history: activities, retries, failures, children, timers, continue-as-new')
    .option('--all', 'every line of the timeline')
    .option('--run-id <id>', 'a given run (default: the latest)')
    .action(async (workflowId: string, options: { all?: boolean; runId?: string }) => {
      const history = await (await ctx().client()).workflow.getHandle(workflowId, options.runId).fetchHistory();
      print(formatHistory(workflowId, summarizeHistory(history.events ?? []), options.all ? Number.POSITIVE_INFINITY : 60));
    });
}
