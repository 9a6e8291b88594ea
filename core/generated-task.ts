import type { z } from 'zod';
import type { AppSchema } from './task-common';
import { parseTask, SCIENCEBOARD_SNAPSHOT, type generatedProvenanceSchema, type InitializeStep, type Task } from './task';

/**
 * A task written by the task-generator model, in the form every worker runs: a ScienceBoard task
 * with no `evaluate` checks (the judge decides whether a rollout solved it), the `generated`
 * provenance, and the software's default start state (the seeds' launch steps) as `initialize`.
 */

export type GeneratedProvenance = z.output<typeof generatedProvenanceSchema>;

/** Where generated tasks of a software start: what its seed tasks do to bring the app up. */
export interface StartState {
  readonly initialize: readonly InitializeStep[];
  readonly snapshot: string;
  readonly version: string;
}

/**
 * The default start state of a software: the shortest `initialize` of its seeds that launches the
 * app (for KAlgebra, the bare launch), so a generated task starts from the app as a seed starts.
 * Undefined when no seed launches anything.
 */
export function defaultStartState(seeds: readonly Task[]): StartState | undefined {
  const launching = seeds.filter((seed) => seed.initialize.some((step) => step.func === 'launch'));
  const shortest = [...launching].sort((a, b) => a.initialize.length - b.initialize.length || a.id.localeCompare(b.id))[0];
  return shortest === undefined ? undefined : { initialize: shortest.initialize, snapshot: shortest.snapshot ?? SCIENCEBOARD_SNAPSHOT, version: shortest.version };
}

export interface GeneratedTaskInput {
  readonly id: string;
  readonly software: string;
  readonly instruction: string;
  readonly maxSteps: number;
  readonly start: StartState;
  readonly provenance: GeneratedProvenance;
}

/** A generated task, validated like any task by the schemas of `apps` (a ValidationError names the bad field). */
export function generatedTask(apps: readonly AppSchema[], input: GeneratedTaskInput): Task {
  return parseTask(
    apps,
    {
      type: input.software,
      sort: 'generated',
      steps: input.maxSteps,
      instruction: input.instruction,
      version: input.start.version,
      snapshot: input.start.snapshot,
      initialize: input.start.initialize,
      evaluate: [],
      generated: input.provenance,
    },
    input.id,
  );
}
