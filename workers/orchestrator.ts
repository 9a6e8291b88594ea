import { Client } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { loadConfig, type Env, type LoadedConfig } from '../config/load';
import { connectTemporal } from '../config/temporal-connection';
import { createModelActivities } from '../activities/models/activities';
import { decisionStore } from '../activities/models/decision';
import { decisionCacheEntries, orchestratorSizing } from '../config/schema';
import { s3Gateway } from '../activities/models/gateway';
import type { ImagePreparer } from '../activities/models/images';
import { deploymentCapabilities, probesOf } from '../core/requirements';
import { defaultDrivers } from '../activities/desktop/local/drivers';
import { probeLocalHost } from '../activities/desktop/local/host-facts';
import { createDatasetActivities } from '../activities/datasets/activities';
import { createJudgeActivities } from '../activities/judge/activities';
import { createJudgeEvaluationActivities } from '../activities/judge/evaluation';
import { orchestratorMetrics, type OrchestratorMetrics } from '../activities/metrics';
import { createReportActivities } from '../activities/reports/activities';
import { createRunActivities } from '../activities/runs/activities';
import { createInputActivities } from '../workflows/input-activities';
import { createStorageActivities } from '../activities/storage/activities';
import { createObjectStore } from '../activities/storage/object-store';
import { createTrajectoryActivities } from '../activities/storage/trajectory';
import { createTaskActivities } from '../activities/tasks/activities';
import { s3TaskReader, TaskLibrary } from '../activities/tasks/library';
import { startProcessMetrics } from './metrics';
import { runWorkerProcess, workflowSource } from './process';
import { APPS } from '../apps/index';

export interface OrchestratorDeps {
  readonly config: LoadedConfig;
  readonly connection: NativeConnection;
  /** For activities that read other workflows (a batch awaiting an existing rollout). */
  readonly client: Client;
  readonly env?: Env;
  /** A prebuilt workflow bundle (tests build one per run); otherwise the workflows are bundled at start. */
  readonly workflowBundle?: WorkerOptions['workflowBundle'];
  readonly taskLibrary?: TaskLibrary;
  /** Finds screenshots' prepared variants for the models (tests read how many it had to resize itself). */
  readonly imagePreparer?: ImagePreparer;
  readonly taskQueue?: string;
  /** Where model, judge and rollout metrics are recorded (the process's metrics endpoint). */
  readonly metrics?: OrchestratorMetrics;
}

/**
 * The orchestrator worker: runs every workflow, plus the activities that need no desktop and no
 * GPU — storage, task staging and generation, trajectories, the model gateway (planner, executor,
 * judges, task generator), verdicts and reports. Scale it out by starting more.
 */
export async function createOrchestratorWorker(deps: OrchestratorDeps): Promise<Worker> {
  const { config } = deps;
  const store = createObjectStore(config.storage, deps.env);
  const prefix = config.storage.prefix;
  const tasks = s3TaskReader(store);
  const decisions = decisionStore(store, decisionCacheEntries(config));
  const metrics = deps.metrics ?? orchestratorMetrics();
  const gateway = s3Gateway(config, store, { env: deps.env, latency: metrics.modelSeconds, preparer: deps.imagePreparer });
  const library = deps.taskLibrary ?? new TaskLibrary();
  return Worker.create({
    connection: deps.connection,
    namespace: config.temporal.namespace,
    taskQueue: deps.taskQueue ?? config.taskQueues.orchestrator,
    ...workflowSource(deps.workflowBundle),
    activities: {
      ...createStorageActivities(store, prefix),
      ...createTaskActivities({
        library,
        store,
        prefix,
        gateway,
        // The local hosts' facts are probed on this machine: the dev stack and a single-machine deployment run them here.
        capabilities: async (tasks) => deploymentCapabilities(config, await probeLocalHost(config.localApps, probesOf(APPS, tasks), { drivers: Object.keys(defaultDrivers()) })),
      }),
      ...createTrajectoryActivities({ store, prefix, tasks, decisions, metrics }),
      ...createModelActivities({ gateway, decisions, prefix, tasks }),
      ...createRunActivities(deps.client),
      ...createInputActivities(config, library),
      ...createJudgeActivities({ gateway, store, prefix, maxTokens: config.judging.maxTokens, metrics }),
      ...createJudgeEvaluationActivities({ store, prefix, metrics }),
      ...createReportActivities({ store, prefix }),
      ...createDatasetActivities({ store, prefix, defaultScreen: config.hosts.find((h) => h.kind === 'local')?.screen ?? { width: 1920, height: 1080 }, plannerImage: config.models.planner.image }),
    },
    shutdownGraceTime: '30 seconds',
    ...orchestratorSizing(config),
  });
}

if (require.main === module) {
  runWorkerProcess('orchestrator', async () => {
    const config = loadConfig();
    const metrics = await startProcessMetrics(config, 'orchestrator', { temporal: true });
    const connection = await connectTemporal(config, NativeConnection);
    const client = new Client({ connection, namespace: config.temporal.namespace });
    console.log(`orchestrator metrics ${metrics.url ?? 'off'}`);
    return createOrchestratorWorker({ config, connection, client, metrics: orchestratorMetrics(metrics.registry) });
  });
}
