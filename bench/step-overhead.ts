import { readOnlyImages } from '../activities/models/images';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { loadConfig, type LoadedConfig } from '../config/load';
import { connectTemporal } from '../config/temporal-connection';
import type { LocalHostConfig } from '../config/schema';
import { isTerminal } from '../core/episode';
import type { Task } from '../core/task';
import { samplingSeed } from '../core/sampling-seed';
import type { Desktop } from '../activities/desktop/desktop';
import { parseTrajectoryManifest } from '../apps/manifests';
import { createLocalDesktops } from '../activities/desktop/local/local-desktop';
import { agentStep, type AgentTurn } from '../activities/models/agent-step';
import { ModelGateway } from '../activities/models/gateway';
import { createObjectStore, type ObjectStore } from '../activities/storage/object-store';
import { stageTasks, TaskLibrary } from '../activities/tasks/library';
import { rolloutSettings } from '../workflows/rollout/contract';
import { startScriptedModels } from '../doubles/scripted-models/main';
import { freeDisplay, REPO_CONFIG, startEphemeralStack, type EphemeralStack } from '../infra/ephemeral';
import { createOrchestratorWorker } from '../workers/orchestrator';
import { createVmHost } from '../workers/vm-host';
import type { RolloutResult, TaskEntry } from '../core/rollout-types';
import { mean, median, printTable } from './stats';
import { rolloutWorkflowId } from '../workflows/names';

/**
 * Step overhead of the durable pipeline: the time of one rollout step through Temporal + S3
 * (decision activity on the orchestrator, act-and-observe activity on the vm-host, screenshots and
 * model texts in MinIO) divided by the same step in a direct in-process loop — same real KAlgebra
 * desktop, same scripted models over HTTP, same agent-step code, screenshots kept in memory.
 * A step is timed from the start of its decision to the start of the next one. The two loops
 * alternate, task by task, to share whatever else the machine is doing.
 *
 * `--model-latency-ms` makes every model call take that long (the scripted server waits before
 * answering), for the ratio with realistic model latency beside the instant one.
 *
 *   node build/bench/step-overhead.js [--runs 3] [--tasks C-08,C-05,C-09,B-07] [--model-latency-ms 1500]
 */
async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' }, tasks: { type: 'string', default: 'C-08,C-05,C-09,B-07' }, 'model-latency-ms': { type: 'string', default: '0' } } });
  const runs = Number(values.runs);
  const latencyMs = Number(values['model-latency-ms']);
  const taskIds = values.tasks.split(',');
  Runtime.install({ logger: new DefaultLogger('ERROR') });

  const servers = await startEphemeralStack('coda-bench');
  try {
    await measure(servers, runs, taskIds, latencyMs);
  } finally {
    await servers.stop();
  }
}

