import * as path from 'node:path';
import type { LoadedConfig } from '../../config/load';
import type { HostConfig } from '../../config/schema';
import type { Desktop } from './desktop';
import { createLocalDesktop } from './local/local-desktop';
import { createOsworldDesktop } from './osworld/osworld-desktop';
import { QemuDesktop } from './qemu/qemu-desktop';

/**
 * The desktops of a host, by its kind in temporal.yaml: Xvfb displays with real apps (local) or
 * OSWorld/ScienceBoard VMs behind their HTTP server, run by someone else (osworld) or by the host
 * itself with QEMU (qemu). Returns a factory of desktop
 * `index`, so the pool can replace one it recycles; building a desktop starts nothing.
 */
export function hostDesktops(host: HostConfig, config: LoadedConfig, dir: string): (index: number) => Desktop {
  if (host.kind === 'local') return (index) => createLocalDesktop(host, config.localApps, index, { dir });
  if (host.kind === 'qemu') return (index) => new QemuDesktop(host, index, { dir: path.join(dir, 'vms') });
  return (index) => createOsworldDesktop(host, index);
}
