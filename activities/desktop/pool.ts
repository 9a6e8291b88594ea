import type { Desktop } from './desktop';

/** What a rollout holds while it uses a desktop. Small: it travels through workflow history. */
export interface Lease {
  readonly leaseId: string;
  readonly hostId: string;
  /** The host's own task queue: every desktop activity of this lease goes there. */
  readonly hostQueue: string;
  readonly desktopId: string;
  readonly screen: { readonly width: number; readonly height: number };
  /** The software (a task's `type`) the desktop is leased to be reset for. */
  readonly software: string;
}

/** What a rollout asks the lease queue for: a desktop for one attempt, for one software. */
export interface LeaseRequest {
  /** The same request gets the same lease back (a retried lease activity takes no second desktop). */
  readonly requestId: string;
  readonly software: string;
}

/** The lease is not (or no longer) valid on this host: the host restarted, or the lease expired. */
export class LeaseLostError extends Error {
  constructor(leaseId: string, why: string) {
    super(`lease ${leaseId} is lost: ${why}`);
    this.name = 'LeaseLostError';
  }
}

/**
 * The host runs no app for the software. `elsewhere`: another host of the deployment does, and
 * the shared lease queue may hand it the retried request; otherwise no desktop can run the task.
 */
export class SoftwareNotServedError extends Error {
  constructor(
    hostId: string,
    software: string,
    served: readonly string[],
    readonly elsewhere: boolean,
  ) {
    super(
      elsewhere
        ? `host ${hostId} runs no ${software} desktops (it serves ${served.join(', ') || 'nothing'})`
        : `no host of the deployment runs ${software} desktops (host ${hostId} serves ${served.join(', ') || 'nothing'})`,
    );
    this.name = 'SoftwareNotServedError';
  }
}

/** Every desktop of the host is leased. */
export class NoFreeDesktopError extends Error {
  constructor(hostId: string, size: number) {
    super(`all ${size} desktops of host ${hostId} are leased`);
    this.name = 'NoFreeDesktopError';
  }
}

interface Slot {
  readonly index: number;
  desktop: Desktop;
  lease?: { readonly lease: Lease; readonly requestId: string; expiresAt: number };
}

export interface PoolOptions {
  readonly hostId: string;
  readonly hostQueue: string;
  readonly size: number;
  /** Builds desktop `index` (0-based); called again to replace a recycled one. */
  readonly createDesktop: (index: number) => Desktop;
  /** A lease not used for this long is taken back (its rollout is gone or stuck). */
  readonly leaseTtlMs: number;
  /** The software whose tasks the host's desktops run ('any': a ScienceBoard VM has every app). */
  readonly serves: readonly string[] | 'any';
  /** The software some host of the deployment runs (this one's included). */
  readonly deploymentServes: readonly string[] | 'any';
  readonly now?: () => number;
  /** Told of each lease taken back on expiry (the host's metrics count them). */
  readonly onExpired?: (lease: Lease) => void;
  /** Told how many desktops are leased whenever that changes (the host's metrics show it). */
  readonly onLeased?: (leased: number) => void;
}

/**
 * The desktops of one vm-host. Each is leased to one rollout at a time and released on
 * completion, on expiry, or when the host restarts (leases live in this process only, so a
 * restarted host knows none and rollouts holding one re-lease). Leasing is idempotent per
 * request id, so a retried lease activity never takes a second desktop. Every desktop of a host
 * runs any of the software the host serves: the lease says which one it will be reset for.
 */
export class DesktopPool {
  private readonly slots: Slot[];
  private readonly now: () => number;
  /** Distinguishes this process's leases from those of an earlier run of the same host. */
  private readonly incarnation: string;
  private counter = 0;

