import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { crc32 } from 'node:zlib';
import { parseArgs } from 'node:util';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { loadConfig, type LoadedConfig } from '../config/load';
import { connectTemporal } from '../config/temporal-connection';
import { describeAction, type GuiAction } from '../core/actions';
import { combineChecks, evaluateStop } from '../core/evaluation';
import { formatExecutorOutput } from '../core/executor-parser';
import { formatPlannerOutput } from '../core/planner-parser';
import { smartResize } from '../core/smart-resize';
import { taskSetManifestKey, taskSetTaskKey } from '../core/keys';
import type { Task } from '../core/task';
import { TASK_SET_SCHEMA } from '../core/task-set';
import type { Desktop } from '../activities/desktop/desktop';
import { createObjectStore, type ObjectStore } from '../activities/storage/object-store';
import { startScriptedServer, type ChatRequest, type Reply } from '../doubles/openai-server';
import { daemonState, startDaemon, stopDaemon, waitUntilHealthy } from '../infra/daemon';
import { REPO_CONFIG, startEphemeralStack, type EphemeralStack } from '../infra/ephemeral';
import { workerHealthy, workerSpec } from '../infra/worker-process';
import { createVmHost } from '../workers/vm-host';
import type { BatchResult } from '../workflows/rollout/batch';
import { batchWorkflowId } from '../workflows/names';
import { cpuSeconds, printTable, procKib, threadCpuSeconds } from './stats';

/**
 * Capacity of ONE orchestrator worker process (it runs every workflow and the decision
 * activities): one rollout batch per level fanning out `level` rollouts at once (each a task of
 * `--steps` clicks and DONE), against instant in-memory desktops and an instant scripted model
 * double, so what is measured is the orchestration itself — Temporal round trips, S3 reads and
 * writes of screenshots and decisions, workflow and activity CPU. Reports, per level, steps per
 * second, rollouts per minute, the worker's CPU per step and peak memory, and the CPU of the other
 * processes on the machine (the Temporal dev server, MinIO, and this bench's host and models),
 * which say what limits the throughput on 2 cores.
 *
 *   node build/bench/orchestrator-capacity.js [--levels 100,300,1000] [--steps 20] [--transport data|url]
 */

/**
 * A bench desktop: nothing to reset or press; it passes `stop` checks only. Every screenshot is a
 * new PNG (the same pixels with a counter in a text chunk), so nothing downstream can reuse the
 * work done for an earlier one, as with a real screen.
 */
class InMemoryDesktop implements Desktop {
  readonly screen = { width: 1920, height: 1080 };
  private shots = 0;
  constructor(
    readonly id: string,
    private readonly png: Buffer,
  ) {}
  async reset(): Promise<void> {}
  async screenshot(): Promise<Buffer> {
    return pngWithText(this.png, `${this.id} ${++this.shots}`);
  }
  async act(): Promise<void> {}
  async pointer() {
    return { x: 0, y: 0 };
  }
  async evaluate(task: Task, stop: Parameters<Desktop['evaluate']>[1]) {
    return combineChecks(task.evaluate.flatMap((check, index) => (check.type === 'stop' ? [evaluateStop(check, index, stop)] : [])));
  }
  async healthy(): Promise<boolean> {
    return true;
  }
  async close(): Promise<void> {}
}

/** `png` with a tEXt chunk after its header: other bytes, same image. */
function pngWithText(png: Buffer, text: string): Buffer {
  const data = Buffer.from(`coda\0${text}`, 'latin1');
  const chunk = Buffer.alloc(12 + data.length);
  chunk.writeUInt32BE(data.length, 0);
  chunk.write('tEXt', 4, 'latin1');
  data.copy(chunk, 8);
  chunk.writeUInt32BE(crc32(chunk.subarray(4, 8 + data.length)), 8 + data.length);
  const headerEnd = 8 + 25; // signature + IHDR chunk
  return Buffer.concat([png.subarray(0, headerEnd), chunk, png.subarray(headerEnd)]);
}

/**
 * BENCH DOUBLE of the models: the planner clicks `steps` times, naming the point in plain words,
 * then says DONE; the executor grounds the point its thought names, as UI-TARS would.
 */
