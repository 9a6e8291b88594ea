import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { loadConfig, type LoadedConfig } from '../config/load';
import { connectTemporal } from '../config/temporal-connection';
import type { JudgeEvaluationSummary } from '../activities/judge/evaluation';
import { verdictFileSchema, type VerdictFile } from '../core/judge/verdict-file';
import { attemptOfManifest, verdictKey } from '../core/keys';
import { createObjectStore } from '../activities/storage/object-store';
import { startScriptedModels } from '../doubles/scripted-models/main';
import { startDaemon, stopDaemon, waitUntilHealthy } from '../infra/daemon';
import { freeDisplay, REPO_CONFIG, startEphemeralStack } from '../infra/ephemeral';
import { workerHealthy, workerSpec } from '../infra/worker-process';
import { createVmHost } from '../workers/vm-host';
import type { BatchResult } from '../workflows/rollout/batch';
import type { JudgeRunResult } from '../workflows/judging/judge';
import { cpuSeconds, mean, printTable, procKib } from './stats';
import { batchWorkflowId, judgeEvaluationWorkflowId, judgeRunWorkflowId, judgeWorkflowId } from '../workflows/names';

/**
 * Judging on the real stack with the judge doubles of temporal.yaml (dev.scriptedModels.judges):
 * 1. labelled trajectories: every KAlgebra task x `--attempts` on real KAlgebra desktops with the
 *    scripted planner (dev.scriptedModels.errorRate), the evaluators giving the truth;
 * 2. the judge strategies of temporal.yaml compared on them (what `coda judge-eval` prints), with
 *    what the low-resolution early exit saved against the all-high plan of the same votes;
 * 3. judge throughput: the deployment's judge plan over the same trajectories by ONE orchestrator
 *    worker process: trajectories per minute, votes per second, worker CPU per vote, and how much
 *    of a vote's time is the model call.
 *
 *   node build/bench/judging.js [--attempts 4] [--desktops 2]
 */

/** The judge throughput of ONE orchestrator worker over a run's trajectories. */
function printThroughput(config: LoadedConfig, m: { judged: number; votes: ReadonlyArray<VerdictFile['votes'][number]>; seconds: number; cpu: number; peak: number }): void {
  const plan = config.judging.plan;
  const { votes, seconds } = m;
  printTable(
    `judge throughput: ONE orchestrator worker, plan ${plan.lowResolutionVotes} low + ${plan.highResolutionVotes} high (${plan.judges.join(', ')}), ${config.judging.concurrency} trajectories at once, judge doubles answering at once`,
    [
      ['trajectories', 'votes', 'seconds', 'trajectories/min', 'votes/s', 'worker CPU per vote', 'model call per vote (mean)', 'images per vote', 'worker peak RSS'],
      [
        String(m.judged),
        String(votes.length),
        seconds.toFixed(1),
        ((m.judged / seconds) * 60).toFixed(0),
        (votes.length / seconds).toFixed(1),
        `${((m.cpu / votes.length) * 1000).toFixed(0)} ms`,
        `${mean(votes.map((v) => v.cost.latencyMs)).toFixed(0)} ms`,
        mean(votes.map((v) => v.cost.images)).toFixed(1),
        `${(m.peak / 1024).toFixed(0)} MiB`,
      ],
    ],
  );
}

