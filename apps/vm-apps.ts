import { celestiaVm } from './celestia/vm';
import { chimeraxVm } from './chimerax/vm';
import { grassVm } from './grassgis/vm';
import { leanVm } from './lean/vm';
import type { VmApp } from './vm-app';

/** The applications a ScienceBoard VM runs through their own `vm.ts`, by task `type`. */
export const VM_APPS: Readonly<Record<string, VmApp>> = Object.fromEntries([celestiaVm, chimeraxVm, grassVm, leanVm].map((app) => [app.software, app]));

export const vmAppOf = (software: string): VmApp | undefined => (Object.hasOwn(VM_APPS, software) ? VM_APPS[software] : undefined);
