import { z } from 'zod';
import { judgePlanConfigSchema, type Config, type JudgeImages, type JudgePlanConfig, type JudgeStrategy } from '../../config/schema';
import { attemptOfManifest, DEFAULT_VERDICT, type AttemptRef } from '../../core/keys';
import type { JudgePlan } from '../../core/judge/voting';
import { parseOrThrow, ValidationError } from '../../core/validation';
import { label, runId, software } from '../fields';
import { runFromWorkflowId } from '../names';

/**
 * The judging workflows' inputs (one trajectory, a run, a comparison of strategies): one zod schema
 * each, its defaults from the loaded temporal.yaml; the input a workflow gets is what its resolve
 * function returns (the schema's output, completed with what the deployment knows: the judges'
 * models, the attempt a manifest key names), its type inferred from it. The workflow's first step
 * and the CLI before it starts one run them.
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

export const judgeInputSchema = (config: Config) =>
  z.strictObject({
    /** The trajectory: {prefix}/runs/{run}/{software}/{task}/{attempt}/manifest.json */
    manifestKey: z.string().min(1),
    /** `default` writes verdict.json; another label writes verdicts/{label}.json (judge strategies). */
    label: label.default(DEFAULT_VERDICT),
    /** The judge plan: temporal.yaml's judging.plan unless given. */
    plan: judgePlanConfigSchema.default(config.judging.plan),
  });

export type JudgeRequest = z.input<ReturnType<typeof judgeInputSchema>>;
/** A judge's input: the request, the attempt its manifest key names, its plan with the judges' models, and the screenshot boxes. */
export type JudgeInput = ReturnType<typeof resolveJudgeInput>;

export function resolveJudgeInput(config: Config, raw: unknown) {
  const request = parseOrThrow(judgeInputSchema(config), raw, 'judge input');
  let ref: AttemptRef;
  try {
    ref = attemptOfManifest(config.storage.prefix, request.manifestKey);
  } catch (err) {
    throw parseError('judge input', [`manifestKey: ${(err as Error).message}`]);
  }
  const images: JudgeImages = config.judging.images;
  return { manifestKey: request.manifestKey, ref, label: request.label, plan: judgePlanOf(config, request.plan), images };
}

export const judgeRunInputSchema = (config: Config) =>
  z.strictObject({
    /** Every trajectory of this run and software is judged. */
    run: runId,
    software,
    label: label.default(DEFAULT_VERDICT),
    /** Overrides temporal.yaml's judging.plan for every trajectory's judge. */
    plan: judgePlanConfigSchema.optional(),
    /** Trajectories judged at once. */
    concurrency: z.number().int().min(1).max(1000).default(config.judging.concurrency),
    /** Carried across continue-as-new. */
    carried: z.strictObject({ cursor: z.string().min(1), judged: z.number().int().min(0), succeeded: z.number().int().min(0), runs: z.number().int().min(0) }).optional(),
  });

export type JudgeRunRequest = z.input<ReturnType<typeof judgeRunInputSchema>>;
export type JudgeRunInput = z.output<ReturnType<typeof judgeRunInputSchema>>;

export function resolveJudgeRunInput(config: Config, raw: unknown): JudgeRunInput {
  const input = parseOrThrow(judgeRunInputSchema(config), raw, 'judge run input');
  if (input.plan !== undefined) judgePlanOf(config, input.plan);
  return input;
}

export const judgeEvaluationInputSchema = (workflowId: string) =>
  z.strictObject({
    /** The rollouts whose trajectories are judged (their evaluators give the truth). */
    run: runId,
    software,
    /** Labels of judging.strategies to compare; default: all of them. */
    strategies: z.array(label).min(1).optional(),
    /** The comparison's id (its report key). */
    id: runId.default(runFromWorkflowId(workflowId)),
  });

export type JudgeEvaluationRequest = z.input<ReturnType<typeof judgeEvaluationInputSchema>>;
/** The comparison's input: its strategies are those of the table, then any all-high twins they need that are not among them. */
export type JudgeEvaluationInput = ReturnType<typeof resolveJudgeEvaluationInput>;

const samePlan = (a: JudgePlanConfig, b: JudgePlanConfig): boolean => JSON.stringify(a) === JSON.stringify(b);

export function resolveJudgeEvaluationInput(config: Config, raw: unknown, workflowId: string) {
  const request = parseOrThrow(judgeEvaluationInputSchema(workflowId), raw, 'judge evaluation input');
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
  return { id: request.id, run: request.run, software: request.software, strategies: [...chosen, ...twins] };
}
