import assert from 'node:assert/strict';
import type { Desktop } from '../../../activities/desktop/desktop';
import { DesktopPool, LeaseLostError, NoFreeDesktopError, SoftwareNotServedError } from '../../../activities/desktop/pool';

/**
 * TEST DOUBLE of a desktop. The pool's bookkeeping (leases, expiry, incarnations) is what is under
 * test here, on a clock the test moves; these desktops only record what the pool does to them.
 * test/desktop/desktop-pool.test.ts runs the pool's health check and recycling on a real desktop.
 */
class RecordingDesktop implements Desktop {
  readonly screen = { width: 1920, height: 1080 };
  healthyAnswer = true;
  closed = 0;
  constructor(readonly id: string) {}
  async reset(): Promise<void> {}
  async screenshot(): Promise<Buffer> {
    return Buffer.alloc(0);
  }
  async act(): Promise<void> {}
  async pointer() {
    return { x: 0, y: 0 };
  }
  async evaluate() {
    return { passed: true, checks: [] };
  }
  async healthy(): Promise<boolean> {
    return this.healthyAnswer;
  }
  async close(): Promise<void> {
    this.closed++;
  }
}

describe('desktop pool of a vm-host', () => {
  let now = 0;
  let built: RecordingDesktop[];
  let expired: string[];
  const pool = (size = 2) => {
    built = [];
    expired = [];
    return new DesktopPool({
      hostId: 'h1',
      hostQueue: 'coda-vm-h1',
      size,
      leaseTtlMs: 60_000,
      serves: ['KAlgebra', 'TeXstudio'],
      deploymentServes: ['KAlgebra', 'TeXstudio', 'Celestia'],
      now: () => now,
      onExpired: (lease) => expired.push(lease.leaseId),
      createDesktop: (i) => {
        const d = new RecordingDesktop(`h1/${i}`);
        built.push(d);
        return d;
      },
    });
  };

  it('leases each desktop to one rollout at a time and names the host queue', () => {
    const p = pool();
    const a = p.lease({ requestId: 'rollout-a#0', software: 'KAlgebra' });
    const b = p.lease({ requestId: 'rollout-b#0', software: 'KAlgebra' });
    assert.deepEqual([a.desktopId, b.desktopId], ['h1/0', 'h1/1']);
    assert.equal(a.hostQueue, 'coda-vm-h1');
    assert.notEqual(a.leaseId, b.leaseId);
    assert.throws(() => p.lease({ requestId: 'rollout-c#0', software: 'KAlgebra' }), NoFreeDesktopError);
    assert.equal(p.leased(), 2);
  });

  it('leases any desktop for any software the host serves, says which in the lease, and refuses the rest', () => {
    const p = pool();
    const kalgebra = p.lease({ requestId: 'rollout-a#0', software: 'KAlgebra' });
    const texstudio = p.lease({ requestId: 'rollout-b#0', software: 'TeXstudio' });
    assert.deepEqual([kalgebra.software, texstudio.software], ['KAlgebra', 'TeXstudio']);
    assert.deepEqual([p.softwareOf(kalgebra.leaseId), p.softwareOf(texstudio.leaseId)], ['KAlgebra', 'TeXstudio']);
    p.release(kalgebra.leaseId);
    // Another host of the deployment runs Celestia: the request may go there. None runs ChimeraX.
    assert.throws(
      () => p.lease({ requestId: 'rollout-c#0', software: 'Celestia' }),
      (err: unknown) => err instanceof SoftwareNotServedError && err.elsewhere && err.message === 'host h1 runs no Celestia desktops (it serves KAlgebra, TeXstudio)',
    );
    assert.throws(
      () => p.lease({ requestId: 'rollout-c#0', software: 'ChimeraX' }),
      (err: unknown) => err instanceof SoftwareNotServedError && !err.elsewhere && err.message === 'no host of the deployment runs ChimeraX desktops (host h1 serves KAlgebra, TeXstudio)',
    );
    assert.equal(p.leased(), 1, 'a refused request takes no desktop');
    const vms = new DesktopPool({ hostId: 'rack', hostQueue: 'q', size: 1, leaseTtlMs: 1, serves: 'any', deploymentServes: 'any', createDesktop: (i) => new RecordingDesktop(`rack/${i}`) });
    assert.equal(vms.lease({ requestId: 'r#0', software: 'ChimeraX' }).software, 'ChimeraX');
  });

  it('gives a retried lease request the same lease, never a second desktop', () => {
    const p = pool();
    assert.deepEqual(p.lease({ requestId: 'rollout-a#0', software: 'KAlgebra' }), p.lease({ requestId: 'rollout-a#0', software: 'KAlgebra' }));
    assert.equal(p.leased(), 1);
  });

  it('frees a desktop on release (idempotently) and refuses a released lease', () => {
    const p = pool(1);
    const a = p.lease({ requestId: 'rollout-a#0', software: 'KAlgebra' });
    assert.equal(p.use(a.leaseId).id, 'h1/0');
    assert.equal(p.release(a.leaseId), true);
    assert.equal(p.release(a.leaseId), false);
    assert.throws(() => p.use(a.leaseId), LeaseLostError);
    assert.equal(p.lease({ requestId: 'rollout-b#0', software: 'KAlgebra' }).desktopId, 'h1/0');
  });

  it('takes back a lease unused for its time to live, telling whoever counts expiries; use renews it', () => {
    now = 0;
    const p = pool(1);
    const a = p.lease({ requestId: 'rollout-a#0', software: 'KAlgebra' });
    now = 50_000;
    p.use(a.leaseId);
    now = 100_000;
    assert.equal(p.use(a.leaseId).id, 'h1/0', 'renewed at 50 s, so alive at 100 s');
    assert.deepEqual(expired, []);
    now = 200_000;
    assert.throws(() => p.use(a.leaseId), LeaseLostError);
    assert.deepEqual(expired, [a.leaseId]);
    assert.equal(p.lease({ requestId: 'rollout-b#0', software: 'KAlgebra' }).desktopId, 'h1/0');
  });

  it('knows no lease of another incarnation of the host (a restarted vm-host)', () => {
    const before = pool(1).lease({ requestId: 'rollout-a#0', software: 'KAlgebra' });
    assert.throws(() => pool(1).use(before.leaseId), LeaseLostError);
  });

  it('recycles an idle desktop that fails its health check, and leaves leased ones alone', async () => {
    const p = pool(2);
    const leased = p.lease({ requestId: 'rollout-a#0', software: 'KAlgebra' });
    built[0]!.healthyAnswer = false;
    built[1]!.healthyAnswer = false;
    assert.deepEqual(await p.checkIdle(), ['h1/1']);
    assert.equal(built[1]!.closed, 1);
    assert.equal(built.length, 3, 'a fresh desktop took its place');
    assert.equal(p.use(leased.leaseId), built[0]);
    await p.closeAll();
    assert.equal(built[0]!.closed, 1);
  });

  it('leaves alone a desktop leased while its health check runs, even when the check fails', async () => {
    const p = pool(1);
    let answer: (healthy: boolean) => void = () => undefined;
    built[0]!.healthy = () => new Promise<boolean>((resolve) => (answer = resolve));
    const checking = p.checkIdle();
    const leased = p.lease({ requestId: 'rollout-a#0', software: 'KAlgebra' });
    answer(false);
    assert.deepEqual(await checking, [], 'nothing recycled');
    assert.equal(built[0]!.closed, 0, 'the leased desktop was not closed under its rollout');
    assert.equal(built.length, 1, 'no desktop took its place');
    assert.equal(p.use(leased.leaseId), built[0]);
  });
});
