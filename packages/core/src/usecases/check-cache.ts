import type { Id, Owned } from '../model';
import { Lru } from '../support/lru';
import { reduceSnapshot, type CheckLicense } from '../domain/check';
import type { CacheInvalidation } from '../ports';

/** Entries the entitlement cache keeps unless configured otherwise (`CHECK_CACHE_ENTRIES`). */
export const DEFAULT_CHECK_CACHE_ENTRIES = 200_000;

export interface CacheStats {
  hits: number;
  misses: number;
  entries: number;
  /** Whether the caches are trusted (the instance hears every change). */
  live: boolean;
  /** Checks answered from memory while the database did not answer (the outage grace). */
  fromMemory: number;
}

type ProductOwnership = Owned & { archivedAt: Date | null };

/**
 * The cache policy of the capability check (DESIGN section 11), pure: an entitlement snapshot per
 * (product, grantee) (the grantee's licenses of the product that grant access; "no license" is
 * cached too), product ownership, and the capability names of plans. Entries are evicted by the
 * change feed; while the feed may have missed changes the cache is empty and bypassed.
 *
 * A load that raced an invalidation must not be kept: each load notes the epoch (the count of
 * invalidations heard) before reading, and its result is stored only if no invalidation came in
 * meanwhile. The check itself stays the pure function over the snapshot and `now`, so expiry and
 * grace need no invalidation.
 */
export class EntitlementCache {
  private readonly snapshots: Lru<string, readonly CheckLicense[]>;
  private readonly owners = new Lru<Id, ProductOwnership | null>(10_000);
  /** Capability names by plan, with the product the plan belongs to (its changes evict them). */
  private readonly planCaps = new Lru<Id, { productId: Id; names: string[] }>(10_000);
  private readonly planIds = new Map<Id, Id>();
  private readonly samePlanId = (id: Id): Id => {
    const kept = this.planIds.get(id);
    if (kept !== undefined) return kept;
    if (this.planIds.size >= 100_000) this.planIds.clear();
    this.planIds.set(id, id);
    return id;
  };
  private epoch = 0;
  private live = false;
  /** Since when (ms) the feed has not been heard, after having been: the start of the outage grace. */
  private untrustedSince: number | undefined;
  private hits = 0;
  private misses = 0;
  private fromMemory = 0;

  constructor(capacity = DEFAULT_CHECK_CACHE_ENTRIES) {
    this.snapshots = new Lru(capacity);
  }

  /** The count of invalidations heard so far: note it before a load, hand it to the store. */
  mark(): number {
    return this.epoch;
  }

  /** `stale`: read what is held even while untrusted (a check answered during a database outage). */
  snapshot(productId: Id, granteeId: string, stale = false): readonly CheckLicense[] | undefined {
    if (!this.live && !stale) return undefined;
    const s = this.snapshots.get(`${productId}|${granteeId}`);
    if (s) this.hits++;
    else this.misses++;
    return s;
  }

  /** Keeps the snapshots of a load, unless something was invalidated since `mark`. */
  storeSnapshots(mark: number, productId: Id, byGrantee: ReadonlyMap<string, CheckLicense[]>): void {
    if (!this.live || mark !== this.epoch) return;
    for (const [grantee, licenses] of byGrantee) {
      // Only what the check can tell apart is kept: per plan, the granting license that ends last
      // (a status change is itself an invalidation). Plan ids are shared between snapshots.
      this.snapshots.set(`${productId}|${grantee}`, reduceSnapshot(licenses, productId, grantee, this.samePlanId));
    }
  }

  owner(productId: Id, stale = false): ProductOwnership | null | undefined {
    return this.live || stale ? this.owners.get(productId) : undefined;
  }

  storeOwner(mark: number, productId: Id, owner: ProductOwnership | null): void {
    if (this.live && mark === this.epoch) this.owners.set(productId, owner);
  }

  capabilities(planId: Id, stale = false): string[] | undefined {
    return this.live || stale ? this.planCaps.get(planId)?.names : undefined;
  }

  storeCapabilities(mark: number, productId: Id, byPlan: ReadonlyMap<Id, string[]>, planIds: Iterable<Id>): void {
    if (!this.live || mark !== this.epoch) return;
    for (const id of planIds) this.planCaps.set(id, { productId, names: byPlan.get(id) ?? [] });
  }

  /** A change committed somewhere: drop what it names. */
  invalidate(change: CacheInvalidation): void {
    this.epoch++;
    if (change.kind === 'license') this.snapshots.delete(`${change.productId}|${change.granteeId}`);
    else if (change.kind === 'product') {
      this.owners.delete(change.productId);
      // Plans of the product may have changed their capabilities: their names go too (only
      // theirs: another product's write must not empty what a database outage would need).
      for (const [plan, caps] of [...this.planCaps.entries()]) if (caps.productId === change.productId) this.planCaps.delete(plan);
      const prefix = `${change.productId}|`;
      for (const key of [...this.snapshots.keys()]) if (key.startsWith(prefix)) this.snapshots.delete(key);
    }
  }

  /**
   * Changes may be missed (`live` false): bypass what is held, but keep it for the outage grace
   * (`staleAllowed`); listening again: empty, then fill. `nowMs` starts the grace.
   */
  setLive(live: boolean, nowMs: number): void {
    this.epoch++;
    if (live) {
      this.snapshots.clear();
      this.owners.clear();
      this.planCaps.clear();
      this.untrustedSince = undefined;
    } else if (this.live) this.untrustedSince = nowMs;
    this.live = live;
  }

  /**
   * Whether what is held may answer a check the database cannot: only within `graceMs` of the
   * moment the feed was last heard (what changed since may be missing), and never before it was.
   */
  staleAllowed(nowMs: number, graceMs: number): boolean {
    if (graceMs <= 0) return false;
    if (this.live) return true;
    return this.untrustedSince !== undefined && nowMs - this.untrustedSince <= graceMs;
  }

  /** Counts a check answered from memory during an outage (the metric). */
  countFromMemory(): void {
    this.fromMemory++;
  }

  stats(): CacheStats {
    return { hits: this.hits, misses: this.misses, entries: this.snapshots.size, live: this.live, fromMemory: this.fromMemory };
  }
}
