import type { AppModule } from '../app-module';
import { perturbedPlan, referencePlan } from './reference';
import { texstudio } from './schema';
import { SEEDS } from './seeds';

/** TeXstudio. It has no VmApp: on a VM, the OSWorld server's own routes read and compile its files. */
export const app = {
  schema: texstudio,
  policy: { referencePlan, perturbedPlan },
  seeds: SEEDS,
  // The tasks write their documents into ~/atelier, which ScienceBoard's snapshot has.
  vmImage: { debianPackages: ['texstudio', 'texlive-latex-base'], folders: ['/home/user/atelier'] },
} as const satisfies AppModule;
