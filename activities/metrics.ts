import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The project's Prometheus metrics, one group per kind of process that records them. A process
 * registers the groups it records on its own Registry (workers/metrics.ts serves it beside the
 * Temporal SDK's metrics); an activity factory given none records on a registry nobody scrapes.
 * Names and labels are docs/viewer.md's metrics table.
 */

const SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** vm-host: what its desktops do. */
export function desktopMetrics(registry: Registry = new Registry()) {
  return {
    /** Actions performed on a desktop (rate = steps/s of the host). */
    steps: new Counter({ name: 'coda_steps_total', help: 'GUI actions performed on desktops', labelNames: ['host', 'outcome'] as const, registers: [registry] }),
    resets: new Counter({ name: 'coda_desktop_resets_total', help: 'Desktop resets to a task (a resume replays the steps after it)', labelNames: ['host', 'kind', 'outcome'] as const, registers: [registry] }),
    resetSeconds: new Histogram({ name: 'coda_desktop_reset_seconds', help: 'Time of a desktop reset, replay included', labelNames: ['host', 'kind'] as const, buckets: SECONDS, registers: [registry] }),
    /** Only for desktops whose machine is one process of the host (a qemu host's VMs): QEMU's CPU over the reset. */
    resetCpuSeconds: new Histogram({ name: 'coda_desktop_reset_cpu_seconds', help: "CPU of a desktop's machine over a reset, replay included (a qemu host's VM: its QEMU)", labelNames: ['host', 'kind'] as const, buckets: SECONDS, registers: [registry] }),
    leaseExpiries: new Counter({ name: 'coda_lease_expiries_total', help: 'Desktop leases taken back after their time-to-live without use', labelNames: ['host'] as const, registers: [registry] }),
    /** Desktops leased to a rollout now, and the host's desktops (leased / desktops = how busy the host is). */
    leased: new Gauge({ name: 'coda_desktops_leased', help: 'Desktops leased to a rollout now', labelNames: ['host'] as const, registers: [registry] }),
    desktops: new Gauge({ name: 'coda_desktops', help: "The host's desktops", labelNames: ['host'] as const, registers: [registry] }),
  };
}

/** orchestrator: model calls, judge votes and the judge's measured precision, finished rollouts. */
export function orchestratorMetrics(registry: Registry = new Registry()) {
  return {
    modelSeconds: new Histogram({ name: 'coda_model_latency_seconds', help: 'Model call latency by role (planner, executor, judge, taskGenerator)', labelNames: ['role', 'model', 'outcome'] as const, buckets: SECONDS, registers: [registry] }),
    judgeCalls: new Counter({ name: 'coda_judge_calls_total', help: 'Judge votes cast', labelNames: ['judge', 'resolution'] as const, registers: [registry] }),
    judgePixels: new Counter({ name: 'coda_judge_pixels_total', help: 'Pixels of the screenshots sent to judges', labelNames: ['judge', 'resolution'] as const, registers: [registry] }),
    // The judge measured on each specialization round's real-task rollouts (judge="final": the voted verdict, resolution="all").
    judgePrecision: new Gauge({ name: 'coda_judge_precision', help: "The judge's precision on a specialization round's real-task rollouts against their evaluators (absent when it approved none)", labelNames: ['software', 'run', 'round', 'judge', 'resolution'] as const, registers: [registry] }),
    judgeRecall: new Gauge({ name: 'coda_judge_recall', help: "The judge's recall on a specialization round's real-task rollouts against their evaluators (absent when none passed)", labelNames: ['software', 'run', 'round', 'judge', 'resolution'] as const, registers: [registry] }),
    judgeMeasured: new Gauge({ name: 'coda_judge_measured_trajectories', help: 'Real-task rollouts the judge was measured on, per round, judge and resolution', labelNames: ['software', 'run', 'round', 'judge', 'resolution'] as const, registers: [registry] }),
    rollouts: new Counter({ name: 'coda_rollouts_total', help: 'Rollouts whose manifest was written, by how they stopped', labelNames: ['stop'] as const, registers: [registry] }),
    resumes: new Counter({ name: 'coda_rollout_resumes_total', help: 'Desktop losses the written rollouts resumed from', registers: [registry] }),
  };
}

/** The reward service (OpenRLHF's --reward.remote_url). */
export function rewardServiceMetrics(registry: Registry = new Registry()) {
  return {
    /** outcome: ok (every sample scored), zero (some sample answered 0 for an error), empty (the lists a second server gets), refused (not the protocol: 400, or not JSON by its content type: 415), forbidden (a Host other than the service's address, or an Origin: 403, a web page's), too_large (a body or query over its limit: 413), busy (over maxConcurrentRequests: 503), unauthorized (without the token: 401). */
    requests: new Counter({ name: 'coda_reward_requests_total', help: 'Reward requests answered', labelNames: ['outcome'] as const, registers: [registry] }),
    cacheHits: new Counter({ name: 'coda_reward_cache_hits_total', help: 'Rewards answered from the cache without calling the executor', registers: [registry] }),
    seconds: new Histogram({ name: 'coda_reward_seconds', help: 'Time to answer a reward request', buckets: SECONDS, registers: [registry] }),
    executorSeconds: new Histogram({ name: 'coda_reward_executor_seconds', help: 'Executor calls made to score a sample', buckets: SECONDS, registers: [registry] }),
    rewards: new Histogram({ name: 'coda_reward_sample_reward', help: 'Rewards answered, per sample (0 to 2)', buckets: [0, 0.5, 1, 1.5, 2], registers: [registry] }),
    failures: new Counter({ name: 'coda_reward_failures_total', help: "Samples answered 0 because they could not be scored, by reason (the answer's extra_logs flag)", labelNames: ['reason'] as const, registers: [registry] }),
  };
}

/** gpu worker: the trainers it runs. */
export function trainerMetrics(registry: Registry = new Registry()) {
  return {
    step: new Gauge({ name: 'coda_trainer_step', help: 'Last step the trainer reported', labelNames: ['job', 'kind'] as const, registers: [registry] }),
    figure: new Gauge({ name: 'coda_trainer_figure', help: "The trainer's last reported figures (loss, reward, ...)", labelNames: ['job', 'name'] as const, registers: [registry] }),
    /** Trainer jobs holding the worker's GPUs now (0 = the GPUs idle). */
    running: new Gauge({ name: 'coda_trainers_running', help: "Trainer jobs holding the worker's GPUs now", labelNames: ['kind'] as const, registers: [registry] }),
  };
}

export type DesktopMetrics = ReturnType<typeof desktopMetrics>;
export type OrchestratorMetrics = ReturnType<typeof orchestratorMetrics>;
export type RewardServiceMetrics = ReturnType<typeof rewardServiceMetrics>;
export type TrainerMetrics = ReturnType<typeof trainerMetrics>;
