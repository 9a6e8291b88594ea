import type { AppDriver } from '../../../apps/local-driver';
import { createKAlgebraDriver } from '../../../apps/kalgebra/local/driver';
import { createTeXstudioDriver } from '../../../apps/texstudio/local/driver';

/**
 * The app drivers of local desktops, by software (a task's `type`). Another app is its driver in
 * its app folder (apps/<slug>/local/, an AppDriver of apps/local-driver.ts), a line here and a
 * `localApps` entry in temporal.yaml. The registry (apps/index.ts) does not list the drivers: it is
 * loaded wherever tasks are parsed, and a driver loads Node's process and file modules.
 */
export function defaultDrivers(): Record<string, AppDriver> {
  return { KAlgebra: createKAlgebraDriver(), TeXstudio: createTeXstudioDriver() };
}
