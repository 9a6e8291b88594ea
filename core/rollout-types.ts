import type { GuiAction } from './actions';
import type { StopReason } from './episode';
import type { EvaluationResult } from './evaluation';
import type { AttemptRef } from './keys';

/**
 * The shapes that cross between the rollout workflow, its activities, config and its callers, in
 * the lowest layer that uses them. Small on purpose: screenshots, raw model texts and manifests stay in S3 and only their keys travel.
 */

/** A staged task: everything a workflow needs to schedule it. */
export interface TaskEntry {
  readonly id: string;
  readonly software: string;
  /** S3 key of the validated task JSON. */
  readonly key: string;
  readonly maxSteps: number;
  /** False for a task without checks (generated): nothing is evaluated, the judge decides. */
  readonly evaluated: boolean;
}

/** What one decision activity returns: the parsed action and where the raw texts are. */
export interface Decision {
  /** The planner's thought, shortened for queries; the full text is in the decision object. */
  readonly thought: string;
  /** The planner's action line, shortened likewise. */
  readonly actionText: string;
  /** Null when a model reply could not be parsed: the step fails and the rollout may retry. */
  readonly action: GuiAction | null;
  readonly error?: string;
  /** S3 key of the raw planner/executor texts, usage and latencies. */
  readonly decisionKey: string;
  readonly plannerMs: number;
  readonly executorMs?: number;
}

/** One step as the workflow keeps it. The manifest activity joins it with the decision object. */
export interface StepSummary extends Decision {
  /** 1-based. */
  readonly index: number;
  /** The screenshot the planner saw. */
  readonly screenshotKey: string;
  /** The screenshot after the action, when it was performed. */
  readonly afterScreenshotKey?: string;
  readonly performed: boolean;
  readonly actMs?: number;
  readonly screenshotMs?: number;
  readonly startedAt: string;
  /** Performed again on a fresh desktop after a host was lost mid-step. */
  readonly resumed?: boolean;
}

export interface StopSummary {
  readonly reason: StopReason;
  readonly answer?: string;
  readonly detail?: string;
}

export interface RolloutProgress {
  /** `starting` while the input is checked (the first step); `maxSteps` is 0 until then. */
  readonly status: 'starting' | 'leasing' | 'resetting' | 'deciding' | 'acting' | 'evaluating' | 'writing' | 'finished';
  readonly step: number;
  readonly maxSteps: number;
  readonly lastThought?: string;
  readonly lastAction?: GuiAction | null;
  readonly elapsedMs: number;
  readonly resumes: number;
  readonly desktop?: string;
  readonly stop?: StopSummary;
}

export interface RolloutResult {
  readonly ref: AttemptRef;
  readonly manifestKey: string;
  readonly stop: StopSummary;
  readonly steps: number;
  readonly resumes: number;
  /** Evaluator verdict; undefined when the rollout ended in ERROR before evaluation. */
  readonly passed?: boolean;
  readonly evaluation?: EvaluationResult;
}