function clickingPolicy(steps: number, plannerModel: string) {
  return (request: ChatRequest): Reply => {
    const texts = request.messages.flatMap((m) => (typeof m.content === 'string' ? [m.content] : m.content.map((p) => String(p.text ?? ''))));
    if (request.model === plannerModel) {
      const done = texts.join('\n').split('Thought: Click the point at (').length - 1;
      const action: GuiAction = { type: 'click', x: 100 + done, y: 200 };
      return {
        texts: [done >= steps ? formatPlannerOutput('All clicks are done.', { kind: 'done' }) : formatPlannerOutput(`Click the point at (${action.x}, ${action.y}).`, { kind: 'instruction', text: describeAction(action) })],
      };
    }
    const point = /## User Instruction\nClick the point at \((\d+), (\d+)\)\./.exec(texts.join('\n'));
    if (point === null) throw new Error('bench executor double: the thought names no point to click');
    const action: GuiAction = { type: 'click', x: Number(point[1]), y: Number(point[2]) };
    return { texts: [formatExecutorOutput('Clicking.', action, { screen: { width: 1920, height: 1080 }, modelImage: smartResize(1920, 1080) })] };
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { levels: { type: 'string', default: '100,300,1000' }, steps: { type: 'string', default: '20' }, transport: { type: 'string', default: 'data' } },
  });
  const levels = values.levels.split(',').map(Number);
  const steps = Number(values.steps);
  if (values.transport !== 'data' && values.transport !== 'url') throw new Error('--transport: expected data or url');
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const servers = await startEphemeralStack('coda-capacity');
  try {
    await measure(servers, levels, steps, values.transport);
  } finally {
    await servers.stop();
  }
}

async function measure(servers: EphemeralStack, levels: readonly number[], steps: number, transport: 'data' | 'url'): Promise<void> {
  const most = Math.max(...levels);
  const models = await startScriptedServer(clickingPolicy(steps, servers.config.models.planner.model));
  const env = {
    ...servers.env,
    CODA_PLANNER_URL: models.url,
    CODA_EXECUTOR_URL: models.url,
    CODA_LOCAL_DESKTOPS: String(most),
    CODA_MAX_CONCURRENT_ROLLOUTS: String(most),
    CODA_IMAGE_TRANSPORT: transport,
  };
  const loaded = loadConfig(REPO_CONFIG, env);
  const config: LoadedConfig = { ...loaded, rollouts: { ...loaded.rollouts, settleMs: 0 } };
  const store = createObjectStore(config.storage, env);
  // A real screenshot of a local KAlgebra desktop (86 KB), so the host's variants cost what they do in a rollout.
  const png = readFileSync(path.resolve(__dirname, '..', '..', 'bench', 'fixtures', 'kalgebra-1920x1080.png'));

  const connection = await connectTemporal(config, NativeConnection);
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const host = config.hosts[0]!;
  const vmHost = await createVmHost({ config, connection, hostId: host.id, env, createDesktop: (i) => new InMemoryDesktop(`${host.id}/${i}`, png) });
  const running = vmHost.run();
  // CODA_BENCH_PROFILE_DIR=DIR: a CPU profile of the orchestrator worker (node --cpu-prof), written when it stops.
  const profile = process.env.CODA_BENCH_PROFILE_DIR;
  const spec = workerSpec(config, 'orchestrator', [], env);
  const orchestrator = startDaemon(config.dataDir, profile === undefined ? spec : { ...spec, args: ['--cpu-prof', `--cpu-prof-dir=${profile}`, ...spec.args] });
  const pid = orchestrator.pid!;
  const others = { 'Temporal server': daemonState(config.dataDir, 'temporal').pid, MinIO: daemonState(config.dataDir, 'minio').pid, 'bench (host, models)': process.pid };
  try {
    await waitUntilHealthy(config.dataDir, 'orchestrator', () => workerHealthy(config, 'orchestrator', config.taskQueues.orchestrator), 90_000);
    const threadRows = [['concurrent rollouts', 'thread', 'CPU per step', 'share']];
    const rows = [['concurrent rollouts', 'steps', 'seconds', 'steps/s', 'rollouts/min', 'worker CPU per step', 'worker peak RSS', ...Object.keys(others).map((k) => `${k} CPU`), 'failed']];
    for (const level of levels) {
      const run = `cap${level}x${Date.now()}`;
      const version = `bench-${run}`;
      await writeBenchSet(store, config.storage.prefix, version, level, steps);
      const cpuBefore = cpuSeconds(pid);
      const threadsBefore = threadCpuSeconds(pid);
      const othersBefore = Object.fromEntries(Object.entries(others).map(([k, p]) => [k, p === undefined ? 0 : cpuSeconds(p)]));
      let peak = procKib(pid, 'VmRSS');
      const sampler = setInterval(() => (peak = Math.max(peak, procKib(pid, 'VmRSS'))), 250);
      const started = Date.now();
      // One batch fans out every rollout of the level at once: what a batch of this size does to Temporal's limits.
      const result = (await client.workflow.execute('rolloutBatch', {
        taskQueue: config.taskQueues.orchestrator,
        workflowId: batchWorkflowId(run, 'KAlgebra'),
        args: [{ run, stage: 'bench', software: 'KAlgebra', taskSet: version, attempts: 1, concurrency: level, rolloutsPerRun: level }],
      })) as BatchResult;
      const seconds = (Date.now() - started) / 1000;
      clearInterval(sampler);
      const failed = result.completed - result.unevaluated;
      const total = result.unevaluated * (steps + 1);
      const cpu = cpuSeconds(pid) - cpuBefore;
      threadRows.push(...threadShares(level, total, cpu, threadsBefore, threadCpuSeconds(pid)));
      rows.push([
        String(level),
        String(total),
        seconds.toFixed(1),
        (total / seconds).toFixed(1),
        ((level / seconds) * 60).toFixed(0),
        `${((cpu / total) * 1000).toFixed(1)} ms`,
        `${(peak / 1024).toFixed(0)} MiB`,
        ...Object.entries(others).map(([k, p]) => `${(((p === undefined ? 0 : cpuSeconds(p)) - (othersBefore[k] ?? 0)) / seconds * 100).toFixed(0)}%`),
        String(failed),
      ]);
    }
    printTable(`one orchestrator worker, one batch per level, in-memory desktops, ${steps} clicks + DONE per rollout, images ${transport === 'url' ? 'by presigned URL' : 'inline (data URLs)'}; other processes' CPU in % of one core`, rows);
    printTable(`the worker's CPU per step by thread name ("ended threads": threads that ended during the level)`, threadRows);
  } finally {
    await stopDaemon(config.dataDir, 'orchestrator');
    vmHost.shutdown();
    await running;
    await models.close();
    await connection.close();
  }
}

