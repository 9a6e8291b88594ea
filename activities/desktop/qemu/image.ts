import { readFileSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { APP_MODULES } from '../../../apps/index';
import { artifactKey, cachedArtifact, sha256, type CacheOptions } from '../../../io/artifact-cache';
import { runCommand } from '../../../io/process';
import { hostEnv, type VmImage } from './qemu-vm';

/**
 * The project's VM image (infra/vm-image): Debian 12 with the real apps and the project's in-VM
 * server, built by the recipe's scripts and kept in the artifact cache outside the clone, in two
 * entries so that a change of the project's files does not fetch the packages again:
 *   - `vm-rootfs`: the packages' root file system as a tarball (mmdebstrap), keyed by the package
 *     list and its script;
 *   - `vm-image`: the bootable kernel, initrd and qcow2 disk, keyed by the rootfs and every file of
 *     the project's layer (the server, its Python packages, the desktop's unit).
 * A run with a cold cache builds them and says so (minutes: docs/setup.md).
 */

const RECIPE = path.resolve(__dirname, '..', '..', '..', '..', 'infra', 'vm-image');
/** The recipe as the source tree has it (this file runs from build/). */
const recipeFile = (name: string): string => path.join(RECIPE, name);

const BUILD_TIMEOUT_MS = 60 * 60_000;

/** Every file of the recipe named (folders: every file below them), by path from the recipe, with its sha256: what a key is made of. */
function digests(names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    if (!statSync(recipeFile(name)).isDirectory()) out[name] = sha256(readFileSync(recipeFile(name)));
    else {
      const inner = readdirSync(recipeFile(name)).filter((f) => !f.startsWith('.') && f !== '__pycache__');
      Object.assign(out, digests(inner.sort().map((f) => path.join(name, f))));
    }
  }
  return out;
}

const ROOTFS_FILES = ['build-rootfs.sh', 'debian-packages.txt'];
const LAYER_FILES = ['build-disk.sh', 'install-vm-python.sh', 'python-requirements.txt', 'layer', 'server'];

/** What the registry's applications need in the image (apps/<slug>/index.ts, vmImage), in the registry's order. */
export function imageApps(): { software: string[]; debianPackages: string[]; folders: string[] } {
  const apps = APP_MODULES.flatMap((app) => ('vmImage' in app ? [{ software: app.schema.software, ...app.vmImage }] : []));
  return {
    software: apps.map((a) => a.software),
    debianPackages: [...new Set(apps.flatMap((a) => a.debianPackages))],
    folders: [...new Set(apps.flatMap((a) => ('folders' in a ? a.folders : [])))],
  };
}

/** The project's image, from the cache or built into it (`log` says when it builds). */
export async function projectVmImage(options: CacheOptions = {}): Promise<VmImage & { readonly id: string }> {
  const log = options.log ?? ((line: string) => console.error(line));
  const apps = imageApps();
  const rootfsSpec = {
    kind: 'vm-rootfs',
    inputs: { ...digests(ROOTFS_FILES), appPackages: apps.debianPackages },
    build: async (dir: string) => {
      log('VM image: building the root file system with mmdebstrap (Debian 12 and the apps; several minutes, once per package list)');
      await runCommand('bash', [recipeFile('build-rootfs.sh'), path.join(dir, 'rootfs.tar'), ...apps.debianPackages], { env: hostEnv(), timeoutMs: BUILD_TIMEOUT_MS });
      return {};
    },
  };
  const rootfsKey = artifactKey(rootfsSpec.kind, rootfsSpec.inputs);
  const image = await cachedArtifact(
    {
      kind: 'vm-image',
      inputs: { rootfs: rootfsKey, layer: digests(LAYER_FILES), folders: apps.folders },
      build: async (dir) => {
        const rootfs = await cachedArtifact(rootfsSpec, options);
        log('VM image: building the disk (the project\'s server and desktop over the root file system)');
        await runCommand('bash', [recipeFile('build-disk.sh'), path.join(rootfs.dir, 'rootfs.tar'), dir, ...apps.folders], { env: hostEnv(), timeoutMs: BUILD_TIMEOUT_MS });
        return {};
      },
    },
    options,
  );
  return { id: image.key, disk: path.join(image.dir, 'disk.qcow2'), kernel: path.join(image.dir, 'vmlinuz'), initrd: path.join(image.dir, 'initrd.img') };
}
