import { z } from 'zod';
import type { Config } from '../../config/schema';
import { parseOrThrow, ValidationError } from '../../core/validation';
import { attempts, plannerCheckpoint, runId, software, taskId } from '../fields';
import { runFromWorkflowId } from '../names';

/**
 * The evaluation workflow's input: checked, and completed from temporal.yaml, by the workflow's
 * first step and by the CLI before it starts one.
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

export const evaluationRequestSchema = z.strictObject({
  /** Run id of this evaluation; default: from the workflow id (scheduled runs). */
  run: runId.optional(),
  /** Reports of a series are compared with the previous one; default: evaluation.series. */
  series: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'expected a series name (a-z, 0-9, -)').optional(),
  /** Software to evaluate; default: every software with tasks. */
  software: z.array(software).min(1, 'expected at least one software').optional(),
  /** k of Average@k and Pass@k; default: evaluation.attempts. */
  attempts: attempts.optional(),
  /** Task ids per software; default: all. */
  taskIds: z.record(z.string(), z.array(taskId).min(1)).optional(),
  /** The rows of the report; default: the planner endpoint's model, named after it. */
  planners: z.array(evaluationPlanner).min(1, 'expected at least one planner').optional(),
});

export type EvaluationRequest = z.input<typeof evaluationRequestSchema>;
export interface EvaluationInput {
  readonly run: string;
  readonly series: string;
  readonly software: string[];
  readonly attempts: number;
  readonly taskIds?: Readonly<Record<string, string[]>>;
  readonly planners: Array<z.output<typeof evaluationPlanner>>;
}

export function resolveEvaluationInput(config: Config, raw: unknown, workflowId: string, knownSoftware: readonly string[]): EvaluationInput {
  const request = parseOrThrow(evaluationRequestSchema, raw, 'evaluation input');
  const problems = [
    ...(request.software ?? []).filter((s) => !knownSoftware.includes(s)).map((s) => `software: unknown software "${s}": expected one of ${knownSoftware.join(', ')}`),
    ...Object.keys(request.taskIds ?? {})
      .filter((s) => !(request.software ?? knownSoftware).includes(s))
      .map((s) => `taskIds.${s}: "${s}" is not among the software evaluated`),
  ];
  const names = (request.planners ?? []).map((p) => p.name);
  names.forEach((name, i) => names.indexOf(name) !== i && problems.push(`planners[${i}].name: duplicate planner "${name}"`));
  (request.planners ?? []).forEach((p, i) =>
    (p.software ?? [])
      .filter((s) => !(request.software ?? knownSoftware).includes(s))
      .forEach((s) => problems.push(`planners[${i}].software: "${s}" is not among the software evaluated`)),
  );
  const runs = (request.planners ?? []).map((p) => p.run);
  runs.forEach((run, i) => run !== undefined && runs.indexOf(run) !== i && problems.push(`planners[${i}].run: run "${run}" is another planner's too`));
  if (problems.length > 0) throw parseError('evaluation input', problems);
  return {
    run: request.run ?? runFromWorkflowId(workflowId),
    series: request.series ?? config.evaluation.series,
    software: [...(request.software ?? knownSoftware)],
    attempts: request.attempts ?? config.evaluation.attempts,
    ...(request.taskIds === undefined ? {} : { taskIds: request.taskIds }),
    planners: request.planners ?? [{ name: config.models.planner.model.replace(/[^A-Za-z0-9._-]/g, '-'), model: config.models.planner.model }],
  };
}
