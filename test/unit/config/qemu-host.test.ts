import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { parseConfig } from '../../../config/load';
import { hostCapacity, type QemuHostConfig } from '../../../config/schema';
import { deploymentCapabilities, PROJECT_VM, SCIENCEBOARD_VM } from '../../../core/requirements';
import { REPO_CONFIG } from '../../../infra/ephemeral';
import { validationProblems } from '../../support/validation';

/** The repo's temporal.yaml with one more host. */
function withHost(host: Record<string, unknown>): string {
  const doc = parse(readFileSync(REPO_CONFIG, 'utf8')) as { hosts: unknown[] };
  doc.hosts.push(host);
  return stringify(doc);
}

const qemu = (text: string): QemuHostConfig => {
  const host = parseConfig(text, '/deploy/temporal.yaml', {}).hosts.find((h): h is QemuHostConfig => h.kind === 'qemu');
  assert.ok(host !== undefined);
  return host;
};

const problemsOf = (text: string): string[] => validationProblems(() => parseConfig(text, '/deploy/temporal.yaml', {}));

describe('temporal.yaml: a host that runs its own VMs (kind: qemu)', () => {
  it('takes the project image, auto acceleration, 2 GiB and 2 CPUs per VM by default, and counts its VMs as its desktops', () => {
    const host = qemu(withHost({ id: 'qemu-1', kind: 'qemu', taskQueue: 'coda-vm-qemu-1', vms: 3 }));
    assert.deepEqual([host.image, host.accelerator, host.memoryMiB, host.cpus, host.screen, host.bootTimeoutSeconds], ['project', 'auto', 2048, 2, { width: 1280, height: 800 }, 900]);
    assert.equal(host.appTimeoutSeconds, 240, 'the osworld path\'s settings, with their defaults');
    assert.equal(hostCapacity(host), 3);
  });

  it('takes a lab\'s own image by its disk, kernel and initrd', () => {
    const image = { disk: '/vms/sci.qcow2', kernel: '/vms/vmlinuz', initrd: '/vms/initrd.img' };
    assert.deepEqual(qemu(withHost({ id: 'qemu-1', kind: 'qemu', taskQueue: 'q', vms: 1, image })).image, image);
  });

  it('names the field and what was expected for bad VMs, accelerators and images', () => {
    const problems = problemsOf(withHost({ id: 'qemu-1', kind: 'qemu', taskQueue: 'q', vms: 0, accelerator: 'hvf', image: { disk: '/vms/sci.qcow2' } }));
    assert.ok(problems.some((p) => /^hosts\[1\]\.vms: .*>=1/.test(p)), problems.join('\n'));
    assert.ok(problems.some((p) => /^hosts\[1\]\.accelerator: .*"auto"\|"kvm"\|"tcg"/.test(p)), problems.join('\n'));
    assert.ok(problems.some((p) => /^hosts\[1\]\.image: expected \"project\" or \{ disk, kernel, initrd \}/.test(p)), problems.join('\n'));
  });

  it('routes no task to the project image yet, and every task to ScienceBoard\'s image run by a qemu host', () => {
    const caps = deploymentCapabilities({
      hosts: [
        { id: 'own', kind: 'qemu', image: 'project' },
        { id: 'sci', kind: 'qemu', image: { disk: '/vms/sci.qcow2', kernel: '/k', initrd: '/i' } },
      ],
      localApps: [],
    });
    assert.deepEqual(caps.map((c) => [c.host, c.kind, c.apps]), [['own', 'qemu', PROJECT_VM.apps], ['sci', 'qemu', SCIENCEBOARD_VM.apps]]);
  });
});
