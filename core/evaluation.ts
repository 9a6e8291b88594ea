import { z } from 'zod';
import type { StopReason } from './episode';
import { answerArgs } from './planner-parser';
import type { Evaluator } from './task';

/** How an episode ended, as the `stop` evaluator sees it. */
export interface StopInfo {
  readonly reason: StopReason;
  /** The submitted answer when reason is ANS. */
  readonly answer?: string;
}

/** The outcome of one `evaluate` entry of a task. */
export interface CheckResult {
  /** Position in the task's `evaluate` list. */
  readonly index: number;
  readonly type: Evaluator['type'];
  readonly passed: boolean;
  /** What was compared, in words: expected vs found. */
  readonly detail: string;
}

/** A task passes when every check passes. */
export interface EvaluationResult {
  readonly passed: boolean;
  readonly checks: readonly CheckResult[];
  /**
   * The app (its software name) that was not running when the task was evaluated: the agent closed
   * it, or it crashed. The attempt is not solved (reward 0) and is its own outcome in every report.
   * ScienceBoard's evaluation raises there for ChimeraX and its tester skips the task; here an agent
   * that closes the app must not escape a failure (docs/scoring.md).
   */
  readonly appNotRunning?: string;
}

/** How reports name that outcome. */
export const APP_NOT_RUNNING = 'the app was not running at evaluation';

/**
 * The same shapes as schemas, for reading results back from storage (trajectory manifests): a
 * check's type is one of `types`, those the applications know (core/task.ts evaluatorTypesOf; the
 * registry's are built once in apps/manifests.ts).
 */
export function evaluationResultSchemaOf(types: readonly [Evaluator['type'], ...Evaluator['type'][]]): z.ZodType<EvaluationResult> {
  const check: z.ZodType<CheckResult> = z.strictObject({
    index: z.number().int().min(0),
    type: z.enum(types),
    passed: z.boolean(),
    detail: z.string(),
  });
  return z
    .strictObject({
      passed: z.boolean(),
      checks: z.array(check),
      appNotRunning: z.string().min(1).optional(),
    })
    .refine((r) => r.appNotRunning === undefined || !r.passed, { message: 'an evaluation whose app was not running is never passed', path: ['passed'] });
}

/** The `var` value that means "this variable must not exist" (ScienceBoard). */
export const UNDEFINED_VARIABLE = '#UNDEF';

/** ScienceBoard's tolerance for `val`. */
export const VAL_TOLERANCE = 1e-6;

/** The `val` rule: the printed value is a finite number within VAL_TOLERANCE of `expected`. */
export function valueMatches(printed: string | undefined, expected: number): boolean {
  if (printed === undefined || printed.trim() === '') return false;
  const found = Number(printed);
  return Number.isFinite(found) && Math.abs(found - expected) <= VAL_TOLERANCE;
}

export function combineChecks(checks: readonly CheckResult[]): EvaluationResult {
  return { passed: checks.length > 0 && checks.every((c) => c.passed), checks };
}

/** The result of a task whose app was not running at evaluation: not passed, whatever its checks say. */
export const appNotRunning = (app: string, checks: readonly CheckResult[]): EvaluationResult => ({ passed: false, checks, appNotRunning: app });

/**
 * ScienceBoard's `stop` check (sci/base/task.py, Task.eval): how the agent ended, and for ANS its
 * arguments equal to `args`, list for list, as its ANS received them (the answer split on single
 * spaces: core/planner-parser.ts answerArgs). Nothing is trimmed, unquoted or collapsed.
 */
export function evaluateStop(check: Extract<Evaluator, { type: 'stop' }>, index: number, stop: StopInfo): CheckResult {
  const expected = check.value === 'ANS' ? `ANS ${JSON.stringify(check.args ?? [])}` : check.value;
  const args = answerArgs(stop.answer ?? '');
  const found = stop.reason === 'ANS' ? `ANS ${JSON.stringify(args)}` : stop.reason;
  let passed = stop.reason === check.value;
  if (passed && check.value === 'ANS' && check.args !== undefined) {
    passed = check.args.length === args.length && check.args.every((arg, i) => arg === args[i]);
  }
  return { index, type: 'stop', passed, detail: `expected ${expected}, found ${found}` };
}
