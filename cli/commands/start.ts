import type { Client } from '@temporalio/client';
import { SingleBar } from 'cli-progress';
import { Option, type Command } from 'commander';
import { COMPARISON_NOTE } from '../../core/report';
import { workflowUrl } from '../../client/connection';
import { json, print, type Context, type LazyContext } from '../context';
import { startRequest, type StartOptions } from '../start';
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

/** Each `coda start` subcommand, in the order help lists them: the kind startRequest builds, and its options. */
const START_COMMANDS: ReadonlyArray<readonly [kind: string, define: (start: Command) => Command]> = [
  [
    'batch',
    (start) =>
      start
        .command('batch')
        .description('rollouts of a task set: tasks x attempts')
        .requiredOption('--software <name>', 'e.g. KAlgebra')
        .option('--attempts <k>', 'attempts per task', '1')
        .option('--tasks <ids>', 'comma-separated task ids (default: all)')
        .option('--task-set <version>', 'a generated task set instead of the real tasks')
        .option('--run <id>', 'run id (default: batch-<time>)')
        .option('--stage <name>', 'CodaStage of the rollouts', 'evaluation')
        .addOption(new Option('--planner <name=model...>', 'the planner checkpoint to run')),
  ],
  [
    'specialization',
    (start) =>
      start
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
  ],
  [
    'generalization',
    (start) =>
      start
        .command('generalization')
        .description('train one generalist by SFT on the judged trajectories of the specialists, and evaluate them all')
        .addOption(new Option('--specialist <software=checkpoint...>', 'one specialist checkpoint per software').makeOptionMandatory())
        .option('--tasks-per-software <n>', 'generated tasks each specialist rolls out on')
        .option('--attempts <k>', 'rollouts per task')
        .option('--per-software-cap <n>', 'most successful trajectories of one software in the SFT data')
        .option('--evaluation-attempts <k>', 'k of the final evaluation')
        .addOption(new Option('--evaluation-tasks <software:ids...>', 'the real tasks of a software the evaluation runs, e.g. KAlgebra:A-01,C-03 (default: all)'))
        .option('--run <id>', 'run id (default: gen-<time>)'),
  ],
  [
    'evaluation',
    (start) =>
      start
        .command('evaluation')
        .description('Average@k / Pass@k of planner checkpoints on the real tasks, with a report')
        .option('--series <name>', 'reports of a series are compared with the previous one')
        .option('--software <names>', 'comma-separated (default: every software)')
        .option('--attempts <k>', 'k (default: evaluation.attempts)')
        .addOption(new Option('--tasks <software:ids...>', 'e.g. KAlgebra:A-01,C-05'))
        .addOption(new Option('--planner <name=model...>', 'rows of the report (default: the planner endpoint)'))
        .option('--run <id>', 'run id (default: eval-<time>)'),
  ],
  [
    'task-generation',
    (start) =>
      start
        .command('task-generation')
        .description('a versioned task set written by the task-generator model')
        .requiredOption('--software <name>', 'e.g. KAlgebra')
        .option('--count <n>', 'most tasks to keep (default: taskGeneration.maxTasks)')
        .option('--version <id>', 'the set version (default: v-<time>)')
        .option('--seeds <ids>', 'comma-separated seed task ids (default: all)'),
  ],
  [
    'judge',
    (start) =>
      start
        .command('judge')
        .description('judge one trajectory (verdict.json beside its manifest)')
        .requiredOption('--trajectory <ref>', 'RUN/SOFTWARE/TASK/ATTEMPT or a manifest key')
        .option('--label <label>', 'write verdicts/<label>.json instead of verdict.json'),
  ],
  [
    'judge-run',
    (start) =>
      start
        .command('judge-run')
        .description('judge every trajectory of a run')
        .requiredOption('--run <id>', 'the run')
        .requiredOption('--software <name>', 'e.g. KAlgebra')
        .option('--label <label>', 'write verdicts/<label>.json instead of verdict.json')
        .option('--concurrency <n>', 'trajectories judged at once'),
  ],
];

export function registerStart(program: Command, ctx: LazyContext): void {
  const startCommand = program.command('start').description('start a workflow; prints its id and Web UI link');
  for (const [kind, define] of START_COMMANDS) {
    define(startCommand)
      .option('--wait', 'show a progress bar until it ends, then print its result')
      .action((options: StartOptions) => start(ctx(), kind, options));
  }

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
}
