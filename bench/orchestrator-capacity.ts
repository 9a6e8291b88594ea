import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { crc32 } from 'node:zlib';
import { parseArgs } from 'node:util';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { loadConfig, type LoadedConfig } from '../config/load';
import { describeAction, guiActionSchema, type GuiAction } from '../core/actions';
import { combineChecks, evaluateStop } from '../core/evaluation';
import { formatExecutorOutput } from '../core/executor-parser';
import { formatPlannerOutput } from '../core/planner-parser';
import { smartResize } from '../core/smart-resize';
import { parseTask, type Task } from '../core/task';
import type { Desktop } from '../activities/desktop/desktop';
import { createObjectStore } from '../activities/storage/object-store';
import { stageTasks } from '../activities/tasks/library';
import { rolloutSettings } from '../config/workflow-inputs';
import { startScriptedServer, type ChatRequest, type Reply } from '../doubles/openai-server';
import { startDaemon, stopDaemon, waitUntilHealthy } from '../infra/daemon';
import { REPO_CONFIG, startEphemeralStack, type EphemeralStack } from '../infra/ephemeral';
import { workerHealthy, workerSpec } from '../infra/worker-process';
import { createVmHost } from '../workers/vm-host';
import { rolloutWorkflowId } from '../workflows/rollout';
import type { RolloutResult } from '../workflows/rollout-types';
import { cpuSeconds, printTable, procKib } from './stats';

/**
 * Capacity of ONE orchestrator worker process (it runs every workflow and the decision
 * activities): concurrent rollouts of `--steps` steps against instant in-memory desktops and an
 * instant scripted model double, so what is measured is the orchestration itself — Temporal
 * round trips, S3 reads and writes of screenshots and decisions, workflow and activity CPU.
 * Reports steps per second and the worker's peak memory for each level of concurrency.
 *
 *   node build/bench/orchestrator-capacity.js [--levels 10,30,60] [--steps 20]
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

/** BENCH DOUBLE of the models: the planner clicks `steps` times, then says DONE; the executor grounds the click. */
function clickingPolicy(steps: number, plannerModel: string) {
  return (request: ChatRequest): Reply => {
    const texts = request.messages.flatMap((m) => (typeof m.content === 'string' ? [m.content] : m.content.map((p) => String(p.text ?? ''))));
    if (request.model === plannerModel) {
      const done = texts.join('\n').split('[action: {').length - 1;
      const action: GuiAction = { type: 'click', x: 100 + done, y: 200 };
      return {
        texts: [done >= steps ? formatPlannerOutput('All clicks are done.', { kind: 'done' }) : formatPlannerOutput(`Click the point. [action: ${JSON.stringify(action)}]`, { kind: 'instruction', text: describeAction(action) })],
      };
    }
    const tag = /\[action: (\{.*\})\]/.exec(texts.join('\n'));
    const action = guiActionSchema.parse(JSON.parse(tag?.[1] ?? '{}'));
    return { texts: [formatExecutorOutput('Clicking.', action, { screen: { width: 1920, height: 1080 }, modelImage: smartResize(1920, 1080) })] };
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { levels: { type: 'string', default: '10,30,60' }, steps: { type: 'string', default: '20' } } });
  const levels = values.levels.split(',').map(Number);
  const steps = Number(values.steps);
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const servers = await startEphemeralStack('coda-capacity');
  try {
    await measure(servers, levels, steps);
  } finally {
    await servers.stop();
  }
}

async function measure(servers: EphemeralStack, levels: readonly number[], steps: number): Promise<void> {
  const most = Math.max(...levels);
  const models = await startScriptedServer(clickingPolicy(steps, servers.config.models.planner.model));
  const env = { ...servers.env, CODA_PLANNER_URL: models.url, CODA_EXECUTOR_URL: models.url, CODA_LOCAL_DESKTOPS: String(most) };
  const loaded = loadConfig(REPO_CONFIG, env);
  const config: LoadedConfig = { ...loaded, rollouts: { ...loaded.rollouts, settleMs: 0 } };
  const store = createObjectStore(config.storage, env);
  // A real screenshot of a local KAlgebra desktop (86 KB), so decoding and resizing cost what they do in a rollout.
  const png = readFileSync(path.resolve(__dirname, '..', '..', 'bench', 'fixtures', 'kalgebra-1920x1080.png'));
  const tasks = Array.from({ length: most }, (_, i) =>
    parseTask({ type: 'Bench', sort: 'VM', steps: steps + 1, instruction: `Click ${steps} times (bench task ${i}).`, version: '1', snapshot: 'none', initialize: [], evaluate: [{ type: 'stop', value: 'DONE' }] }, `T-${i}`),
  );
  const entries = await stageTasks(store, config.storage.prefix, tasks);

  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const host = config.hosts[0]!;
  const vmHost = await createVmHost({ config, connection, hostId: host.id, env, createDesktop: (i) => new InMemoryDesktop(`${host.id}/${i}`, png) });
  const running = vmHost.run();
  const orchestrator = startDaemon(config.dataDir, workerSpec(config, 'orchestrator', [], env));
  const pid = orchestrator.pid!;
  try {
    await waitUntilHealthy(config.dataDir, 'orchestrator', () => workerHealthy(config, 'orchestrator', config.taskQueues.orchestrator), 90_000);
    const rows = [['concurrent rollouts', 'steps', 'seconds', 'steps/s', 'rollouts/min', 'worker CPU s', 'peak RSS MiB']];
    for (const level of levels) {
      const run = `cap${level}x${Date.now()}`;
      const cpuBefore = cpuSeconds(pid);
      let peak = procKib(pid, 'VmRSS');
      const sampler = setInterval(() => (peak = Math.max(peak, procKib(pid, 'VmRSS'))), 250);
      const started = Date.now();
      const results = (await Promise.all(
        entries.slice(0, level).map((task, i) =>
          client.workflow.execute('rollout', {
            taskQueue: config.taskQueues.orchestrator,
            workflowId: rolloutWorkflowId({ run, software: task.software, task: task.id, attempt: 0 }),
            args: [{ run, stage: 'bench', task, attempt: 0, settings: rolloutSettings(config) }],
          }).then((r) => r as RolloutResult, (err) => Promise.reject(new Error(`rollout ${i}: ${(err as Error).message}`))),
        ),
      )) as RolloutResult[];
      const seconds = (Date.now() - started) / 1000;
      clearInterval(sampler);
      const failed = results.filter((r) => r.passed !== true);
      if (failed.length > 0) throw new Error(`${failed.length} rollouts did not pass: ${JSON.stringify(failed[0]?.stop)}`);
      const total = results.reduce((sum, r) => sum + r.steps, 0);
      rows.push([String(level), String(total), seconds.toFixed(1), (total / seconds).toFixed(1), ((level / seconds) * 60).toFixed(0), (cpuSeconds(pid) - cpuBefore).toFixed(1), (peak / 1024).toFixed(0)]);
    }
    printTable(`one orchestrator worker, in-memory desktops, ${steps} actions + DONE per rollout`, rows);
  } finally {
    await stopDaemon(config.dataDir, 'orchestrator');
    vmHost.shutdown();
    await running;
    await models.close();
    await connection.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
