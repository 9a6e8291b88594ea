#!/usr/bin/env node
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Client, WorkflowFailedError, type WorkflowExecutionInfo } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { SingleBar } from 'cli-progress';
import { Command, Option } from 'commander';
import { loadConfig, type LoadedConfig } from '../config/load';
import { attemptOfManifest, attemptPrefix, judgeEvalKeyBase, reportSeriesPrefix, safeRelative } from '../core/keys';
import { COMPARISON_NOTE } from '../core/report';
import { ValidationError } from '../core/validation';
import { createObjectStore, type ObjectStore } from '../activities/storage/object-store';
import { devEnv } from '../infra/stack';
import { connectClient, workflowUrl } from '../client/connection';
import { formatHistory, summarizeHistory } from '../client/history';
import { listRuns, runAttributes, STATUS_NAMES } from '../client/runs';
import { startViewer } from '../viewer/server';
import { syncSchedules } from './schedules';
import { taskCensus } from '../activities/tasks/census';
import { DEFAULT_TASK_ROOT } from '../activities/tasks/library';
import { formatCensus } from './tasks';
import { forTerminal } from './terminal';
import { manifestKeyOf, startRequest, type StartOptions } from './start';

/**
 * `coda`: one command for every operation on a CODA deployment (the one temporal.yaml describes,
 * or $CODA_CONFIG). Each has a plain `temporal` CLI equivalent, listed in docs/operations.md. Exit codes:
 * 0 done, 1 the operation failed, 2 bad input (nothing was started).
 */

class UsageError extends Error {}

interface Context {
  readonly config: LoadedConfig;
  client(): Promise<Client>;
  store(): ObjectStore;
}

function context(): Context {
  const config = loadConfig();
  let client: Promise<Client> | undefined;
  let store: ObjectStore | undefined;
  return {
    config,
    client: () => (client ??= connectClient(config)),
    // The dev stack's credentials fill in where the environment names none (as `npm run up` does).
    store: () => (store ??= createObjectStore(config.storage, devEnv(config))),
  };
}

/** Everything the CLI prints goes through forTerminal: task text, replies and stored objects reach the terminal in it. */
const print = (text: string): void => void process.stdout.write(`${forTerminal(text)}\n`);
const json = (value: unknown): string => JSON.stringify(value, null, 2);

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

function runRow(e: WorkflowExecutionInfo): string[] {
  const { software, stage, run, round } = runAttributes(e);
  return [e.workflowId, e.type, e.status.name, software, stage, run, String(round ?? ''), e.startTime.toISOString().replace('T', ' ').slice(0, 19)];
}

const table = (header: string[], rows: string[][]): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  return [header, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
};

