import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../../config/load';
import type { LocalHostConfig } from '../../config/schema';
import { DesktopPool } from '../../activities/desktop/pool';
import { createLocalDesktop, type LocalDesktop } from '../../activities/desktop/local/local-desktop';
import { processesOf } from '../../io/process';
import { freeDisplay } from '../../infra/ephemeral';
import { kalgebraTask, pngSize, processOf, REPO, untilGone } from '../support/desktop';

describe('desktop pool on a real KAlgebra desktop', function () {
  this.timeout(120_000);

  it('keeps a healthy idle desktop, recycles one whose X server died, and the fresh one resets and works', async () => {
    const config = loadConfig(path.join(REPO, 'temporal.yaml'));
    const local = config.hosts.find((h): h is LocalHostConfig => h.kind === 'local');
    assert.ok(local);
    const host: LocalHostConfig = { ...local, id: 'pool-test', desktops: 1, displayBase: freeDisplay(190) };
    const dir = mkdtempSync(path.join(tmpdir(), 'coda-pool-test-'));
    const built: LocalDesktop[] = [];
    const pool = new DesktopPool({
      hostId: host.id,
      hostQueue: 'pool-test-queue',
      size: 1,
      leaseTtlMs: 60_000,
      serves: ['KAlgebra', 'TeXstudio'],
      deploymentServes: ['KAlgebra', 'TeXstudio'],
      createDesktop: (index) => {
        const desktop = createLocalDesktop(host, config.localApps, index, { dir });
        built.push(desktop);
        return desktop;
      },
    });
    try {
      const first = pool.lease({ requestId: 'rollout-a#0', software: 'KAlgebra' });
      await pool.use(first.leaseId).reset(kalgebraTask('A-01'));
      pool.release(first.leaseId);
      assert.deepEqual(await pool.checkIdle(), [], 'a healthy idle desktop stays');

      const xvfb = processOf('pool-test/0', /Xvfb$/);
      process.kill(xvfb.pid, 'SIGKILL');
      await untilGone(xvfb.pid);
      assert.deepEqual(await pool.checkIdle(), ['pool-test/0']);
      assert.equal(built.length, 2, 'a fresh desktop took the slot');
      assert.deepEqual(processesOf('pool-test/0'), [], 'the recycled desktop left no process behind');

      const second = pool.lease({ requestId: 'rollout-b#0', software: 'KAlgebra' });
      const fresh = pool.use(second.leaseId);
      assert.equal(fresh, built[1]);
      await fresh.reset(kalgebraTask('A-01'));
      assert.deepEqual(pngSize(await fresh.screenshot()), { width: 1920, height: 1080 });
      assert.equal(await fresh.healthy(), true);
    } finally {
      await pool.closeAll();
      rmSync(dir, { recursive: true, force: true });
    }
    assert.deepEqual(processesOf('pool-test/0'), []);
  });
});
