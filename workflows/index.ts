/** Every workflow the orchestrator worker registers. Deterministic code only: no I/O, no Node built-ins. */
export { stackCheck } from './stack-check';
export { rollout } from './rollout';
export { rolloutBatch } from './batch';
export { judgeTrajectory, judgeRun, judgeEvaluation } from './judge';
export { taskGeneration } from './task-generation';
export { evaluation } from './evaluation';
export { specialization, generalization } from './training';
