import { z } from 'zod';
import { judgePlanConfigSchema, type Config, type JudgeImages, type JudgePlanConfig, type JudgeStrategy } from '../../config/schema';
import { attemptOfManifest, DEFAULT_VERDICT, type AttemptRef } from '../../core/keys';
import type { JudgePlan } from '../../core/judge/voting';
import { parseOrThrow, ValidationError } from '../../core/validation';
import { label, runId, software } from '../fields';
import { runFromWorkflowId } from '../names';

/**
 * The judging workflows' inputs (one trajectory, a run, a comparison of strategies): checked, and
 * completed from temporal.yaml, by the workflow's first step and by the CLI before it starts one.
 */

/** A judge plan from temporal.yaml's form (judge names) to the core's (names with their models). */
export function judgePlanOf(config: Config, plan: JudgePlanConfig, field = 'plan'): JudgePlan {
  const judges = plan.judges.map((name, i) => {
    const endpoint = config.models.judges.find((j) => j.name === name);
    if (endpoint === undefined) {
      throw parseError('judge plan', [`${field}.judges[${i}]: unknown judge "${name}": expected one of ${config.models.judges.map((j) => j.name).join(', ')}`]);
    }
    return { name, model: endpoint.model };
  });
  return { lowResolutionVotes: plan.lowResolutionVotes, highResolutionVotes: plan.highResolutionVotes, judges, temperatures: plan.temperatures };
}

const parseError = (source: string, problems: string[]): ValidationError => new ValidationError(source, problems);

export const judgeRequestSchema = z.strictObject({
  /** The trajectory: {prefix}/runs/{run}/{software}/{task}/{attempt}/manifest.json */
  manifestKey: z.string().min(1),
  /** `default` writes verdict.json; another label writes verdicts/{label}.json (judge strategies). */
  label: label.default(DEFAULT_VERDICT),
  /** Overrides temporal.yaml's judging.plan. */
  plan: judgePlanConfigSchema.optional(),
});

export type JudgeRequest = z.input<typeof judgeRequestSchema>;
export interface JudgeInput {
  readonly manifestKey: string;
  readonly ref: AttemptRef;
  readonly label: string;
  readonly plan: JudgePlan;
  readonly images: JudgeImages;
}

export function resolveJudgeInput(config: Config, raw: unknown): JudgeInput {
  const request = parseOrThrow(judgeRequestSchema, raw, 'judge input');
  let ref: AttemptRef;
  try {
    ref = attemptOfManifest(config.storage.prefix, request.manifestKey);
  } catch (err) {
    throw parseError('judge input', [`manifestKey: ${(err as Error).message}`]);
  }
  return {
    manifestKey: request.manifestKey,
    ref,
    label: request.label,
    plan: judgePlanOf(config, request.plan ?? config.judging.plan),
    images: config.judging.images,
  };
}

export const judgeRunRequestSchema = z.strictObject({
  /** Every trajectory of this run and software is judged. */
  run: runId,
  software,
  label: label.default(DEFAULT_VERDICT),
  plan: judgePlanConfigSchema.optional(),
  /** Trajectories judged at once; default: judging.concurrency. */
  concurrency: z.number().int().min(1).max(1000).optional(),
  /** Carried across continue-as-new. */
  carried: z.strictObject({ cursor: z.string().min(1), judged: z.number().int().min(0), succeeded: z.number().int().min(0), runs: z.number().int().min(0) }).optional(),
});

export type JudgeRunRequest = z.input<typeof judgeRunRequestSchema>;
export type JudgeRunInput = Omit<z.output<typeof judgeRunRequestSchema>, 'plan' | 'concurrency'> & {
  readonly plan?: JudgePlanConfig;
  readonly concurrency: number;
};

export function resolveJudgeRunInput(config: Config, raw: unknown): JudgeRunInput {
  const request = parseOrThrow(judgeRunRequestSchema, raw, 'judge run input');
  if (request.plan !== undefined) judgePlanOf(config, request.plan);
  return { ...request, concurrency: request.concurrency ?? config.judging.concurrency };
}

export const judgeEvaluationRequestSchema = z.strictObject({
  /** The rollouts whose trajectories are judged (their evaluators give the truth). */
  run: runId,
  software,
  /** Labels of judging.strategies to compare; default: all of them. */
  strategies: z.array(label).min(1).optional(),
  /** The comparison's id (its report key); default: from the workflow id. */
  id: runId.optional(),
});

export type JudgeEvaluationRequest = z.input<typeof judgeEvaluationRequestSchema>;

export interface JudgeEvaluationInput {
  readonly id: string;
  readonly run: string;
  readonly software: string;
  /** The strategies of the table, then any all-high twins they need that are not among them. */
  readonly strategies: JudgeStrategy[];
}

const samePlan = (a: JudgePlanConfig, b: JudgePlanConfig): boolean => JSON.stringify(a) === JSON.stringify(b);

export function resolveJudgeEvaluationInput(config: Config, raw: unknown, workflowId: string): JudgeEvaluationInput {
  const request = parseOrThrow(judgeEvaluationRequestSchema, raw, 'judge evaluation input');
  const configured = config.judging.strategies ?? [];
  if (configured.length === 0) throw parseError('judge evaluation input', ['strategies: temporal.yaml has no judging.strategies to compare']);
  const unknown = (request.strategies ?? []).filter((l) => !configured.some((s) => s.label === l));
  if (unknown.length > 0) {
    throw parseError('judge evaluation input', unknown.map((l) => `strategies: unknown strategy "${l}": expected one of ${configured.map((s) => s.label).join(', ')}`));
  }
  const chosen: JudgeStrategy[] = configured.filter((s) => request.strategies === undefined || request.strategies.includes(s.label)).map((s) => ({ ...s }));
  const twins: JudgeStrategy[] = [];
  for (const strategy of chosen) {
    if (strategy.plan.lowResolutionVotes === 0) continue;
    const allHigh: JudgePlanConfig = { ...strategy.plan, lowResolutionVotes: 0, highResolutionVotes: strategy.plan.lowResolutionVotes + strategy.plan.highResolutionVotes };
    const twin = [...configured, ...twins].find((s) => samePlan(s.plan, allHigh));
    if (twin !== undefined) {
      Object.assign(strategy, { allHighTwin: twin.label });
      if (!chosen.some((s) => s.label === twin.label) && !twins.includes(twin as JudgeStrategy)) twins.push({ ...twin });
    } else {
      const made = { label: `${strategy.label}-allhigh`.slice(0, 41), title: `${strategy.title}, all high resolution`, plan: allHigh };
      twins.push(made);
      Object.assign(strategy, { allHighTwin: made.label });
    }
  }
  return { id: request.id ?? runFromWorkflowId(workflowId), run: request.run, software: request.software, strategies: [...chosen, ...twins] };
}
