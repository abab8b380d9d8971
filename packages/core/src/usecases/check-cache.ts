import type { Id, Owned } from '../model';
import { Lru } from '../support/lru';
import { reduceSnapshot, type CheckLicense } from '../domain/check';
import type { CacheInvalidation, CheckIndexRow } from '../ports';

/** Entries the entitlement cache keeps unless configured otherwise (`CHECK_CACHE_ENTRIES`). */
export const DEFAULT_CHECK_CACHE_ENTRIES = 200_000;

/** Licenses the check's index holds at most unless configured otherwise (`CHECK_INDEX_MAX_LICENSES`). */
export const DEFAULT_CHECK_INDEX_MAX_LICENSES = 1_000_000;

export interface CacheStats {
  hits: number;
  misses: number;
  /** Snapshots held: in the LRU, plus the grantees of the index. */
  entries: number;
  /** Licenses (reduced: one per grantee and plan) the index holds; 0 when there is none. */
  indexedLicenses: number;
  /** Whether the index of every granting license is in use (misses are then rare). */
  indexed: boolean;
  /** Whether the caches are trusted (the instance hears every change). */
  live: boolean;
  /** Checks answered from memory while the database did not answer (the outage grace). */
  fromMemory: number;
}

type ProductOwnership = Owned & { archivedAt: Date | null };

/**
 * Characters of `product|grantee` keys the snapshot LRU holds per entry of its capacity (at least
 * `SNAPSHOT_KEY_CHARS_MIN` in all): full of the usual ids (a UUID or an e-mail address, about 60 to
 * 75 with the product's id) it holds its capacity; full of the longest (`GRANTEE_ID_MAX_LENGTH`)
 * about a quarter of it, so its memory is bounded whatever the ids checked.
 */
export const SNAPSHOT_KEY_CHARS = 96;
const SNAPSHOT_KEY_CHARS_MIN = 1 << 16;

/**
 * An `Lru` (support/lru.ts: a recent and an older generation, the older dropped whole) bounded in
 * weight as well as in entries: each generation holds at most half of either, so the whole holds at
 * most `maxWeight`. An entry weighing more than half of it is not kept (`set` is false). `weigh`
 * must answer the same for an entry every time (it is asked again when the entry moves or goes).
 */
export class WeightedLru<K, V> {
  private recent = new Map<K, V>();
  private older = new Map<K, V>();
  private recentWeight = 0;
  private olderWeight = 0;
  private readonly half: number;
  private readonly halfWeight: number;

  constructor(
    readonly capacity: number,
    readonly maxWeight: number,
    private readonly weigh: (key: K, value: V) => number,
  ) {
    this.half = Math.max(1, Math.floor(capacity / 2));
    this.halfWeight = Math.max(1, Math.floor(maxWeight / 2));
  }

  get(key: K): V | undefined {
    const value = this.recent.get(key);
    if (value !== undefined) return value;
    const old = this.older.get(key);
    if (old === undefined) return undefined;
    this.older.delete(key);
    const w = this.weigh(key, old);
    this.olderWeight -= w;
    this.add(key, old, w);
    return old;
  }

  /** The value without marking it used. */
  peek(key: K): V | undefined {
    return this.recent.get(key) ?? this.older.get(key);
  }

  /** Keeps the entry; false (and nothing kept under the key) when it weighs more than half the bound. */
  set(key: K, value: V): boolean {
    const w = this.weigh(key, value);
    this.delete(key);
    if (w > this.halfWeight) return false;
    this.add(key, value, w);
    return true;
  }

  private add(key: K, value: V, w: number): void {
    if (this.recentWeight + w > this.halfWeight) this.retire();
    this.recent.set(key, value);
    this.recentWeight += w;
    if (this.recent.size >= this.half) this.retire();
  }

  private retire(): void {
    this.older = this.recent;
    this.olderWeight = this.recentWeight;
    this.recent = new Map();
    this.recentWeight = 0;
  }

