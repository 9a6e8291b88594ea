import { CancellationScope, continueAsNew, isCancellation, setHandler, workflowInfo } from '@temporalio/workflow';
import type { CollectedRound, RoundRecord, SpecializationInput, SpecializationRequest } from './contract';
import { failOnBadInput, inputs } from '../inputs';
import { tagWorkflow } from '../search-attributes';
import { SPECIALIZATION_STAGES, specializationProgress, stopAfterRound, type SpecializationProgress, type SpecializationResult, type SpecializationStage } from './progress';
import { collectRound, emptyCounts, trainRound, type RoundState } from './rounds';

/**
 * CODA's two training stages (docs/method.md) as workflows on the orchestrator queue; the
 * trainers run on the gpu queue (activities/training/contract.ts). Every step has a deterministic
 * id or is idempotent — task sets, batches, judges, datasets, training jobs, checkpoints — so a
 * workflow restarted after any crash, or retried, continues where it was without redoing work.
 */



/** What a specialization's next round starts with: its own input whole, less what the deployment gives every round. */
function nextRoundRequest(input: SpecializationInput, carried: SpecializationInput['carried']): SpecializationRequest {
  const { base: _base, gpuQueue: _queue, gpuHeartbeatTimeoutSeconds: _heartbeat, ...request } = input;
  return { ...request, carried };
}

/** What a specialization's progress query reads: its input once checked, the rounds in flight (one, or two at maxStaleness 1), the finished ones. */
interface SpecializationView {
  input: SpecializationInput | undefined;
  readonly rounds: Map<number, RoundState>;
  history: readonly RoundRecord[];
  stopRequested: boolean;
  ended: boolean;
}

function progressOf(view: SpecializationView): SpecializationProgress {
  const { input, history } = view;
  const inFlight = [...view.rounds.entries()].sort(([a], [b]) => a - b);
  const [round, oldest] = inFlight[0] ?? [input?.carried.round ?? 1, undefined];
  const stopped = inFlight.find(([, s]) => s.stopped !== undefined)?.[1].stopped;
  const done = (s: SpecializationStage): number => Math.max(0, SPECIALIZATION_STAGES.indexOf(s as (typeof SPECIALIZATION_STAGES)[number]));
  return {
    run: input?.run ?? '',
    software: input?.software ?? '',
    round,
    rounds: input?.rounds ?? 0,
    stage: oldest?.stage ?? (view.ended ? 'finished' : 'starting'),
    counts: { ...(oldest?.counts ?? emptyCounts()) },
    history,
    checkpoint: input?.carried.planner ?? { name: '', model: '' },
    ...(oldest?.judge === undefined ? {} : { judge: oldest.judge }),
    ...(stopped === undefined ? {} : { stopped }),
    stopRequested: view.stopRequested,
    inFlight: inFlight.map(([r, s]) => ({ round: r, stage: s.stage })),
    completed: history.length * SPECIALIZATION_STAGES.length + inFlight.reduce((sum, [, s]) => sum + done(s.stage), 0),
    total: (input?.rounds ?? 0) * SPECIALIZATION_STAGES.length,
  };
}

/** This round's collection: carried from the previous run, which collected it while its own round trained, or made now. */
async function collectionOf(input: SpecializationInput, state: RoundState): Promise<CollectedRound> {
  const { round, planner, history, collected } = input.carried;
  if (collected === undefined || collected.round !== round) return collectRound(input, round, planner, history, state);
  // Collected by the previous run while its round trained: not generated, rolled out or judged again.
  Object.assign(state.counts, { tasks: collected.tasks, rollouts: collected.rollouts, judged: collected.judged });
  state.judge = collected.judge;
  return collected;
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
  const view: SpecializationView = { input: undefined, rounds: new Map(), history: [], stopRequested: false, ended: false };
  /** The next round's collection while it runs ahead (maxStaleness 1): a stop cancels it, as it would not be counted. */
  let collectingAhead: CancellationScope | undefined;
  setHandler(stopAfterRound, () => {
    view.stopRequested = true;
    collectingAhead?.cancel();
  });
  setHandler(specializationProgress, () => progressOf(view));

  const resolved = await failOnBadInput(() => inputs.resolveSpecializationInput(raw, workflowInfo().workflowId));
  view.input = resolved;
  const { software, run, carried } = resolved;
  view.stopRequested ||= carried.stopRequested;
  view.history = carried.history;
  const { round, planner } = carried;
  tagWorkflow({ software, stage: 'specialization', run, round });
  const track = (r: number): RoundState => {
    const state: RoundState = { stage: 'starting', counts: emptyCounts() };
    view.rounds.set(r, state);
    return state;
  };

  const state = track(round);
  const collected = await collectionOf(resolved, state);

  // maxStaleness 1: the next round's collection, with the planner served now (this round's parent),
  // runs while this round trains, serves and is evaluated. A failure of it (the judge below its
  // floor) is raised once this round is done, so no trainer is left running.
  const collectsAhead = resolved.maxStaleness >= 1 && round < resolved.rounds && !view.stopRequested;
  // stopAfterRound cancels it (its children with it: task generation, rollouts, judging).
  collectingAhead = collectsAhead ? new CancellationScope() : undefined;
  const ahead = collectingAhead
    ?.run(() => collectRound(resolved, round + 1, planner, [...carried.history, { round, sources: collected.trainedOn }], track(round + 1), collected))
    .then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
  const { next, record } = await trainRound(resolved, round, planner, collected, carried.history, state);
  const history = [...carried.history, record];
  view.history = history;
  view.rounds.delete(round);
  const outcome = ahead === undefined ? undefined : await ahead;
  if (outcome !== undefined && 'error' in outcome && !(view.stopRequested && isCancellation(outcome.error))) throw outcome.error;
  const nextCollected = outcome !== undefined && 'value' in outcome ? outcome.value : undefined;

  if (round < resolved.rounds && !view.stopRequested) {
    await continueAsNew<typeof specialization>(
      nextRoundRequest(resolved, { round: round + 1, planner: next, history: [...history], stopRequested: view.stopRequested, ...(nextCollected === undefined ? {} : { collected: nextCollected }) }),
    );
  }
  // Stopped after this round: a next round collected ahead was cancelled, or is not counted (no record, no training).
  view.rounds.clear();
  view.ended = true;
  return { run, software, rounds: round, specialist: next, history };
}
