import type { AppModule } from '../app-module';
import { perturbedPlan, referencePlan } from './reference';
import { celestia } from './schema';
import { SEEDS } from './seeds';
import { celestiaVm } from './vm';

/** Celestia, as the registry (apps/index.ts) lists it. */
export const app = { schema: celestia, policy: { referencePlan, perturbedPlan }, seeds: SEEDS, vm: celestiaVm } as const satisfies AppModule;
