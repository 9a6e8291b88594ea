/** Every workflow the orchestrator worker registers. Deterministic code only: no I/O, no Node built-ins. */
export { stackCheck } from './stack-check';
export { rollout } from './rollout/rollout';
export { rolloutBatch } from './rollout/batch';
export { judgeTrajectory, judgeRun, judgeEvaluation } from './judging/judge';
export { taskGeneration } from './tasks/task-generation';
export { evaluation } from './evaluation/evaluation';
export { specialization } from './training/specialization';
export { generalization } from './training/generalization';
