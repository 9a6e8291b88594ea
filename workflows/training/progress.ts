import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { JudgeMeasurement } from '../../core/judge/measurement';
import type { EvaluationResult } from '../evaluation/evaluation';
import type { RoundRecord } from './contract';

/**
 * What the training workflows answer and return, and the signal a specialization takes: their
 * stages, progress queries, results and stopAfterRound. Apart from the workflows, so the rounds,
 * the CLI and the viewer read them without importing a workflow.
 */

export const SPECIALIZATION_STAGES = ['task-generation', 'rollouts', 'judging', 'dataset', 'training', 'serving', 'evaluation'] as const;
export type SpecializationStage = 'starting' | (typeof SPECIALIZATION_STAGES)[number] | 'finished';

export interface SpecializationProgress {
  readonly run: string;
  readonly software: string;
  readonly round: number;
  readonly rounds: number;
  readonly stage: SpecializationStage;
  /** This round so far. */
  readonly counts: { readonly tasks: number; readonly rollouts: number; readonly judged: number; readonly positiveSteps: number; readonly samples: number };
  /** Every finished round, with its evaluation. */
  readonly history: readonly RoundRecord[];
  /** The planner the round rolls out with. */
  readonly checkpoint: { readonly name: string; readonly model: string; readonly checkpointKey?: string };
  /** This round's judge measured on the real tasks, once judged (judge-check.ts). */
  readonly judge?: JudgeMeasurement;
  /** Why this round stopped before training: the judge's precision was below the floor. */
  readonly stopped?: string;
  readonly stopRequested: boolean;
  /**
   * The rounds in flight, oldest first, with the stage each is in: one at maxStaleness 0; two at 1
   * while round n trains, serves or is evaluated and round n+1 generates, rolls out or judges.
   */
  readonly inFlight: ReadonlyArray<{ readonly round: number; readonly stage: SpecializationStage }>;
  /** Stages done of all the run's stages, for progress bars. */
  readonly completed: number;
  readonly total: number;
}

export interface SpecializationResult {
  readonly run: string;
  readonly software: string;
  readonly rounds: number;
  readonly specialist: { readonly name: string; readonly model: string; readonly checkpointKey?: string };
  readonly history: readonly RoundRecord[];
}

export const specializationProgress = defineQuery<SpecializationProgress>('progress');
/** Asks a specialization to stop after the round it is in. */
export const stopAfterRound = defineSignal('stopAfterRound');

export interface GeneralizationProgress {
  readonly run: string;
  readonly stage: 'starting' | (typeof GENERALIZATION_STAGES)[number] | 'finished';
  readonly software?: string;
  readonly counts: { readonly rollouts: number; readonly judged: number; readonly trajectories: number; readonly samples: number };
  readonly completed: number;
  readonly total: number;
}

export interface GeneralizationResult {
  readonly run: string;
  readonly generalist: { readonly name: string; readonly model: string; readonly checkpointKey: string };
  readonly dataset: { readonly key: string; readonly rows: number; readonly trajectories: number; readonly bySoftware: Readonly<Record<string, { readonly trajectories: number; readonly rows: number }>> };
  readonly report: EvaluationResult;
}

export const GENERALIZATION_STAGES = ['rollouts', 'judging', 'dataset', 'training', 'serving', 'evaluation'] as const;

export const generalizationProgress = defineQuery<GeneralizationProgress>('progress');