/** Where a vote's time goes, from the judge workflows' histories: waiting for a worker (schedule to start), the castVote activity (start to close). */
async function voteTimes(client: Client, workflowIds: readonly string[]): Promise<{ waits: number[]; runs: number[] }> {
  const at = (e: { eventTime?: { seconds?: unknown; nanos?: number | null } | null }) => Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6;
  const waits: number[] = [];
  const runs: number[] = [];
  for (const workflowId of workflowIds) {
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const scheduled = new Map<string, number>();
    const started = new Map<string, number>();
    for (const e of history.events ?? []) {
      if (e.activityTaskScheduledEventAttributes?.activityType?.name === 'castVote') scheduled.set(String(e.eventId), at(e));
      const s = e.activityTaskStartedEventAttributes;
      if (s && scheduled.has(String(s.scheduledEventId))) {
        started.set(String(s.scheduledEventId), at(e));
        waits.push(at(e) - scheduled.get(String(s.scheduledEventId))!);
      }
      const c = e.activityTaskCompletedEventAttributes;
      if (c && started.has(String(c.scheduledEventId))) runs.push(at(e) - started.get(String(c.scheduledEventId))!);
    }
  }
  return { waits, runs };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { attempts: { type: 'string', default: '4' }, desktops: { type: 'string', default: '2' }, 'low-as-high': { type: 'boolean', default: false } },
  });
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const servers = await startEphemeralStack('coda-judging');
  const dir = mkdtempSync(path.join(tmpdir(), 'coda-judging-'));
  try {
    const base = loadConfig(REPO_CONFIG, servers.env);
    const scripted = base.dev.scriptedModels!;
    // --low-as-high: judge doubles as accurate at low resolution as at high, to see what the early exit changes then.
    const judges = values['low-as-high'] ? Object.fromEntries(Object.entries(scripted.judges).map(([m, r]) => [m, { ...r, low: r.high }])) : scripted.judges;
    const models = await startScriptedModels({ ...base, dev: { ...base.dev, scriptedModels: { ...scripted, judges } } }, { port: 0, env: servers.env });
    console.log(`judge doubles' error rates: ${JSON.stringify(judges)}`);
    const env = {
      ...servers.env,
      CODA_PLANNER_URL: models.url,
      CODA_EXECUTOR_URL: models.url,
      CODA_JUDGE_A_URL: models.url,
      CODA_JUDGE_B_URL: models.url,
      CODA_TASKGEN_URL: models.url,
      CODA_LOCAL_DESKTOPS: values.desktops,
    };
    const loaded = loadConfig(REPO_CONFIG, env);
    const config = { ...loaded, hosts: loaded.hosts.map((h) => (h.kind === 'local' ? { ...h, displayBase: freeDisplay(600) } : h)) };
    const store = createObjectStore(config.storage, env);
    const connection = await connectTemporal(config, NativeConnection);
    const client = new Client({ connection, namespace: config.temporal.namespace });
    const vmHost = await createVmHost({ config: { ...config, dataDir: dir }, connection, hostId: config.hosts[0]!.id, env });
    const hostRunning = vmHost.run();
    const orchestrator = startDaemon(config.dataDir, workerSpec(config, 'orchestrator', [], env));
    const pid = orchestrator.pid!;
    try {
      await waitUntilHealthy(config.dataDir, 'orchestrator', () => workerHealthy(config, 'orchestrator', config.taskQueues.orchestrator), 90_000);
      const execute = <T>(type: string, workflowId: string, input: unknown): Promise<T> =>
        client.workflow.execute(type, { taskQueue: config.taskQueues.orchestrator, workflowId, args: [input] }) as Promise<T>;
      const run = `judgebench${Date.now()}`;

      const rolloutsStarted = Date.now();
      const batch = await execute<BatchResult>('rolloutBatch', batchWorkflowId(run, 'KAlgebra'), { run, software: 'KAlgebra', attempts: Number(values.attempts) });
      console.log(`\n${batch.completed} KAlgebra rollouts on ${values.desktops} real desktops in ${((Date.now() - rolloutsStarted) / 1000).toFixed(0)} s: ${batch.passed} passed their checks, ${batch.failed} failed, ${batch.errors} ended in error`);

      const summary = await execute<JudgeEvaluationSummary>('judgeEvaluation', judgeEvaluationWorkflowId(run), { run, software: 'KAlgebra', id: run });
      console.log(`\n${(await store.get(summary.markdownKey)).toString('utf8')}`);

      const label = 'throughput';
      const cpuBefore = cpuSeconds(pid);
      let peak = procKib(pid, 'VmRSS');
      const sampler = setInterval(() => (peak = Math.max(peak, procKib(pid, 'VmRSS'))), 250);
      const started = Date.now();
      const judged = await execute<JudgeRunResult>('judgeRun', judgeRunWorkflowId(run, 'KAlgebra', label), { run, software: 'KAlgebra', label });
      const seconds = (Date.now() - started) / 1000;
      clearInterval(sampler);
      const cpu = cpuSeconds(pid) - cpuBefore;
      const keys = (await store.list(`${config.storage.prefix}/runs/${run}/KAlgebra/`)).filter((k) => k.endsWith('/manifest.json'));
      const verdicts = await Promise.all(keys.map(async (k) => verdictFileSchema.parse(await store.getJson(verdictKey(config.storage.prefix, attemptOfManifest(config.storage.prefix, k), label)))));
      const votes = verdicts.flatMap((v) => v.votes);
      const { waits, runs } = await voteTimes(client, keys.map((k) => judgeWorkflowId(attemptOfManifest(config.storage.prefix, k), label)));
      printTable('where a vote\'s time goes (mean over all votes)', [
        ['waiting for a worker (schedule to start)', 'castVote activity (start to close)', 'of which the model call', 'of which reading the variants of the screens, base64-encoding them, writing the reply'],
        [`${mean(waits).toFixed(0)} ms`, `${mean(runs).toFixed(0)} ms`, `${mean(votes.map((v) => v.cost.latencyMs)).toFixed(0)} ms`, `${(mean(runs) - mean(votes.map((v) => v.cost.latencyMs))).toFixed(0)} ms`],
      ]);
      printThroughput(config, { judged: judged.judged, votes, seconds, cpu, peak });
    } finally {
      await stopDaemon(config.dataDir, 'orchestrator');
      vmHost.shutdown();
      await hostRunning;
      await models.close();
      await connection.close();
    }
  } finally {
    await servers.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
