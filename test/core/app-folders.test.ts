import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { APPS } from '../../apps/index';
import { VM_APPS } from '../../apps/vm-apps';
import { POLICY_SOFTWARE } from '../../apps/policies';
import { writesTasksFor } from '../../doubles/scripted-models/generated-tasks';

/**
 * One folder per application (docs/adding-an-application.md): every app of the registry has its
 * folder with the same files, its module (index.ts) is the registry's line, and the tables that
 * dispatch by software (reference policies, generator seeds, VM clients) know exactly the
 * registry's apps.
 */

const APPS_DIR = path.resolve(__dirname, '../../../apps');
const slugOf = (software: string): string => software.toLowerCase();

describe('application folders', () => {
  it('has one folder per registered app and no folder the registry does not list', () => {
    const folders = readdirSync(APPS_DIR, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
    assert.deepEqual(folders, APPS.map((a) => slugOf(a.software)).sort());
  });

  it('gives every app its module, schema, reference policy and seeds, and every VM app its client and double', () => {
    const missing: string[] = [];
    for (const app of APPS) {
      const files = ['index.ts', 'schema.ts', 'reference.ts', 'seeds.ts', 'vm.ts', ...(Object.hasOwn(VM_APPS, app.software) ? ['double.ts'] : [])];
      for (const file of files) if (!existsSync(path.join(APPS_DIR, slugOf(app.software), file))) missing.push(`${slugOf(app.software)}/${file}`);
    }
    // TeXstudio on a VM is the stock app read through the VM server's own routes: it has no client of its own.
    assert.deepEqual(missing, ['texstudio/vm.ts']);
  });

  it('dispatches policies, seeds and VM clients to registered apps only', () => {
    const registered: string[] = APPS.map((a) => a.software);
    assert.deepEqual([...POLICY_SOFTWARE].sort(), [...registered].sort());
    for (const software of registered) assert.ok(writesTasksFor(software), `no seeds for ${software}`);
    assert.equal(writesTasksFor('Frobnicator'), false);
    for (const software of Object.keys(VM_APPS)) assert.ok(registered.includes(software), `${software} has a VM client but no registry line`);
    for (const [software, vm] of Object.entries(VM_APPS)) assert.equal(vm.software, software, 'a VM client serves the app whose module holds it');
  });
});
