import type { AppModule } from '../app-module';
import { perturbedPlan, referencePlan } from './reference';
import { lean } from './schema';
import { SEEDS } from './seeds';
import { leanVm } from './vm';

/** Lean, as the registry (apps/index.ts) lists it. */
export const app = { schema: lean, policy: { referencePlan, perturbedPlan }, seeds: SEEDS, vm: leanVm } as const satisfies AppModule;
