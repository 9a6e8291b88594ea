/**
 * GRASS GIS's reference policy: the task's stop alone (apps/stop-reference.ts), since its tasks are
 * solved in the app's own GUI on a ScienceBoard VM, which the pipeline has no script for.
 */
export { perturbedPlan, referencePlan } from '../stop-reference';
