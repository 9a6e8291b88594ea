import { DEFAULT_VERDICT, stampOf, type AttemptRef } from '../core/keys';

/**
 * Every name the workflows give: the runs, rounds, task sets, datasets and checkpoints they make,
 * and every workflow id. A name is built here and nowhere else; what a later stage needs of an
 * earlier one is carried in its input or in what it stored, never read back out of a name.
 * Workflow ids are deterministic, so starting the same work twice finds the first.
 */

// ---------------------------------------------------------------------------------------------
// Runs

/** A run id from a workflow id (a scheduled start gets `<schedule id>-<time>` and no run). */
export const runFromWorkflowId = (workflowId: string): string => workflowId.replace(/[^A-Za-z0-9._-]/g, '').slice(0, 128);

/** A run id made from the time, for starts that name none (`coda start`): `<kind>-<time>`. */
export const freshRun = (kind: string, now = new Date()): string => `${kind}-${stampOf(now.toISOString()).toLowerCase()}`;

/** A report series named after a run: series names are lower case and at most 64 characters. */
export const seriesName = (kind: string, run: string): string =>
  `${kind}-${run}`.toLowerCase().replace(/[^a-z0-9-]+/g, '-').slice(0, 64).replace(/-+$/, '');

/** The rollouts of one row of an evaluation that names no run of its own, when it has several rows. */
export const evaluationRowRun = (evaluationRun: string, planner: string): string => `${evaluationRun}.${planner}`;

// ---------------------------------------------------------------------------------------------
// Specialization rounds

/** A specialization round: its task set, GRPO dataset, training job and checkpoint are all named so. */
export const roundId = (run: string, round: number): string => `${run}-r${round}`;

/** The rollouts of a round's generated tasks (its task set `id`). */
export const generatedRun = (id: string): string => `${id}-gen`;

/** The evaluation rollouts of a round (by its id, its checkpoint's name) or of a generalization (by its run). */
export const evaluationRun = (id: string): string => `${id}-eval`;

/** The base planner's evaluation rollouts, made once per specialization run and reused by every round. */
export const baseEvaluationRun = (run: string): string => `${run}-base-eval`;

/** The evaluation report's row of a specialist: the same every round, so each report's diff is the round's change. */
export const specialistRow = (software: string): string => `specialist-${software}`;

// ---------------------------------------------------------------------------------------------
// Generalization

/** The fresh task set a specialist rolls out on in a generalization, and the run of those rollouts. */
export const generalizationSet = (run: string, software: string): string => `${run}-${software}`;

/** The generalist: its SFT dataset, training job and checkpoint. */
export const generalistName = (run: string): string => `${run}-generalist`;

// ---------------------------------------------------------------------------------------------
// Workflow ids

/** What the ids of one run's rollouts of one software start with. */
export const rolloutIdPrefix = (run: string, software: string): string => `rollout-${run}-${software}-`;

/** One rollout per attempt: starting the same attempt twice finds the running (or finished) one. */
export const rolloutWorkflowId = (ref: AttemptRef): string => `${rolloutIdPrefix(ref.run, ref.software)}${ref.task}-${ref.attempt}`;

export const batchWorkflowId = (run: string, software: string): string => `batch-${run}-${software}`;

const withLabel = (base: string, label: string): string => (label === DEFAULT_VERDICT ? base : `${base}+${label}`);

/** One judge workflow per trajectory and label: judging the same trajectory twice finds the first. */
export const judgeWorkflowId = (ref: AttemptRef, label: string = DEFAULT_VERDICT): string =>
  withLabel(`judge-${ref.run}-${ref.software}-${ref.task}-${ref.attempt}`, label);

export const judgeRunWorkflowId = (run: string, software: string, label: string = DEFAULT_VERDICT): string => withLabel(`judge-run-${run}-${software}`, label);

export const judgeEvaluationWorkflowId = (id: string): string => `judge-eval-${id}`;

export const taskGenerationWorkflowId = (software: string, version: string): string => `task-generation-${software}-${version}`;

/** An evaluation: of a run started on its own, or of a specialization round (by the round's id). */
export const evaluationWorkflowId = (id: string): string => `evaluation-${id}`;

/** A generalization's final evaluation of base, specialists and generalist. */
export const generalizationEvaluationWorkflowId = (run: string): string => evaluationWorkflowId(`${run}-generalization`);

export const specializationWorkflowId = (software: string, run: string): string => `specialization-${software}-${run}`;

export const generalizationWorkflowId = (run: string): string => `generalization-${run}`;
