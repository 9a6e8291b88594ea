import assert from 'node:assert/strict';
import * as path from 'node:path';
import { loadConfig } from '../../config/load';
import { perturbedPlanFor, referencePlanFor } from '../../apps/policies';
import { deploymentCapabilities, probesOf, taskSupport } from '../../core/requirements';
import { defaultDrivers } from '../../activities/desktop/local/drivers';
import { probeLocalHost } from '../../activities/desktop/local/host-facts';
import type { LocalDesktop } from '../../activities/desktop/local/local-desktop';
import { closeTestDesktop, loadTasks, play, REPO, testDesktop } from '../support/desktop';
import { APPS } from '../../apps/index';

const CONFIG = loadConfig(path.join(REPO, 'temporal.yaml'));
const TASKS = loadTasks('TeXstudio');
/** The tasks this machine's local host can run, as derived from what the probe finds here; checked in the first test. */
const SUPPORTED = TASKS.filter((t) => ['B-01', 'C-02', 'C-06', 'D-01'].includes(t.id));

describe('TeXstudio reference policy on real TeXstudio', function () {
  this.timeout(90_000);
  let desktop: LocalDesktop;
  let dir: string;

  before(() => {
    ({ desktop, dir } = testDesktop('texstudio-reference', 455));
  });

  after(async function () {
    this.timeout(30_000);
    await closeTestDesktop(desktop, dir);
  });

  it('replays the 4 tasks local desktops support (probed: apps, programs, TeX files); the 8 others are unsupported, not run', async () => {
    const facts = await probeLocalHost(CONFIG.localApps, probesOf(APPS, TASKS), { drivers: Object.keys(defaultDrivers()) });
    const local = deploymentCapabilities(CONFIG, facts).filter((c) => c.kind === 'local');
    assert.deepEqual(
      TASKS.filter((t) => taskSupport(APPS, t, local).supported).map((t) => t.id),
      SUPPORTED.map((t) => t.id),
    );
  });

  for (const task of SUPPORTED) {
    it(`${task.id}: the reference plan passes every check, the perturbed plan fails`, async () => {
      for (const [name, plan, expected] of [
        ['reference', referencePlanFor(task, desktop.screen), true],
        ['perturbed', perturbedPlanFor(task, desktop.screen), false],
      ] as const) {
        assert.ok(plan.replayable, `${name}: ${plan.replayable ? '' : plan.reason}`);
        await desktop.reset(task);
        const stop = await play(desktop, plan.actions, CONFIG.rollouts.settleMs);
        const result = await desktop.evaluate(task, stop);
        assert.equal(result.checks.length, task.evaluate.length);
        assert.equal(result.passed, expected, `${name} plan: ${result.checks.map((c) => c.detail).join(' | ')}`);
      }
    });
  }
});