  delete(key: K): boolean {
    const r = this.recent.get(key);
    if (r !== undefined || this.recent.has(key)) {
      this.recentWeight -= this.weigh(key, r as V);
      return this.recent.delete(key);
    }
    const o = this.older.get(key);
    if (o !== undefined || this.older.has(key)) {
      this.olderWeight -= this.weigh(key, o as V);
      return this.older.delete(key);
    }
    return false;
  }

  clear(): void {
    this.recent.clear();
    this.older.clear();
    this.recentWeight = 0;
    this.olderWeight = 0;
  }

  get size(): number {
    return this.recent.size + this.older.size;
  }

  /** The weight of what is held (at most `maxWeight`). */
  get weight(): number {
    return this.recentWeight + this.olderWeight;
  }

  /** Every entry, the older generation first (without marking any used). */
  *entries(): IterableIterator<[K, V]> {
    yield* this.older.entries();
    yield* this.recent.entries();
  }

  *keys(): IterableIterator<K> {
    yield* this.older.keys();
    yield* this.recent.keys();
  }
}

/** "No license": what the index answers for a grantee it holds nothing for (one object: kept answers compare by identity). */
const NONE: readonly CheckLicense[] = Object.freeze([]);

/** An index being filled: what it has read so far, and what changed meanwhile. */
interface Filling {
  generation: number;
  products: Map<Id, Map<string, CheckLicense[]>>;
  licenses: number;
  /** Invalidated while filling (`product|grantee`): read before or after the change, unknown. */
  dirty: Set<string>;
  dirtyProducts: Set<Id>;
  /** End times read so far, one Date object per instant (many licenses end at the same instant). */
  ends: Map<number, Date>;
}

