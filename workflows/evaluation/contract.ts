import { z } from 'zod';
import type { Config } from '../../config/schema';
import { parseOrThrow, ValidationError } from '../../core/validation';
import { attempts, plannerCheckpoint, runId, software, taskId } from '../fields';
import { runFromWorkflowId } from '../names';

/**
 * The evaluation workflow's input: one zod schema, its defaults from the loaded temporal.yaml and
 * the software with tasks, its types inferred; the workflow's first step and the CLI before it
 * starts one check with it.
 */

const parseError = (source: string, problems: string[]): ValidationError => new ValidationError(source, problems);

/**
 * A row of an evaluation: a planner checkpoint, and optionally the run its rollouts go to. A row
 * with its own run is rolled out once and reused by every evaluation that names the same run (the
 * batch awaits finished rollouts instead of running them again): a specialization's base row.
 */
const evaluationPlanner = plannerCheckpoint.extend({
  run: runId.optional(),
  /** The software this row is evaluated on (a specialist on its own); default: every software of the evaluation. */
  software: z.array(software).min(1, 'expected at least one software').optional(),
});

/** An evaluation: of every software with tasks (`knownSoftware`) unless told, by the planner endpoint's model unless told. */
export function evaluationInputSchema(config: Config, workflowId: string, knownSoftware: readonly string[]) {
  const endpointModel = config.models.planner.model;
  return z.strictObject({
    /** Run id of this evaluation (scheduled runs: from the workflow id). */
    run: runId.default(runFromWorkflowId(workflowId)),
    /** Reports of a series are compared with the previous one. */
    series: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'expected a series name (a-z, 0-9, -)').default(config.evaluation.series),
    /** Software to evaluate. */
    software: z.array(software).min(1, 'expected at least one software').default([...knownSoftware]),
    /** k of Average@k and Pass@k. */
    attempts: attempts.default(config.evaluation.attempts),
    /** Task ids per software; default: all. */
    taskIds: z.record(z.string(), z.array(taskId).min(1)).optional(),
    /** The rows of the report; default: the planner endpoint's model, named after it. */
    planners: z
      .array(evaluationPlanner)
      .min(1, 'expected at least one planner')
      .default([{ name: endpointModel.replace(/[^A-Za-z0-9._-]/g, '-'), model: endpointModel }]),
  });
}

export type EvaluationRequest = z.input<ReturnType<typeof evaluationInputSchema>>;
export type EvaluationInput = z.output<ReturnType<typeof evaluationInputSchema>>;

/** The schema's checks, then those across fields: known software, rows evaluated on software evaluated, distinct names and runs. */
export function resolveEvaluationInput(config: Config, raw: unknown, workflowId: string, knownSoftware: readonly string[]): EvaluationInput {
  const input = parseOrThrow(evaluationInputSchema(config, workflowId, knownSoftware), raw, 'evaluation input');
  const problems = [
    ...input.software.filter((s) => !knownSoftware.includes(s)).map((s) => `software: unknown software "${s}": expected one of ${knownSoftware.join(', ')}`),
    ...Object.keys(input.taskIds ?? {})
      .filter((s) => !input.software.includes(s))
      .map((s) => `taskIds.${s}: "${s}" is not among the software evaluated`),
  ];
  const names = input.planners.map((p) => p.name);
  names.forEach((name, i) => names.indexOf(name) !== i && problems.push(`planners[${i}].name: duplicate planner "${name}"`));
  input.planners.forEach((p, i) =>
    (p.software ?? []).filter((s) => !input.software.includes(s)).forEach((s) => problems.push(`planners[${i}].software: "${s}" is not among the software evaluated`)),
  );
  const runs = input.planners.map((p) => p.run);
  runs.forEach((run, i) => run !== undefined && runs.indexOf(run) !== i && problems.push(`planners[${i}].run: run "${run}" is another planner's too`));
  if (problems.length > 0) throw parseError('evaluation input', problems);
  return input;
}