  constructor(private readonly opts: PoolOptions) {
    this.now = opts.now ?? Date.now;
    this.slots = Array.from({ length: opts.size }, (_, index) => ({ index, desktop: opts.createDesktop(index) }));
    this.incarnation = `${this.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
  }

  get hostId(): string {
    return this.opts.hostId;
  }

  get size(): number {
    return this.slots.length;
  }

  /** Leases a free desktop for the request (the same request id gets the same lease back). */
  lease({ requestId, software }: LeaseRequest): Lease {
    const { serves, deploymentServes } = this.opts;
    if (serves !== 'any' && !serves.includes(software)) {
      throw new SoftwareNotServedError(this.opts.hostId, software, serves, deploymentServes === 'any' || deploymentServes.includes(software));
    }
    this.expire();
    const held = this.slots.find((s) => s.lease?.requestId === requestId);
    if (held?.lease) {
      held.lease.expiresAt = this.now() + this.opts.leaseTtlMs;
      return held.lease.lease;
    }
    const free = this.slots.find((s) => s.lease === undefined);
    if (free === undefined) throw new NoFreeDesktopError(this.opts.hostId, this.slots.length);
    const lease: Lease = {
      leaseId: `${this.opts.hostId}/${free.index}/${this.incarnation}-${++this.counter}`,
      hostId: this.opts.hostId,
      hostQueue: this.opts.hostQueue,
      desktopId: free.desktop.id,
      screen: free.desktop.screen,
      software,
    };
    free.lease = { lease, requestId, expiresAt: this.now() + this.opts.leaseTtlMs };
    this.changed();
    return lease;
  }

  /** The desktop a lease holds, renewing the lease; throws LeaseLostError for an unknown or expired lease. */
  use(leaseId: string): Desktop {
    return this.held(leaseId).desktop;
  }

  /** The software a lease was granted for (see use()). */
  softwareOf(leaseId: string): string {
    return this.held(leaseId).lease.software;
  }

  private held(leaseId: string): { desktop: Desktop; lease: Lease } {
    this.expire();
    const slot = this.slots.find((s) => s.lease?.lease.leaseId === leaseId);
    if (slot?.lease === undefined) throw new LeaseLostError(leaseId, 'this host holds no such lease (host restarted or lease expired)');
    slot.lease.expiresAt = this.now() + this.opts.leaseTtlMs;
    return { desktop: slot.desktop, lease: slot.lease.lease };
  }

  /** Ends a lease; unknown leases are ignored (release is idempotent). */
  release(leaseId: string): boolean {
    const slot = this.slots.find((s) => s.lease?.lease.leaseId === leaseId);
    if (slot === undefined) return false;
    slot.lease = undefined;
    this.changed();
    return true;
  }

  /** Closes the desktop and puts a fresh one in its place (after a failed health check). */
  async recycle(desktopId: string): Promise<void> {
    const slot = this.slots.find((s) => s.desktop.id === desktopId);
    if (slot === undefined) return;
    const old = slot.desktop;
    slot.desktop = this.opts.createDesktop(slot.index);
    await old.close().catch(() => undefined);
  }

  /**
   * Health-checks the idle desktops and recycles those that fail. Returns the recycled ids. A
   * desktop leased while its check ran is left alone: its rollout holds it and resets it, and
   * recycling it then would close it under the rollout, whose reset would start apps on a desktop
   * that no slot holds any more, never closed.
   */
  async checkIdle(): Promise<string[]> {
    this.expire();
    const recycled: string[] = [];
    for (const slot of this.slots) {
      if (slot.lease !== undefined) continue;
      const checked = slot.desktop;
      const ok = await checked.healthy().catch(() => false);
      if (!ok && slot.lease === undefined && slot.desktop === checked) {
        recycled.push(checked.id);
        await this.recycle(checked.id);
      }
    }
    return recycled;
  }

  leased(): number {
    this.expire();
    return this.count();
  }

  private count(): number {
    return this.slots.filter((s) => s.lease !== undefined).length;
  }

  private changed(): void {
    this.opts.onLeased?.(this.count());
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.desktop.close().catch(() => undefined)));
  }

  private expire(): void {
    const now = this.now();
    for (const slot of this.slots) {
      if (slot.lease === undefined || slot.lease.expiresAt > now) continue;
      this.opts.onExpired?.(slot.lease.lease);
      slot.lease = undefined;
      this.changed();
    }
  }
}