/** Distinct end instants whose Date objects the index shares (bounded: a map of them lives while filling). */
const DISTINCT_ENDS_SHARED = 100_000;

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
  private readonly snapshots: WeightedLru<string, readonly CheckLicense[]>;
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
  /**
   * The first database-unavailable error heard while untrusted (ms), cleared when the database
   * answers again: what is held may have missed only what committed up to about this instant.
   */
  private unavailableSince: number | undefined;
  private hits = 0;
  private misses = 0;
  private fromMemory = 0;
  /**
   * The index (DESIGN section 11): every granting license of every product it holds, reduced per
   * grantee as a snapshot; a grantee it holds nothing for has no license, except the keys in
   * `unknown` (changed since it was read, not loaded again yet: misses). Products absent from it
   * (none of their licenses at fill time, or their plans changed since) use the LRU.
   */
  private index: Map<Id, Map<string, readonly CheckLicense[]>> | undefined;
  private readonly unknown = new Set<string>();
  private indexedLicenses = 0;
  private indexedGrantees = 0;
  private filling: Filling | undefined;
  private generation = 0;
  private readonly statuses = new Map<string, CheckLicense['status']>();

  /** `maxIndexLicenses`: the index is given up (the LRU answers) past this many reduced licenses; 0: no index. */
  constructor(
    capacity = DEFAULT_CHECK_CACHE_ENTRIES,
    readonly maxIndexLicenses = 0,
  ) {
    // Bounded in key characters too: every id checked (a grantee without a license as well) is a key.
    this.snapshots = new WeightedLru(capacity, Math.max(capacity * SNAPSHOT_KEY_CHARS, SNAPSHOT_KEY_CHARS_MIN), (key) => key.length);
  }

  /** The count of invalidations heard so far: note it before a load, hand it to the store. */
  mark(): number {
    return this.epoch;
  }

  /** `stale`: read what is held even while untrusted (a check answered during a database outage). */
  snapshot(productId: Id, granteeId: string, stale = false): readonly CheckLicense[] | undefined {
    if (!this.live && !stale) return undefined;
    const grantees = this.index?.get(productId);
    let s: readonly CheckLicense[] | undefined;
    if (grantees !== undefined) {
      // While untrusted (a database outage), only what the index holds answers: an absence is not held.
      if (this.unknown.size === 0 || !this.unknown.has(`${productId}|${granteeId}`))
        s = grantees.get(granteeId) ?? (this.live ? NONE : undefined);
    } else s = this.snapshots.get(`${productId}|${granteeId}`);
    if (s) this.hits++;
    else this.misses++;
    return s;
  }

  /** Whether the index answers for the product (and the cache is live). */
  indexes(productId: Id): boolean {
    return this.live && this.index?.has(productId) === true;
  }

  /** Keeps the snapshots of a load, unless something was invalidated since `mark`. */
  storeSnapshots(mark: number, productId: Id, byGrantee: ReadonlyMap<string, CheckLicense[]>): void {
    if (!this.live || mark !== this.epoch) return;
    const grantees = this.index?.get(productId);
    for (const [grantee, licenses] of byGrantee) {
      // Only what the check can tell apart is kept: per plan, the granting license that ends last
      // (a status change is itself an invalidation). Plan ids are shared between snapshots.
      const reduced = reduceSnapshot(licenses, productId, grantee, this.samePlanId);
      if (grantees === undefined) {
        this.snapshots.set(`${productId}|${grantee}`, reduced);
        continue;
      }
      this.unknown.delete(`${productId}|${grantee}`);
      this.forget(grantees, grantee);
      if (reduced.length > 0) {
        grantees.set(grantee, reduced);
        this.indexedGrantees++;
        this.indexedLicenses += reduced.length;
      }
    }
    if (this.indexedLicenses > this.maxIndexLicenses) this.dropIndex();
  }

  /** Removes a grantee's snapshot from the index's counts and map. */
  private forget(grantees: Map<string, readonly CheckLicense[]>, grantee: string): void {
    const held = grantees.get(grantee);
    if (held === undefined) return;
    grantees.delete(grantee);
    this.indexedGrantees--;
    this.indexedLicenses -= held.length;
  }

  private dropIndex(): void {
    this.index = undefined;
    this.unknown.clear();
    this.indexedLicenses = 0;
    this.indexedGrantees = 0;
  }

  /**
   * Starts filling the index (the change feed is heard): the rows read from now on, in one
   * consistent read begun after this call, are handed to `addToIndex`; changes heard meanwhile are
   * noted. Undefined when there is nothing to fill (no index configured, or not live).
   */
  beginIndex(): number | undefined {
    if (this.maxIndexLicenses <= 0 || !this.live) return undefined;
    const generation = ++this.generation;
    this.filling = { generation, products: new Map(), licenses: 0, dirty: new Set(), dirtyProducts: new Set(), ends: new Map() };
    return generation;
  }

  /** Adds rows of the read to the index being filled; false: stop reading (superseded, or past the bound). */
  addToIndex(generation: number, rows: readonly CheckIndexRow[]): boolean {
    const f = this.filling;
    if (f === undefined || f.generation !== generation) return false;
    for (const r of rows) {
      let grantees = f.products.get(r.productId);
      if (grantees === undefined) f.products.set(r.productId, (grantees = new Map()));
      const held = grantees.get(r.granteeId);
      const at = held === undefined ? -1 : held.findIndex((l) => l.planId === r.planId);
      // `endsLater` over milliseconds (no Date per row): no end beats any end.
      if (held !== undefined && at >= 0) {
        const keptEnd = held[at].endTime;
        if (!(keptEnd !== null && (r.endMs === null || r.endMs > keptEnd.getTime()))) continue;
      }
      // Shared, not copied per snapshot: plan ids, statuses and end times (never mutated), and the product id of the map.
      let status = this.statuses.get(r.status);
      if (status === undefined) this.statuses.set(r.status, (status = r.status));
      let endTime: Date | null = null;
      if (r.endMs !== null) {
        endTime = f.ends.get(r.endMs) ?? new Date(r.endMs);
        if (f.ends.size < DISTINCT_ENDS_SHARED) f.ends.set(r.endMs, endTime);
      }
      const kept: CheckLicense = { productId: r.productId, planId: this.samePlanId(r.planId), granteeId: r.granteeId, status, endTime };
      // Arrays of the exact length (a pushed-to array reserves room for 16 more).
      if (held === undefined) grantees.set(r.granteeId, [kept]);
      else if (at >= 0) held[at] = kept;
      else grantees.set(r.granteeId, [...held, kept]);
      if (at < 0 && ++f.licenses > this.maxIndexLicenses) {
        this.filling = undefined;
        return false;
      }
    }
    return true;
  }

  /** The read failed: forget what it read and what it noted. */
  abandonIndex(generation: number): void {
    if (this.filling?.generation === generation) this.filling = undefined;
  }

  /** The read is over: the index answers from now on, but for what changed while it was read. False when superseded or too big. */
  completeIndex(generation: number): boolean {
    const f = this.filling;
    if (f === undefined || f.generation !== generation || !this.live) return false;
    this.filling = undefined;
    for (const p of f.dirtyProducts) f.products.delete(p);
    this.dropIndex();
    for (const key of f.dirty) {
      const cut = key.indexOf('|');
      const grantees = f.products.get(key.slice(0, cut));
      if (grantees === undefined) continue;
      grantees.delete(key.slice(cut + 1));
      this.unknown.add(key);
    }
    for (const grantees of f.products.values()) {
      this.indexedGrantees += grantees.size;
      for (const held of grantees.values()) this.indexedLicenses += held.length;
    }
    this.index = f.products;
    // The index answers for its products: what the LRU holds of them is dead weight.
    for (const key of [...this.snapshots.keys()]) if (this.index.has(key.slice(0, key.indexOf('|')))) this.snapshots.delete(key);
    return true;
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
    if (change.kind === 'license') {
      const key = `${change.productId}|${change.granteeId}`;
      this.snapshots.delete(key);
      this.filling?.dirty.add(key);
      const grantees = this.index?.get(change.productId);
      if (grantees !== undefined) {
        this.forget(grantees, change.granteeId);
        this.unknown.add(key);
      }
    } else if (change.kind === 'product') {
      // Its plans or capabilities changed: the product leaves the index (the LRU answers for it).
      this.filling?.dirtyProducts.add(change.productId);
      const grantees = this.index?.get(change.productId);
      if (grantees !== undefined) {
        for (const g of [...grantees.keys()]) this.forget(grantees, g);
        this.index?.delete(change.productId);
        const prefix = `${change.productId}|`;
        for (const key of [...this.unknown]) if (key.startsWith(prefix)) this.unknown.delete(key);
      }
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
    // A fill under way may have missed changes (or is superseded by the next one).
    this.filling = undefined;
    this.generation++;
    if (live) {
      this.snapshots.clear();
      this.dropIndex();
      this.owners.clear();
      this.planCaps.clear();
      this.untrustedSince = undefined;
    } else if (this.live) this.untrustedSince = nowMs;
    this.unavailableSince = undefined;
    this.live = live;
  }

  /** The database answered: an outage that began before is over (the next error starts a new one). */
  databaseAnswered(): void {
    if (!this.live) this.unavailableSince = undefined;
  }

  /**
   * Called on a database-unavailable error: whether what is held may answer what the database
   * cannot. Only if the database became unavailable no more than `boundMs` after the feed was lost
   * (while the database still answered, changes committed that nothing here heard: a revoked
   * license must not be honoured from an older snapshot), within `graceMs` of that moment, and
   * never before the feed was heard.
   */
  staleAllowed(nowMs: number, graceMs: number, boundMs: number): boolean {
    if (graceMs <= 0) return false;
    if (this.live) return true;
    if (this.untrustedSince === undefined) return false;
    this.unavailableSince ??= nowMs;
    return this.unavailableSince - this.untrustedSince <= boundMs && nowMs - this.untrustedSince <= graceMs;
  }

  /** Counts a check answered from memory during an outage (the metric). */
  countFromMemory(): void {
    this.fromMemory++;
  }

  stats(): CacheStats {
    return {
      hits: this.hits,
      misses: this.misses,
      entries: this.snapshots.size + this.indexedGrantees,
      indexedLicenses: this.indexedLicenses,
      indexed: this.index !== undefined,
      live: this.live,
      fromMemory: this.fromMemory,
    };
  }
}
