import type { AppModule } from '../app-module';
import { perturbedPlan, referencePlan } from './reference';
import { kalgebra } from './schema';
import { SEEDS } from './seeds';

/** KAlgebra. It has no VmApp: on a VM, the OSWorld desktop reads it through its state server's client (vm.ts). */
export const app = { schema: kalgebra, policy: { referencePlan, perturbedPlan }, seeds: SEEDS, vmImage: { debianPackages: ['kalgebra'] } } as const satisfies AppModule;
