import type { AppModule } from '../app-module';
import { perturbedPlan, referencePlan } from './reference';
import { chimerax } from './schema';
import { SEEDS } from './seeds';
import { chimeraxVm } from './vm';

/** ChimeraX, as the registry (apps/index.ts) lists it. */
export const app = { schema: chimerax, policy: { referencePlan, perturbedPlan }, seeds: SEEDS, vm: chimeraxVm } as const satisfies AppModule;