/**
 * The worker's CPU of one level by thread name, per step and in % of the process's: which thread
 * (main, workflow, V8 helpers, the Temporal core's tokio threads) the time goes to. What the process
 * used beyond its live threads went to threads that ended meanwhile.
 */
function threadShares(level: number, steps: number, cpu: number, before: Map<string, number>, after: Map<string, number>): string[][] {
  const used = [...after].map(([name, seconds]) => [name, seconds - (before.get(name) ?? 0)] as const);
  const ended = cpu - used.reduce((sum, [, seconds]) => sum + seconds, 0);
  const all = [...used, ['(ended threads)', Math.max(0, ended)] as const].filter(([, seconds]) => seconds > 0).sort((a, b) => b[1] - a[1]);
  return all.map(([name, seconds]) => [String(level), name, `${((seconds / steps) * 1000).toFixed(2)} ms`, `${((seconds / cpu) * 100).toFixed(0)}%`]);
}

/** A task set of `count` bench tasks (clicks on a KAlgebra host's in-memory desktop; no checks: the batch counts them unevaluated). */
async function writeBenchSet(store: ObjectStore, prefix: string, version: string, count: number, steps: number): Promise<void> {
  const tasks = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const id = `B-${String(i).padStart(4, '0')}`;
      const key = taskSetTaskKey(prefix, 'KAlgebra', version, id);
      const instruction = `Click ${steps} times (bench task ${i}).`;
      await store.putJson(key, {
        type: 'KAlgebra',
        sort: 'bench',
        steps: steps + 1,
        instruction,
        version: '1',
        snapshot: 'none',
        initialize: [],
        evaluate: [],
        generated: { set: version, seedTaskIds: ['none'], model: 'bench', promptVersion: 'bench' },
      });
      return { id, instruction, maxSteps: steps + 1, key };
    }),
  );
  await store.putJson(taskSetManifestKey(prefix, 'KAlgebra', version), {
    schema: TASK_SET_SCHEMA,
    software: 'KAlgebra',
    version,
    createdAt: new Date().toISOString(),
    provenance: { seedTaskIds: ['none'], model: 'bench', baseUrl: 'none', promptVersion: 'bench', temperature: 0 },
    start: { fromSeed: 'none', initialize: [] },
    counts: { requests: 0, kept: count, duplicates: 0, invalid: 0, overLimit: 0 },
    tasks,
    duplicates: [],
    invalid: [],
    replies: [],
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
