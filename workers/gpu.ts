import { NativeConnection, Worker } from '@temporalio/worker';
import { loadConfig, type Env, type LoadedConfig } from '../config/load';
import { connectTemporal } from '../config/temporal-connection';
import { createTrainingActivities } from '../activities/training/activities';
import { s3RewardScorer } from '../activities/training/reward';
import { rewardServiceToken, startRewardService, type RewardService } from '../activities/training/reward-service';
import { checkSetpriv } from '../activities/training/trainer-process';
import { rewardServiceMetrics, trainerMetrics, type RewardServiceMetrics, type TrainerMetrics } from '../activities/metrics';
import { createObjectStore } from '../activities/storage/object-store';
import { startProcessMetrics } from './metrics';

export interface GpuWorkerDeps {
  readonly config: LoadedConfig;
  readonly connection: NativeConnection;
  /** Environment of the trainers and of the reward service's clients (S3 and API keys are read from it). */
  readonly env?: Env;
  /** Where the trainers' progress and the reward service's counts are recorded (the process's two metrics endpoints). */
  readonly metrics?: { readonly trainer: TrainerMetrics; readonly rewards: RewardServiceMetrics };
}

export interface GpuWorker {
  readonly worker: Worker;
  readonly rewardService: RewardService;
  /** Runs until shutdown (SIGINT/SIGTERM or shutdown()), then closes the reward service. */
  run(): Promise<void>;
  shutdown(): void;
}

/**
 * The GPU worker, one per GPU node: the reward service (OpenRLHF's remote reward function, on
 * training.rewardService's port; its counts on metrics.ports.rewardService, the trainers' progress
 * on metrics.ports.gpu) and the `gpu` queue's activities, `train` and `servePlanner`
 * (activities/training/). At most training.jobs trainings run at once; one more slot keeps
 * servePlanner from waiting behind them. On SIGTERM a running training is cancelled after a short
 * grace: its trainer is stopped and a retry resumes from the last uploaded checkpoint.
 */
export async function createGpuWorker(deps: GpuWorkerDeps): Promise<GpuWorker> {
  const { config } = deps;
  const env = deps.env ?? process.env;
  checkSetpriv();
  const store = createObjectStore(config.storage, env);
  const settings = config.training.rewardService;
  const rewardService = await startRewardService({
    scorer: s3RewardScorer(config, store, settings, env),
    host: settings.host,
    port: settings.port,
    cacheSize: settings.cacheSize,
    limits: settings,
    token: rewardServiceToken(settings, env),
    metrics: deps.metrics?.rewards ?? rewardServiceMetrics(),
  });
  let worker: Worker;
  try {
    worker = await Worker.create({
      connection: deps.connection,
      namespace: config.temporal.namespace,
      taskQueue: config.taskQueues.gpu,
      activities: createTrainingActivities({ config, store, env, rewardUrl: rewardService.url, ...(rewardService.token === undefined ? {} : { rewardToken: rewardService.token }), metrics: deps.metrics?.trainer ?? trainerMetrics() }),
      maxConcurrentActivityTaskExecutions: config.training.jobs + 1,
      // Progress reaches the server every heartbeatSeconds (by default heartbeats are throttled to 80% of the timeout).
      maxHeartbeatThrottleInterval: `${config.training.heartbeatSeconds} seconds`,
      defaultHeartbeatThrottleInterval: `${config.training.heartbeatSeconds} seconds`,
      shutdownGraceTime: '5 seconds',
    });
  } catch (err) {
    await rewardService.close();
    throw err;
  }
  return {
    worker,
    rewardService,
    async run() {
      try {
        await worker.run();
      } finally {
        await rewardService.close();
      }
    },
    shutdown() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
    },
  };
}

if (require.main === module) {
  (async () => {
    const config = loadConfig();
    const metrics = await startProcessMetrics(config, 'gpu', { temporal: true });
    const rewardMetrics = await startProcessMetrics(config, 'rewardService', { temporal: false });
    const connection = await connectTemporal(config, NativeConnection);
    const gpu = await createGpuWorker({ config, connection, metrics: { trainer: trainerMetrics(metrics.registry), rewards: rewardServiceMetrics(rewardMetrics.registry) } });
    console.log(`gpu worker polling ${config.taskQueues.gpu} in ${config.temporal.namespace}; reward service on ${gpu.rewardService.url}; metrics ${metrics.url ?? 'off'}, reward metrics ${rewardMetrics.url ?? 'off'}`);
    await gpu.run();
    console.log('gpu worker stopped');
  })().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