async function measure(servers: EphemeralStack, runs: number, taskIds: readonly string[], latencyMs: number): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'coda-bench-desktop-'));
  const models = await startScriptedModels(servers.config, { port: 0, env: servers.env, latencyMs });
  const env = { ...servers.env, CODA_PLANNER_URL: models.url, CODA_EXECUTOR_URL: models.url };
  const config = loadConfig(REPO_CONFIG, env);
  const local = config.hosts.find((h): h is LocalHostConfig => h.kind === 'local')!;
  const host: LocalHostConfig = { ...local, desktops: 1, displayBase: freeDisplay(200) };
  const desktop = createLocalDesktops(host, config.localApps, { dir })[0]!;
  const tasks = new TaskLibrary().load('KAlgebra', taskIds);
  const store = createObjectStore(config.storage, env);
  const entries = await stageTasks(store, config.storage.prefix, tasks);

  const connection = await connectTemporal(config, NativeConnection);
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const workflowBundle = await bundleWorkflowCode({ workflowsPath: require.resolve('../workflows'), logger: new DefaultLogger('ERROR') });
  const orchestrator = await createOrchestratorWorker({ config, connection, client, env, workflowBundle });
  // The direct loop uses the desktop while the pool sees it idle: no idle health checks here.
  const vmHost = await createVmHost({ config, connection, hostId: host.id, env, createDesktop: () => desktop, healthCheckMs: 24 * 3600_000 });
  const running = [orchestrator.run(), vmHost.run()];
  try {
    const { direct, durable } = await compare({ config, desktop: desktop, tasks, entries, client, store, env, runs });
    report(direct, durable, latencyMs);
  } finally {
    vmHost.shutdown();
    orchestrator.shutdown();
    await Promise.all(running);
    await desktop.close();
    await models.close();
    await connection.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Comparison {
  readonly config: LoadedConfig;
  readonly desktop: Desktop;
  readonly tasks: readonly Task[];
  readonly entries: readonly TaskEntry[];
  readonly client: Client;
  readonly store: ObjectStore;
  readonly env: Record<string, string>;
  readonly runs: number;
}

/** One step's time (ms) and its parts: model calls, act + settle, screenshot (+ storing it), the rest. */
interface Phases {
  readonly total: number;
  readonly models: number;
  readonly act: number;
  readonly screenshot: number;
  readonly rest: number;
}

const phases = (total: number, models: number, act: number, screenshot: number): Phases => ({ total, models, act, screenshot, rest: total - models - act - screenshot });

/** Runs every task `runs` times each way, alternating, and returns the steps of each loop. */
async function compare({ config, desktop, tasks, entries, client, store, env, runs }: Comparison): Promise<{ direct: Phases[]; durable: Phases[] }> {
  const direct: Phases[] = [];
  const durable: Phases[] = [];
  const images = new Map<string, Uint8Array>();
  const gateway = new ModelGateway({ models: config.models, images: readOnlyImages(async (key) => images.get(key)!), env });

  for (let r = 0; r < runs; r++) {
    for (const [i, task] of tasks.entries()) {
      // Direct loop: the same step, no Temporal, no S3.
      await desktop.reset(task);
      let shot = await desktop.screenshot();
      const history: AgentTurn[] = [];
      let stepStart = Date.now();
      for (let step = 1; step <= task.steps; step++) {
        const key = `mem/${step}`;
        images.set(key, shot);
        const decided = await agentStep(gateway, { instruction: task.instruction, software: task.type, screenshotKey: key, screen: desktop.screen, history, seed: samplingSeed({ software: task.type, task: task.id, attempt: i }, step) });
        if (decided.action === null || isTerminal(decided.action)) break;
        const acting = Date.now();
        await desktop.act(decided.action);
        await sleep(config.rollouts.settleMs);
        const shooting = Date.now();
        shot = await desktop.screenshot();
        history.push({ thought: decided.thought, actionText: decided.actionText, screenshotKey: key, executorRaw: decided.executor?.texts[0] });
        const now = Date.now();
        direct.push(phases(now - stepStart, decided.planner.latencyMs + (decided.executor?.latencyMs ?? 0), shooting - acting, now - shooting));
        stepStart = now;
      }

      // Durable: the rollout workflow on the same desktop.
      const ref = { run: `bench${Date.now()}`, software: 'KAlgebra', task: task.id, attempt: r };
      const result = (await client.workflow.execute('rollout', {
        taskQueue: config.taskQueues.orchestrator,
        workflowId: rolloutWorkflowId(ref),
        args: [{ run: ref.run, stage: 'bench', task: entries[i]!, attempt: r, settings: rolloutSettings(config) }],
      })) as RolloutResult;
      const manifest = parseTrajectoryManifest(await store.getJson(result.manifestKey), result.manifestKey);
      const starts = manifest.steps.map((s) => Date.parse(s.startedAt));
      for (let s = 0; s + 1 < starts.length; s++) {
        const t = manifest.steps[s]!.timings;
        durable.push(phases(starts[s + 1]! - starts[s]!, (t.plannerMs ?? 0) + (t.executorMs ?? 0), t.actMs ?? 0, t.screenshotMs ?? 0));
      }
    }
  }

  return { direct, durable };
}

function report(directSteps: readonly Phases[], durableSteps: readonly Phases[], latencyMs: number): void {
  const direct = directSteps.map((p) => p.total);
  const durable = durableSteps.map((p) => p.total);
  printTable(`step time (ms), real KAlgebra desktop, scripted models answering ${latencyMs > 0 ? `after ${latencyMs} ms per call` : 'at once'}`, [
    ['loop', 'steps', 'mean', 'median'],
    ['direct, in process', String(direct.length), mean(direct).toFixed(0), median(direct).toFixed(0)],
    ['Temporal + S3', String(durable.length), mean(durable).toFixed(0), median(durable).toFixed(0)],
  ]);
  console.log(`overhead ratio (mean Temporal+S3 / mean direct): ${(mean(durable) / mean(direct)).toFixed(3)}`);
  console.log(`overhead ratio (median): ${(median(durable) / median(direct)).toFixed(3)}`);
  const phase = (steps: readonly Phases[], k: keyof Phases): string => mean(steps.map((p) => p[k])).toFixed(1);
  printTable("where a step's time goes (mean ms): model calls as the gateway timed them; act + settle; screenshot (durable: + its variants and S3 puts); the rest (direct: preparing images and parsing; durable: + Temporal round trips, S3 reads and the decision record)", [
    ['loop', 'models', 'act + settle', 'screenshot', 'rest'],
    ...([['direct, in process', directSteps], ['Temporal + S3', durableSteps]] as const).map(([name, steps]) => [name, phase(steps, 'models'), phase(steps, 'act'), phase(steps, 'screenshot'), phase(steps, 'rest')]),
  ]);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
