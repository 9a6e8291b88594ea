import {
  ApplicationFailure,
  CancellationScope,
  continueAsNew,
  defineQuery,
  defineSignal,
  executeChild,
  isCancellation,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { CollectedRound, GeneralizationInput, RoundRecord, SpecializationInput } from './contract';
import type { JudgeMeasurement } from '../../core/judge/measurement';
import type { TaskSetSummary } from '../../activities/tasks/generation';
import { rolloutBatch, type BatchResult } from '../rollout/batch';
import { evaluation, type EvaluationResult } from '../evaluation/evaluation';
import { failOnBadInput, inputs } from '../inputs';
import { judgeRun, type JudgeRunResult } from '../judging/judge';
import {
  batchWorkflowId,
  evaluationRun,
  generalistName,
  generalizationEvaluationWorkflowId,
  generalizationSet,
  generatedRun,
  judgeRunWorkflowId,
  roundId,
  seriesName,
  specialistRow,
  taskGenerationWorkflowId,
} from '../names';
import { tagWorkflow } from '../search-attributes';
import { taskGeneration } from '../tasks/task-generation';
import { collectRound, datasets, emptyCounts, gpu, trainRound, type RoundState } from './rounds';

/**
 * CODA's two training stages (docs/method.md) as workflows on the orchestrator queue; the
 * trainers run on the gpu queue (activities/training/contract.ts). Every step has a deterministic
 * id or is idempotent — task sets, batches, judges, datasets, training jobs, checkpoints — so a
 * workflow restarted after any crash, or retried, continues where it was without redoing work.
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
  /** This round's judge measured on the real tasks, once judged (workflows/training/judge-check.ts). */
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

/**
 * The task sets of the specialization rounds behind a specialist checkpoint `<run>-r<n>` (a round's
 * checkpoint, task set and id share the name): `<run>-r1` … `<run>-r<n>` with the runs their tasks
 * were rolled out in, each used if it exists; none for a checkpoint named otherwise.
 */
export function roundSetsOf(checkpoint: string): Array<{ set: string; round: number; rollouts: string; ifExists: true }> {
  const named = /^(.+)-r([1-9]\d{0,2})$/.exec(checkpoint);
  if (named === null) return [];
  return Array.from({ length: Number(named[2]) }, (_, i) => ({ set: roundId(named[1]!, i + 1), round: i + 1, rollouts: generatedRun(roundId(named[1]!, i + 1)), ifExists: true }));
}

/**
 * Specialization of a planner on one software, one round per workflow run (continue-as-new
 * between rounds): generate tasks → roll out the generated tasks with the current planner → judge
 * them, and the planner's evaluation rollouts of the real tasks to measure the judge → a GRPO
 * dataset of the positive steps → train on the gpu queue → serve the new checkpoint → evaluate it
 * on the real tasks beside the base planner (whose rollouts the first round makes and the later
 * ones reuse) → next round. Cancelling it cancels the
 * trainer; the stopAfterRound signal ends it after the round it is in.
 *
 * maxStaleness 1 overlaps the rounds: while round n's dataset, training, serving and evaluation run,
 * round n+1 generates, rolls out with the newest served planner (round n's parent) and judges;
 * continue-as-new carries that collection, so round n+1's run trains on it from round n's
 * checkpoint. maxStaleness 0 issues the commands in the order above, one round per run.
 */
export async function specialization(raw: unknown): Promise<SpecializationResult> {
  let input: SpecializationInput | undefined;
  /** The rounds in flight (one, or two at maxStaleness 1), by round. */
  const rounds = new Map<number, RoundState>();
  let ended = false;
  let stopRequested = false;
  let history: readonly RoundRecord[] = [];
  /** The next round's collection while it runs ahead (maxStaleness 1): a stop cancels it, as it would not be counted. */
  let collectingAhead: CancellationScope | undefined;
  setHandler(stopAfterRound, () => {
    stopRequested = true;
    collectingAhead?.cancel();
  });
  setHandler(specializationProgress, () => {
    const inFlight = [...rounds.entries()].sort(([a], [b]) => a - b);
    const [round, oldest] = inFlight[0] ?? [input?.carried.round ?? 1, undefined];
    const stage: SpecializationStage = oldest?.stage ?? (ended ? 'finished' : 'starting');
    const stopped = inFlight.find(([, s]) => s.stopped !== undefined)?.[1].stopped;
    const done = (s: SpecializationStage): number => Math.max(0, SPECIALIZATION_STAGES.indexOf(s as (typeof SPECIALIZATION_STAGES)[number]));
    return {
      run: input?.run ?? '',
      software: input?.software ?? '',
      round,
      rounds: input?.rounds ?? 0,
      stage,
      counts: { ...(oldest?.counts ?? emptyCounts()) },
      history,
      checkpoint: input?.carried.planner ?? { name: '', model: '' },
      ...(oldest?.judge === undefined ? {} : { judge: oldest.judge }),
      ...(stopped === undefined ? {} : { stopped }),
      stopRequested,
      inFlight: inFlight.map(([r, s]) => ({ round: r, stage: s.stage })),
      completed: history.length * SPECIALIZATION_STAGES.length + inFlight.reduce((sum, [, s]) => sum + done(s.stage), 0),
      total: (input?.rounds ?? 0) * SPECIALIZATION_STAGES.length,
    };
  });

  input = await failOnBadInput(() => inputs.resolveSpecializationInput(raw, workflowInfo().workflowId));
  const resolved = input;
  const { software, run, carried } = resolved;
  stopRequested ||= carried.stopRequested;
  history = carried.history;
  const round = carried.round;
  const planner = carried.planner;
  tagWorkflow({ software, stage: 'specialization', run, round });
  const track = (r: number): RoundState => {
    const state: RoundState = { stage: 'starting', counts: emptyCounts() };
    rounds.set(r, state);
    return state;
  };

  const state = track(round);
  let collected: CollectedRound;
  if (carried.collected !== undefined && carried.collected.round === round) {
    // Collected by the previous run while its round trained: not generated, rolled out or judged again.
    collected = carried.collected;
    Object.assign(state.counts, { tasks: collected.tasks, rollouts: collected.rollouts, judged: collected.judged });
    state.judge = collected.judge;
  } else {
    collected = await collectRound(resolved, round, planner, carried.history, state);
  }

  // maxStaleness 1: the next round's collection, with the planner served now (this round's parent),
  // runs while this round trains, serves and is evaluated. A failure of it (the judge below its
  // floor) is raised once this round is done, so no trainer is left running.
  const collectsAhead = resolved.maxStaleness >= 1 && round < resolved.rounds && !stopRequested;
  // stopAfterRound cancels it (its children with it: task generation, rollouts, judging).
  collectingAhead = collectsAhead ? new CancellationScope() : undefined;
  const ahead = collectingAhead
    ?.run(() => collectRound(resolved, round + 1, planner, [...carried.history, { round, sources: collected.trainedOn }], track(round + 1), collected))
    .then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
  const { next, record } = await trainRound(resolved, round, planner, collected, carried.history, state);
  history = [...carried.history, record];
  rounds.delete(round);
  const outcome = ahead === undefined ? undefined : await ahead;
  if (outcome !== undefined && 'error' in outcome && !(stopRequested && isCancellation(outcome.error))) throw outcome.error;
  const nextCollected = outcome !== undefined && 'value' in outcome ? outcome.value : undefined;

  if (round < resolved.rounds && !stopRequested) {
    await continueAsNew<typeof specialization>({
      software,
      run,
      rounds: resolved.rounds,
      tasksPerRound: resolved.tasksPerRound,
      attempts: resolved.attempts,
      includeSeeds: resolved.includeSeeds,
      judgePrecisionFloor: resolved.judgePrecisionFloor,
      evaluationAttempts: resolved.evaluationAttempts,
      ...(resolved.evaluationTaskIds === undefined ? {} : { evaluationTaskIds: [...resolved.evaluationTaskIds] }),
      baseEvaluationRun: resolved.baseEvaluationRun,
      ...(resolved.judging === undefined ? {} : { judging: resolved.judging }),
      ...(resolved.maxStaleness === 0 ? {} : { maxStaleness: resolved.maxStaleness }),
      carried: { round: round + 1, planner: next, history: [...history], stopRequested, ...(nextCollected === undefined ? {} : { collected: nextCollected }) },
    });
  }
  // Stopped after this round: a next round collected ahead was cancelled, or is not counted (no record, no training).
  rounds.clear();
  ended = true;
  return { run, software, rounds: round, specialist: next, history };
}

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

/**
 * Generalization (docs/method.md, stage 2): each software's specialist rolls out on a fresh set
 * of generated tasks, the judge labels the trajectories, the successful ones are pooled across
 * software (at most perSoftwareCap each), a fresh planner is trained on them by SFT on the gpu
 * queue, and the base planner, every specialist and the generalist are evaluated on every
 * software (each specialist on its own software only when crossEvaluation is false): one report, one
 * row each. A specialist's row reuses the rollouts its specialization's evaluation made (same run),
 * so only what it has not rolled out yet is rolled out.
 */
export async function generalization(raw: unknown): Promise<GeneralizationResult> {
  let input: GeneralizationInput | undefined;
  let stage: GeneralizationProgress['stage'] = 'starting';
  let current: string | undefined;
  const counts = { rollouts: 0, judged: 0, trajectories: 0, samples: 0 };
  const STAGES = GENERALIZATION_STAGES;
  setHandler(generalizationProgress, () => ({
    run: input?.run ?? '',
    stage,
    ...(current === undefined ? {} : { software: current }),
    counts: { ...counts },
    completed: stage === 'finished' ? STAGES.length : Math.max(0, STAGES.indexOf(stage as (typeof STAGES)[number])),
    total: STAGES.length,
  }));
  input = await failOnBadInput(() => inputs.resolveGeneralizationInput(raw, workflowInfo().workflowId));
  const { run } = input;
  const software = input.specialists.map((s) => s.software);
  tagWorkflow({ software: software.join(','), stage: 'generalization', run });

  // The specialists, checked to exist and registered with serving (idempotent), before anything runs.
  const specialists = [];
  for (const s of input.specialists) {
    const checkpointKey = await failOnBadInput(() => datasets.checkpointKey(s.checkpoint));
    const served = await gpu(input.gpuQueue).servePlanner({ checkpointKey });
    specialists.push({ ...s, checkpointKey, model: served.model });
  }

  stage = 'rollouts';
  const sources: Array<{ run: string; software: string }> = [];
  for (const specialist of specialists) {
    current = specialist.software;
    const version = generalizationSet(run, specialist.software);
    // Fresh tasks: not those the specialist was trained on in its rounds.
    const earlier = roundSetsOf(specialist.checkpoint);
    const set: TaskSetSummary = await executeChild(taskGeneration, {
      workflowId: taskGenerationWorkflowId(specialist.software, version),
      args: [{ software: specialist.software, version, count: input.tasksPerSoftware, ...(earlier.length === 0 ? {} : { earlier }) }],
    });
    if (set.counts.kept === 0) continue;
    const batch: BatchResult = await executeChild(rolloutBatch, {
      workflowId: batchWorkflowId(version, specialist.software),
      args: [{ run: version, stage: 'generalization', software: specialist.software, taskSet: version, attempts: input.attempts, planner: { name: specialist.checkpoint, model: specialist.model } }],
    });
    counts.rollouts += batch.completed;
    sources.push({ run: version, software: specialist.software });
  }

  stage = 'judging';
  for (const source of sources) {
    current = source.software;
    const judged: JudgeRunResult = await executeChild(judgeRun, {
      workflowId: judgeRunWorkflowId(source.run, source.software),
      args: [{ run: source.run, software: source.software, ...(input.judging === undefined ? {} : { plan: input.judging }) }],
    });
    counts.judged += judged.judged;
  }
  current = undefined;

  stage = 'dataset';
  const name = generalistName(run);
  const dataset = await datasets.buildDataset({ id: name, kind: 'sft', sources, perSoftwareCap: input.perSoftwareCap });
  counts.trajectories = dataset.trajectories;
  counts.samples = dataset.rows;
  if (dataset.rows === 0) {
    throw ApplicationFailure.nonRetryable(`generalization ${run}: the judge approved no trajectory of any specialist, so there is nothing to train the generalist on`, 'NothingToLearn');
  }

  stage = 'training';
  const trained = await gpu(input.gpuQueue).train({ job: name, kind: 'sft', datasetKey: dataset.key, checkpoint: name, base: input.base });
  stage = 'serving';
  const served = await gpu(input.gpuQueue).servePlanner({ checkpointKey: trained.checkpointKey });

  stage = 'evaluation';
  const report: EvaluationResult = await executeChild(evaluation, {
    workflowId: generalizationEvaluationWorkflowId(run),
    args: [
      {
        run: evaluationRun(run),
        series: seriesName('generalization', run),
        software,
        attempts: input.evaluationAttempts,
        ...(input.evaluationTaskIds === undefined ? {} : { taskIds: input.evaluationTaskIds }),
        planners: [
          { name: 'base', model: input.base.model, ...(input.baseEvaluationRun === undefined ? {} : { run: input.baseEvaluationRun }) },
          // A specialist's rollouts of its own software's real tasks are its specialization's evaluation of the round that trained it: reused, not made again.
          ...specialists.map((s) => ({ name: specialistRow(s.software), model: s.model, run: evaluationRun(s.checkpoint), ...(input.crossEvaluation ? {} : { software: [s.software] }) })),
          { name: 'generalist', model: served.model },
        ],
      },
    ],
  });
  stage = 'finished';
  return {
    run,
    generalist: { name, model: served.model, checkpointKey: trained.checkpointKey },
    dataset: { key: dataset.key, rows: dataset.rows, trajectories: dataset.trajectories, bySoftware: dataset.bySoftware },
    report,
  };
}
