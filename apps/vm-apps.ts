import { APP_MODULES } from './index';
import type { VmApp } from './vm-app';

/** The applications a ScienceBoard VM runs through their own `vm.ts`, by task `type` (from the registry). */
export const VM_APPS: Readonly<Record<string, VmApp>> = Object.fromEntries(APP_MODULES.flatMap((app): Array<[string, VmApp]> => ('vm' in app ? [[app.schema.software, app.vm]] : [])));

export const vmAppOf = (software: string): VmApp | undefined => (Object.hasOwn(VM_APPS, software) ? VM_APPS[software] : undefined);
