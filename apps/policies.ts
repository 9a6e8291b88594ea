import type { ReferencePlan } from '../core/policies/plans';
import type { Size } from '../core/smart-resize';
import type { Task } from '../core/task';
import type { Policy } from './app-module';
import { APP_MODULES } from './index';

/**
 * The reference policies by software (a task's `type`), from the registry: the plan that carries
 * out a task's reference solution, and a perturbed one its checks must fail.
 */
const POLICIES: Readonly<Record<string, Policy>> = Object.fromEntries(APP_MODULES.map((app) => [app.schema.software, app.policy]));

/** The software that have a reference policy. */
export const POLICY_SOFTWARE: readonly string[] = Object.keys(POLICIES);

const policyFor = (task: Task): Policy | undefined => (Object.hasOwn(POLICIES, task.type) ? POLICIES[task.type] : undefined);

export function referencePlanFor(task: Task, screen: Size): ReferencePlan {
  return policyFor(task)?.referencePlan(task, screen) ?? { replayable: false, reason: `no reference policy for ${task.type}` };
}

export function perturbedPlanFor(task: Task, screen: Size): ReferencePlan {
  return policyFor(task)?.perturbedPlan(task, screen) ?? { replayable: false, reason: `no reference policy for ${task.type}` };
}

export type { ReferencePlan } from '../core/policies/plans';
