import type { LoadedConfig } from '../../config/load';
import type { HostConfig } from '../../config/schema';
import type { Desktop } from './desktop';
import { createLocalDesktop } from './local/local-desktop';
import { createOsworldDesktop } from './osworld/osworld-desktop';

/**
 * The desktops of a host, by its kind in temporal.yaml: Xvfb displays with real apps (local) or
 * OSWorld/ScienceBoard VMs behind their HTTP server (osworld). Returns a factory of desktop
 * `index`, so the pool can replace one it recycles; building a desktop starts nothing.
 */
export function hostDesktops(host: HostConfig, config: LoadedConfig, dir: string): (index: number) => Desktop {
  if (host.kind === 'local') return (index) => createLocalDesktop(host, config.localApps, index, { dir });
  return (index) => createOsworldDesktop(host, index);
}
