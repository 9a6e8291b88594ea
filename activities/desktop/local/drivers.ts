import type { AppDriver } from './app-driver';
import { createKAlgebraDriver } from './kalgebra/driver';
import { createTeXstudioDriver } from './texstudio/driver';

/**
 * The app drivers of local desktops, by software (a task's `type`). Another app is a folder with
 * its driver (app-driver.ts), a line here and a `localApps` entry in temporal.yaml.
 */
export function defaultDrivers(): Record<string, AppDriver> {
  return { KAlgebra: createKAlgebraDriver(), TeXstudio: createTeXstudioDriver() };
}
