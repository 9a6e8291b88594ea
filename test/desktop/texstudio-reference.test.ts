import assert from 'node:assert/strict';
import * as path from 'node:path';
import { loadConfig } from '../../config/load';
import { perturbedPlanFor, referencePlanFor } from '../../core/policies';
import { deploymentCapabilities, taskSupport } from '../../core/requirements';
import type { LocalDesktop } from '../../activities/desktop/local/local-desktop';
import { closeTestDesktop, loadTasks, play, REPO, testDesktop } from './helpers';

const CONFIG = loadConfig(path.join(REPO, 'temporal.yaml'));
/** What the repository's local host offers (its localApps, no network, no VM snapshot). */
const LOCAL = deploymentCapabilities(CONFIG).filter((c) => CONFIG.hosts.some((h) => h.id === c.host && h.kind === 'local'));
const TASKS = loadTasks('TeXstudio');
const SUPPORTED = TASKS.filter((t) => taskSupport(t, LOCAL).supported);

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

  it('replays the 4 tasks local desktops support; the 8 others are unsupported, not run', () => {
    assert.deepEqual(
      SUPPORTED.map((t) => t.id),
      ['B-01', 'C-02', 'C-06', 'D-01'],
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