/** Writes the objects below `base` into `out` in the same layout; nothing is written when a key would land outside `out`. */
async function fetchKeys(store: ObjectStore, keys: readonly string[], base: string, out: string): Promise<number> {
  const files = keys.map((key) => ({ key, file: path.join(out, safeRelative(key.slice(base.length).replace(/^\//, ''), store.uri(key))) }));
  let bytes = 0;
  for (const { key, file } of files) {
    const body = await store.get(key);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, body);
    bytes += body.length;
  }
  return bytes;
}

async function main(argv: string[]): Promise<void> {
  const program = new Command('coda')
    .description('Operate a CODA deployment on Temporal (temporal.yaml, or $CODA_CONFIG)')
    .showHelpAfterError()
    .configureOutput({ writeOut: (text) => process.stdout.write(forTerminal(text)), writeErr: (text) => process.stderr.write(forTerminal(text)) })
    .exitOverride();
  const ctx = (() => {
    let made: Context | undefined;
    return () => (made ??= context());
  })();

  const startCommand = program.command('start').description('start a workflow; prints its id and Web UI link');
  const withWait = (command: Command): Command => command.option('--wait', 'show a progress bar until it ends, then print its result');
  withWait(
    startCommand
      .command('batch')
      .description('rollouts of a task set: tasks x attempts')
      .requiredOption('--software <name>', 'e.g. KAlgebra')
      .option('--attempts <k>', 'attempts per task', '1')
      .option('--tasks <ids>', 'comma-separated task ids (default: all)')
      .option('--task-set <version>', 'a generated task set instead of the real tasks')
      .option('--run <id>', 'run id (default: batch-<time>)')
      .option('--stage <name>', 'CodaStage of the rollouts', 'evaluation')
      .addOption(new Option('--planner <name=model...>', 'the planner checkpoint to run')),
  ).action((options: StartOptions) => start(ctx(), 'batch', options));
  withWait(
    startCommand
      .command('specialization')
      .description('specialize a planner on one software: rounds of task generation, rollouts, judging, GRPO training, evaluation')
      .requiredOption('--software <name>', 'e.g. KAlgebra')
      .option('--rounds <n>', 'rounds (default: specialization.rounds)')
      .option('--tasks-per-round <n>', 'generated tasks per round')
      .option('--attempts <k>', 'rollouts per task per round')
      .option('--evaluation-attempts <k>', 'k of the evaluation after each round')
      .option('--evaluation-tasks <ids>', 'comma-separated real task ids each round is evaluated on (default: all)')
      .option('--train-on-real-tasks', 'also train on the rollouts of the real tasks (off by default: they are the evaluation set)')
      .option('--judge-precision-floor <p>', "stop a round before training when the judge's precision on the real tasks is below p (0: never; default: specialization.judgePrecisionFloor)")
      .option('--max-staleness <n>', "1: collect round n+1 with the served planner while round n trains (0: one stage after another; default: specialization.maxStaleness)")
      .option('--run <id>', 'run id (default: spec-<time>)'),
  ).action((options: StartOptions) => start(ctx(), 'specialization', options));
  withWait(
    startCommand
      .command('generalization')
      .description('train one generalist by SFT on the judged trajectories of the specialists, and evaluate them all')
      .addOption(new Option('--specialist <software=checkpoint...>', 'one specialist checkpoint per software').makeOptionMandatory())
      .option('--tasks-per-software <n>', 'generated tasks each specialist rolls out on')
      .option('--attempts <k>', 'rollouts per task')
      .option('--per-software-cap <n>', 'most successful trajectories of one software in the SFT data')
      .option('--evaluation-attempts <k>', 'k of the final evaluation')
      .addOption(new Option('--evaluation-tasks <software:ids...>', 'the real tasks of a software the evaluation runs, e.g. KAlgebra:A-01,C-03 (default: all)'))
      .option('--run <id>', 'run id (default: gen-<time>)'),
  ).action((options: StartOptions) => start(ctx(), 'generalization', options));
  withWait(
    startCommand
      .command('evaluation')
      .description('Average@k / Pass@k of planner checkpoints on the real tasks, with a report')
      .option('--series <name>', 'reports of a series are compared with the previous one')
      .option('--software <names>', 'comma-separated (default: every software)')
      .option('--attempts <k>', 'k (default: evaluation.attempts)')
      .addOption(new Option('--tasks <software:ids...>', 'e.g. KAlgebra:A-01,C-05'))
      .addOption(new Option('--planner <name=model...>', 'rows of the report (default: the planner endpoint)'))
      .option('--run <id>', 'run id (default: eval-<time>)'),
  ).action((options: StartOptions) => start(ctx(), 'evaluation', options));
  withWait(
    startCommand
      .command('task-generation')
      .description('a versioned task set written by the task-generator model')
      .requiredOption('--software <name>', 'e.g. KAlgebra')
      .option('--count <n>', 'most tasks to keep (default: taskGeneration.maxTasks)')
      .option('--version <id>', 'the set version (default: v-<time>)')
      .option('--seeds <ids>', 'comma-separated seed task ids (default: all)'),
  ).action((options: StartOptions) => start(ctx(), 'task-generation', options));
  withWait(
    startCommand
      .command('judge')
      .description('judge one trajectory (verdict.json beside its manifest)')
      .requiredOption('--trajectory <ref>', 'RUN/SOFTWARE/TASK/ATTEMPT or a manifest key')
      .option('--label <label>', 'write verdicts/<label>.json instead of verdict.json'),
  ).action((options: StartOptions) => start(ctx(), 'judge', options));
  withWait(
    startCommand
      .command('judge-run')
      .description('judge every trajectory of a run')
      .requiredOption('--run <id>', 'the run')
      .requiredOption('--software <name>', 'e.g. KAlgebra')
      .option('--label <label>', 'write verdicts/<label>.json instead of verdict.json')
      .option('--concurrency <n>', 'trajectories judged at once'),
  ).action((options: StartOptions) => start(ctx(), 'judge-run', options));

  program
    .command('judge-eval')
    .description("compare judge strategies on a run's labelled trajectories; prints precision and recall (the paper's table 2)")
    .requiredOption('--run <id>', 'the rollouts to judge (their evaluators give the truth)')
    .requiredOption('--software <name>', 'e.g. KAlgebra')
    .option('--strategies <labels>', 'comma-separated labels of judging.strategies (default: all)')
    .option('--id <id>', 'the comparison id (default: je-<time>)')
    .action(async (options: StartOptions) => {
      const c = ctx();
      const request = startRequest(c.config, 'judge-eval', options);
      const client = await c.client();
      await client.workflow.start(request.workflowType, { taskQueue: c.config.taskQueues.orchestrator, workflowId: request.workflowId, args: [request.input] });
      print(`started judgeEvaluation ${request.workflowId}\n  ${workflowUrl(c.config, request.workflowId)}`);
      const result = (await watch(client, request.workflowId)) as { markdownKey: string };
      print((await c.store().get(result.markdownKey)).toString('utf8'));
      print(`report: ${c.store().uri(result.markdownKey)}`);
    });

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
    .action(async (options: { limit: string; json?: boolean; type?: string; software?: string; stage?: string; run?: string; status?: string; round?: string }) => {
      if (!/^\d{1,6}$/.test(options.limit) || Number(options.limit) < 1) throw new UsageError(`--limit: expected a number of rows from 1 to 999999, got "${options.limit}"`);
      const { rows: executions, query } = await listRuns(await ctx().client(), options, Number(options.limit));
      const rows = executions.map(runRow);
      if (options.json) for (const r of rows) print(JSON.stringify({ workflowId: r[0], type: r[1], status: r[2], software: r[3], stage: r[4], run: r[5], round: r[6], started: r[7] }));
      else print(rows.length === 0 ? `no workflows${query === '' ? '' : ` match ${query}`}` : table(['WORKFLOW ID', 'TYPE', 'STATUS', 'SOFTWARE', 'STAGE', 'RUN', 'ROUND', 'STARTED (UTC)'], rows));
    });

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

  program
    .command('stop-after-round <workflowId>')
    .description('ask a specialization to stop once the round it is in is done')
    .action(async (workflowId: string) => {
      await (await ctx().client()).workflow.getHandle(workflowId).signal('stopAfterRound');
      print(`${workflowId} will stop after its current round`);
    });
  program
    .command('cancel <workflowId>')
    .description('ask the workflow to stop (it cleans up: running rollouts release their desktops)')
    .action(async (workflowId: string) => {
      await (await ctx().client()).workflow.getHandle(workflowId).cancel();
      print(`cancellation requested for ${workflowId}`);
    });
  program
    .command('terminate <workflowId>')
    .description('stop the workflow at once, without cleanup')
    .option('--reason <text>', 'recorded in its history', 'terminated with coda terminate')
    .action(async (workflowId: string, options: { reason: string }) => {
      await (await ctx().client()).workflow.getHandle(workflowId).terminate(options.reason);
      print(`terminated ${workflowId}`);
    });
  program
    .command('retry <workflowId>')
    .description('run a closed workflow again from its start, same id and input (finished rollouts, verdicts and sets are reused)')
    .action(async (workflowId: string) => {
      const c = ctx();
      const client = await c.client();
      const handle = client.workflow.getHandle(workflowId);
      const history = await handle.fetchHistory();
      const firstTask = (history.events ?? []).find((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
      if (firstTask?.eventId == null) throw new UsageError(`${workflowId} has no completed workflow task to restart from`);
      const described = await handle.describe();
      const reset = await client.workflowService.resetWorkflowExecution({
        namespace: c.config.temporal.namespace,
        workflowExecution: { workflowId, runId: described.runId },
        reason: 'retried with coda retry',
        workflowTaskFinishEventId: firstTask.eventId,
        requestId: `coda-retry-${Date.now()}`,
      });
      print(`retrying ${workflowId} from its start as run ${reset.runId}\n  ${workflowUrl(c.config, workflowId)}`);
    });

  const schedules = program.command('schedules').description("the schedules of temporal.yaml's `schedules` (the nightly evaluation)");
  schedules
    .command('list')
    .description('every schedule, with its next run and whether it is paused')
    .action(async () => {
      const c = ctx();
      const client = await c.client();
      const rows: string[][] = [];
      for await (const s of client.schedule.list()) {
        const described = await client.schedule.getHandle(s.scheduleId).describe();
        const action = described.action.type === 'startWorkflow' ? described.action.workflowType : described.action.type;
        const cron = c.config.schedules.find((d) => d.id === s.scheduleId)?.cron ?? '(not in temporal.yaml)';
        rows.push([s.scheduleId, action, cron, described.state.paused ? 'paused' : 'active', described.info.nextActionTimes[0]?.toISOString() ?? '-', String(described.info.recentActions.length)]);
      }
      print(rows.length === 0 ? 'no schedules (coda schedules create makes those of temporal.yaml)' : table(['SCHEDULE', 'WORKFLOW', 'CRON', 'STATE', 'NEXT RUN', 'RECENT RUNS'], rows));
    });
  schedules
    .command('create')
    .description("create or update temporal.yaml's schedules in place (idempotent)")
    .action(async () => {
      const c = ctx();
      const lines = await syncSchedules(await c.client(), c.config);
      print(lines.length > 0 ? lines.join('\n') : 'temporal.yaml declares no schedules');
    });
  schedules
    .command('trigger <scheduleId>')
    .description('start a run now')
    .action(async (scheduleId: string) => {
      await (await ctx().client()).schedule.getHandle(scheduleId).trigger();
      print(`triggered ${scheduleId}`);
    });
  for (const [name, paused] of [
    ['pause', true],
    ['unpause', false],
  ] as const) {
    schedules
      .command(`${name} <scheduleId>`)
      .description(paused ? 'stop starting runs until unpaused' : 'start runs again')
      .option('--note <text>', 'why, shown in the Web UI')
      .action(async (scheduleId: string, options: { note?: string }) => {
        const handle = (await ctx().client()).schedule.getHandle(scheduleId);
        await (paused ? handle.pause(options.note) : handle.unpause(options.note));
        print(`${paused ? 'paused' : 'unpaused'} ${scheduleId}`);
      });
  }

  const fetchCommand = program.command('fetch').description('copy stored results from S3 into local files');
  fetchCommand
    .command('trajectory <ref>')
    .description('manifest, screenshots, decisions, verdicts and judge votes of one attempt (RUN/SOFTWARE/TASK/ATTEMPT or a manifest key)')
    .requiredOption('--out <dir>', 'where to write them (the S3 layout below the attempt)')
    .action(async (ref: string, options: { out: string }) => {
      const c = ctx();
      const key = manifestKeyOf(c.config, ref);
      const base = attemptPrefix(c.config.storage.prefix, attemptOfManifest(c.config.storage.prefix, key));
      const keys = await c.store().list(`${base}/`);
      if (!keys.includes(key)) throw new UsageError(`no trajectory at ${c.store().uri(key)}`);
      const bytes = await fetchKeys(c.store(), keys, base, options.out);
      print(`${keys.length} files (${(bytes / 1024).toFixed(0)} KiB) from ${c.store().uri(`${base}/`)} into ${options.out}`);
    });
  fetchCommand
    .command('report <which>')
    .description('an evaluation report (JSON and Markdown): a series name (its latest report), SERIES/STAMP-RUN, or judge-evals/ID')
    .requiredOption('--out <dir>', 'where to write it')
    .action(async (which: string, options: { out: string }) => {
      const c = ctx();
      const prefix = c.config.storage.prefix;
      let base: string;
      if (which.startsWith('judge-evals/')) base = judgeEvalKeyBase(prefix, which.slice('judge-evals/'.length));
      else if (which.includes('/')) base = `${reportSeriesPrefix(prefix, which.split('/')[0]!)}/${which.split('/').slice(1).join('/').replace(/\.(json|md)$/, '')}`;
      else {
        const latest = (await c.store().list(`${reportSeriesPrefix(prefix, which)}/`)).filter((k) => k.endsWith('.json')).sort().at(-1);
        if (latest === undefined) throw new UsageError(`the series "${which}" has no report yet`);
        base = latest.slice(0, -'.json'.length);
      }
      const keys = [`${base}.json`, `${base}.md`];
      for (const key of keys) if (!(await c.store().exists(key))) throw new UsageError(`no report at ${c.store().uri(key)}`);
      await fetchKeys(c.store(), keys, path.posix.dirname(base), options.out);
      print(`${keys.map((k) => path.join(options.out, path.posix.basename(k))).join('\n')}`);
    });

  program
    .command('tasks')
    .description('for a folder of task files (one subfolder per application): files, how many parse, how many each host and host kind runs, and why not')
    .option('--folder <dir>', 'the folder of task files', DEFAULT_TASK_ROOT)
    .option('--config <file>', 'the deployment (default: $CODA_CONFIG or temporal.yaml)')
    .option('--markdown', 'the table as Markdown (the README has it)')
    .option('--json', 'everything as JSON, per task too')
    .action(async (options: { folder: string; config?: string; markdown?: boolean; json?: boolean }) => {
      if (!existsSync(options.folder)) throw new UsageError(`no folder ${options.folder}`);
      const census = await taskCensus({ folder: options.folder, config: loadConfig(options.config) });
      // Waits until the text is written: the process exits right after, and a pipe takes large output in several writes.
      const text = forTerminal(`${options.json ? json(census) : formatCensus(census, options.markdown)}\n`);
      await new Promise<void>((resolve, reject) => process.stdout.write(text, (err) => (err ? reject(err) : resolve())));
    });

  try {
    await program.parseAsync(argv);
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
