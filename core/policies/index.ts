import * as celestia from '../../apps/celestia/reference';
import * as chimerax from '../../apps/chimerax/reference';
import * as grassgis from '../../apps/grassgis/reference';
import * as lean from '../../apps/lean/reference';
import type { Size } from '../smart-resize';
import type { Task } from '../task';
import * as kalgebra from '../../apps/kalgebra/reference';
import type { ReferencePlan } from './plans';
import * as texstudio from '../../apps/texstudio/reference';

/**
 * The reference policies by software (a task's `type`): the plan that carries out a task's
 * reference solution, and a perturbed one its checks must fail. Another software's policy is a
 * module with these two functions and a line here.
 */
interface Policy {
  referencePlan(task: Task, screen: Size): ReferencePlan;
  perturbedPlan(task: Task, screen: Size): ReferencePlan;
}

const POLICIES: Readonly<Record<string, Policy>> = { KAlgebra: kalgebra, TeXstudio: texstudio, Celestia: celestia, ChimeraX: chimerax, GrassGIS: grassgis, Lean: lean };

/** The software that have a reference policy. */
export const POLICY_SOFTWARE: readonly string[] = Object.keys(POLICIES);

const policyFor = (task: Task): Policy | undefined => (Object.hasOwn(POLICIES, task.type) ? POLICIES[task.type] : undefined);

export function referencePlanFor(task: Task, screen: Size): ReferencePlan {
  return policyFor(task)?.referencePlan(task, screen) ?? { replayable: false, reason: `no reference policy for ${task.type}` };
}

export function perturbedPlanFor(task: Task, screen: Size): ReferencePlan {
  return policyFor(task)?.perturbedPlan(task, screen) ?? { replayable: false, reason: `no reference policy for ${task.type}` };
}

export type { ReferencePlan } from './plans';
