import { existsSync } from 'node:fs';
import * as path from 'node:path';

/** Where infra/install.sh puts the servers it installs. */
const TOOLS_BIN = path.resolve(__dirname, '..', '..', '.tools', 'bin');

/** The programs infra/install.sh puts in .tools/bin: the servers, and kustomize and kubernetes-validate for infra/deploy/'s test. */
export type Tool = 'temporal' | 'minio' | 'kustomize' | 'kubernetes-validate';

/** Where infra/install.sh puts a tool (`temporal`, `minio`...); startDaemon says so when it is missing. */
export const toolBinary = (name: Tool): string => path.join(TOOLS_BIN, name);

/**
 * Absolute path of an installed server binary. Fails with the command that installs it, so a
 * missing tool never shows up later as a confusing spawn error.
 */
export function toolPath(name: Tool): string {
  const candidate = toolBinary(name);
  if (!existsSync(candidate)) throw notInstalled(name, candidate);
  return candidate;
}

export const notInstalled = (name: string, where: string): Error =>
  new Error(`${name} is not installed at ${where}: run \`bash infra/install.sh\` (npm run install-tools)`);
