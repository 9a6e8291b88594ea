import type { AppModule } from '../app-module';
import { perturbedPlan, referencePlan } from './reference';
import { grassgis } from './schema';
import { SEEDS } from './seeds';
import { grassVm } from './vm';

/** GRASS GIS, as the registry (apps/index.ts) lists it. */
export const app = { schema: grassgis, policy: { referencePlan, perturbedPlan }, seeds: SEEDS, vm: grassVm } as const satisfies AppModule;
