import { DomainError, ErrorCodes, fail, invalid, isDomainError } from '../errors';
import type { Id, License, Tenant } from '../model';
import { assertAccessible } from '../domain/tenancy';
import { capabilityCheck, type CapabilityCheck, type CheckLicense } from '../domain/check';
import { LICENSE_STATUSES, LICENSE_STATUS_VALUES } from '../domain/status';
import { EntitlementCache, WeightedLru } from './check-cache';
import { CHECK_GRANTEES_MAX, GRANTEE_ID_MAX_LENGTH } from '../domain/limits';
import type { SignedMessage, Signer } from '../ports';
import { limitsOf, type CoreDeps } from './deps';

/** A capability check, parsed at the edge. */
export interface CheckRequest {
  productId: Id;
  /** Distinct grantee ids, at least one. */
  granteeIds: string[];
  /** Days added to every end (0: none). */
  graceDays: number;
  encoding: 'der' | 'p1363';
}

export type SignedCheck = CapabilityCheck & SignedMessage;

/** A check answer kept for the same question while what it was computed from is unchanged. */
interface KeptAnswer {
  /** The snapshot objects it was computed from, one per grantee (compared by identity). */
  snapshots: readonly (readonly CheckLicense[])[];
  /** The signing key it was signed under (compared by identity), or null for no answer. */
  key: object | undefined | null;
  /** Until when (ms): the earliest capability end; after it a capability lapses. */
  validUntil: number;
  answer: SignedCheck | null;
  /** What it weighs in the kept answers' bound (`answerWeight`). */
  weight: number;
}

/** Bits of the admission filter of kept answers, and first sightings before it is cleared. */
const ADMISSION_SLOTS = 1 << 16;
const ADMISSION_WINDOW = 1 << 12;

/** Grantees one batched load asks for at most (more start another query). */
const LOAD_BATCH = 500;

interface LoadedLicenses {
  /** The cache's mark taken just before the read. */
  mark: number;
  licenses: License[];
}

interface PendingLoad {
  grantees: Set<string>;
  done: Promise<LoadedLicenses>;
}

/** Rows per batch of the index's streaming read. */
const INDEX_BATCH = 10_000;

/** Answers kept at most (the hot set of questions; the snapshots hold the rest). */
export const KEPT_ANSWERS = 2_000;

/**
 * The heaviest answer kept (`answerWeight`, about characters): an answer holds its question, its
 * capabilities' names (twice: with their end dates) and, once served, its rendered body, so one
 * naming long ids or long capability names is not kept (it is computed again when asked).
 */
export const KEPT_ANSWER_MAX_WEIGHT = 16_384;

/** The kept answers' weight in all (about characters): the usual answer weighs a few hundred, so 2 000 of them fit. */
export const KEPT_ANSWERS_MAX_WEIGHT = 4_194_304;

/** Per capability, for its end date and its place in the answer's lists and rendering. */
const CAPABILITY_WEIGHT = 32;

/**
 * What a kept answer weighs: its question's characters (the grantee ids) and its capabilities'
 * names, each with `CAPABILITY_WEIGHT`. Counted once, when it is kept (a sum over the names).
 */
function answerWeight(question: string, answer: SignedCheck | null): number {
  let weight = question.length;
  if (answer !== null) for (const name of answer.capabilities) weight += name.length + CAPABILITY_WEIGHT;
  return weight;
}

/** The capability check: "what may these grantees do?", signed, answered from memory once warm. */
export class CapabilityChecks {
  /**
   * Answers to repeated questions (same product, grantees, grace, encoding): reused while every
   * snapshot they came from is the very object the cache holds (an invalidation replaces it), the
   * signing key is the same object, and no capability has ended since. The same answer object comes
   * back, so the edge can keep its rendering too.
   */
  private readonly answers = new WeightedLru<string, KeptAnswer>(KEPT_ANSWERS, KEPT_ANSWERS_MAX_WEIGHT, (_, kept) => kept.weight);

  /** Keeps an answer unless it weighs more than `KEPT_ANSWER_MAX_WEIGHT` (then one kept for the question goes). */
  private keep(
    question: string,
    snapshots: KeptAnswer['snapshots'],
    key: KeptAnswer['key'],
    validUntil: number,
    answer: SignedCheck | null,
  ): void {
    const weight = answerWeight(question, answer);
    if (weight > KEPT_ANSWER_MAX_WEIGHT) this.answers.delete(question);
    else this.answers.set(question, { snapshots, key, validUntil, answer, weight });
  }

  constructor(
    private readonly deps: Pick<CoreDeps, 'uow' | 'readUow' | 'clock' | 'limits'>,
    private readonly signer: Signer,
    /** Per-instance entitlement snapshots (never live without a change feed). */
    readonly cache: EntitlementCache = new EntitlementCache(),
  ) {}

  /**
   * Fills the entitlement cache's index (DESIGN section 11): one streaming read of every granting
   * license, in batches, in one unit of work (one snapshot) begun after the fill is marked, so a
   * change committed meanwhile is either read or heard. Nothing when no index is configured.
   */
  async fillIndex(): Promise<void> {
    const generation = this.cache.beginIndex();
    if (generation === undefined) return;
    const granting = LICENSE_STATUS_VALUES.filter((s) => LICENSE_STATUSES[s].grantsAccess);
    const reads = this.deps.readUow ?? this.deps.uow;
    try {
      await reads.run((r) => r.licenses.scanForCheck(granting, INDEX_BATCH, (rows) => this.cache.addToIndex(generation, rows)));
    } catch (e) {
      // No index (the LRU answers) until the next resume fills one.
      this.cache.abandonIndex(generation);
      throw e;
    }
    this.cache.completeIndex(generation);
  }

  /** Which questions were asked lately (a bit per hash of the question, cleared every `ADMISSION_WINDOW` first sightings). */
  private readonly asked = new Uint8Array(ADMISSION_SLOTS);
  private sightings = 0;

  /**
   * Whether an answer is worth keeping: until the kept answers first fill, always; then only for a
   * question asked before lately. Long-tailed traffic asks most questions once: keeping each would
   * evict a kept one per check, and every evicted answer is garbage the old generation must collect.
   */
  private admit(question: string): boolean {
    if (this.answers.size < KEPT_ANSWERS / 2) return true;
    let h = 0x811c9dc5;
    for (let i = 0; i < question.length; i++) h = Math.imul(h ^ question.charCodeAt(i), 0x01000193);
    const slot = (h >>> 0) % ADMISSION_SLOTS;
    if (this.asked[slot] === 1) return true;
    this.asked[slot] = 1;
    if (++this.sightings >= ADMISSION_WINDOW) {
      this.asked.fill(0);
      this.sightings = 0;
    }
    return false;
  }

  /**
   * The licenses of these grantees of the product, loaded together with every other load asked
   * for in the same turn of the event loop (one query per tenant and product: concurrent misses
   * share it), kept in the cache unless something changed while they were read.
   */
  private async loadSnapshots(tenant: Tenant, productId: Id, grantees: readonly string[]): Promise<Map<string, CheckLicense[]>> {
    const { mark, licenses } = await this.batchedLoad(tenant, productId, grantees);
    const byGrantee = new Map<string, CheckLicense[]>(grantees.map((g) => [g, []]));
    for (const l of licenses) if (l.granteeId !== null) byGrantee.get(l.granteeId)?.push(l);
    this.cache.storeSnapshots(mark, productId, byGrantee);
    return byGrantee;
  }

  private readonly pending = new Map<string, PendingLoad>();

  private batchedLoad(tenant: Tenant, productId: Id, grantees: readonly string[]): Promise<LoadedLicenses> {
    const key = `${tenant.organisationId}|${tenant.isTest}|${productId}`;
    let batch = this.pending.get(key);
    if (batch === undefined || batch.grantees.size + grantees.length > LOAD_BATCH) {
      const started: PendingLoad = { grantees: new Set(), done: undefined as unknown as Promise<LoadedLicenses> };
      // Dispatched after the poll phase (setImmediate): every request read in this turn has asked by then.
      started.done = new Promise<LoadedLicenses>((resolve, reject) =>
        setImmediate(() => {
          if (this.pending.get(key) === started) this.pending.delete(key);
          const mark = this.cache.mark();
          const reads = this.deps.readUow ?? this.deps.uow;
          reads
            .read((r) => r.licenses.findForCheck(tenant, productId, [...started.grantees]))
            .then((licenses) => resolve({ mark, licenses }), reject);
        }),
      );
      this.pending.set(key, started);
      batch = started;
    }
    for (const g of grantees) batch.grantees.add(g);
    return batch.done;
  }

  /**
   * Feed reloads under way, per product and grantee: a check missing that grantee awaits it rather
   * than reading on its own (the reload began after the notification was heard, so it is as fresh).
   */
  private readonly refreshing = new Map<string, Promise<Map<string, CheckLicense[]>>>();

  /** The feed reloads gathered in this microtask, per tenant and product (one query each). */
  private refreshBatch: Map<string, { tenant: Tenant; productId: Id; grantees: Set<string> }> | undefined;

  /**
   * A license of the grantee changed (the change feed): when the index holds the product, its
   * snapshot is loaded again at once, so the next check finds it in memory. The read is started
   * before the event loop turns again (the notifications of one message share a query), not
   * queued behind the turn's requests, and from the primary (a replica may not have the change
   * yet). A load that raced another change is not kept (the next check loads it).
   */
  refresh(productId: Id, granteeId: string): void {
    if (!this.cache.indexes(productId)) return;
    const owner = this.cache.owner(productId);
    if (!owner) return;
    const key = `${owner.organisationId}|${owner.isTest}|${productId}`;
    if (this.refreshBatch === undefined) {
      const batches = new Map<string, { tenant: Tenant; productId: Id; grantees: Set<string> }>();
      this.refreshBatch = batches;
      queueMicrotask(() => {
        this.refreshBatch = undefined;
        for (const b of batches.values()) this.startRefresh(b.tenant, b.productId, [...b.grantees]);
      });
    }
    let batch = this.refreshBatch.get(key);
    if (batch === undefined) {
      batch = { tenant: { organisationId: owner.organisationId, isTest: owner.isTest }, productId, grantees: new Set() };
      this.refreshBatch.set(key, batch);
    }
    batch.grantees.add(granteeId);
  }

  private startRefresh(tenant: Tenant, productId: Id, grantees: string[]): void {
    for (let i = 0; i < grantees.length; i += LOAD_BATCH) {
      const some = grantees.slice(i, i + LOAD_BATCH);
      const mark = this.cache.mark();
      const loaded = this.deps.uow
        .read((r) => r.licenses.findForCheck(tenant, productId, some))
        .then((licenses) => {
          const byGrantee = new Map<string, CheckLicense[]>(some.map((g) => [g, []]));
          for (const l of licenses) if (l.granteeId !== null) byGrantee.get(l.granteeId)?.push(l);
          this.cache.storeSnapshots(mark, productId, byGrantee);
          return byGrantee;
        });
      const keys = some.map((g) => `${productId}|${g}`);
      for (const k of keys) this.refreshing.set(k, loaded);
      const done = () => {
        for (const k of keys) if (this.refreshing.get(k) === loaded) this.refreshing.delete(k);
      };
      loaded.then(done, done);
    }
  }

  /** The snapshots of these grantees: from the feed reloads under way, the rest read together with this turn's misses. */
  private async loadMissing(tenant: Tenant, productId: Id, missing: readonly string[]): Promise<CheckLicense[]> {
    const joined = new Map<Promise<Map<string, CheckLicense[]>>, string[]>();
    const rest: string[] = [];
    for (const g of missing) {
      const p = this.refreshing.get(`${productId}|${g}`);
      if (p === undefined) rest.push(g);
      else joined.set(p, [...(joined.get(p) ?? []), g]);
    }
    const loads: Promise<{ byGrantee: Map<string, CheckLicense[]>; grantees: readonly string[] }>[] = [...joined].map(([p, gs]) =>
      p.then((byGrantee) => ({ byGrantee, grantees: gs })),
    );
    if (rest.length) loads.push(this.loadSnapshots(tenant, productId, rest).then((byGrantee) => ({ byGrantee, grantees: rest })));
    const found = new Map<string, CheckLicense[]>();
    for (const { byGrantee, grantees } of await Promise.all(loads)) for (const g of grantees) found.set(g, byGrantee.get(g) ?? []);
    // In the order asked (as one load would have answered).
    return missing.flatMap((g) => found.get(g) ?? []);
  }

  /**
   * The signed capability check; null when the grantees have no capability. Answered from the
   * entitlement cache when it is live (misses load only what is missing, in one round of reads,
   * from the read replica when there is one); the check is the pure function over the snapshots.
   */
  async check(tenant: Tenant, req: CheckRequest, answered: { fromMemory?: () => void } = {}): Promise<SignedCheck | null> {
    // Never inside an idempotent request's transaction (JoinedUnitOfWork): its reads would join it,
    // and what they found (licenses, owners, capability names, a signing key made on first use) is
    // cached and batched for every other request, uncommitted and perhaps rolled back. Reading
    // outside it instead would wait forever for the one connection of the embedded database.
    if (this.deps.uow.joined?.())
      throw new Error("a capability check cannot run inside an idempotent request's transaction: check before or after it");
    try {
      const answer = await this.answer(tenant, req, false);
      this.cache.databaseAnswered();
      return answer;
    } catch (e) {
      // The database does not answer: within the outage grace, what this instance holds answers
      // (docs/reliability.md, "Database outage"); anything it does not hold keeps the outage error.
      const { checkOutageGraceMs, changeFeedBoundMs } = limitsOf(this.deps);
      if (!isDomainError(e) || e.code !== ErrorCodes.DATABASE_UNAVAILABLE) throw e;
      if (!this.cache.staleAllowed(this.deps.clock.now().getTime(), checkOutageGraceMs, changeFeedBoundMs)) throw e;
      const result = await this.answer(tenant, req, e);
      this.cache.countFromMemory();
      answered.fromMemory?.();
      return result;
    }
  }

  /** The check, from the cache and the database; `outage`: from memory only, failing with it on anything not held. */
  private async answer(tenant: Tenant, req: CheckRequest, outage: DomainError | false): Promise<SignedCheck | null> {
    const stale = outage !== false;
    const { productId, granteeIds, graceDays } = req;
    if (granteeIds.length === 0) invalid('granteeIds', 'names no grantee');
    // What the edge refuses too (parseGranteeIds): every id asked is kept in memory, as a key.
    if (granteeIds.length > CHECK_GRANTEES_MAX) invalid('granteeIds', `names more than ${CHECK_GRANTEES_MAX} grantees`);
    for (const g of granteeIds)
      if (g.length > GRANTEE_ID_MAX_LENGTH) invalid('granteeIds', `names a grantee id longer than ${GRANTEE_ID_MAX_LENGTH} characters`);
    if (!Number.isSafeInteger(graceDays) || graceDays < 0)
      fail(ErrorCodes.CHECK_GRACE_INVALID, 'grace must be a whole number of days greater than 0');
    const now = this.deps.clock.now();
    const cache = this.cache;
    const reads = this.deps.readUow ?? this.deps.uow;

    let owner = cache.owner(productId, stale);
    if (owner === undefined) {
      if (outage) throw outage;
      const mark = cache.mark();
      owner = (await reads.read((r) => r.products.getOwnership(productId))) ?? null;
      cache.storeOwner(mark, productId, owner);
    }
    const product = assertAccessible(owner, tenant, 'product');

    const licenses: CheckLicense[] = [];
    const missing: string[] = [];
    const snapshots: (readonly CheckLicense[])[] = [];
    for (const g of granteeIds) {
      const snapshot = cache.snapshot(product.id, g, stale);
      if (snapshot) {
        snapshots.push(snapshot);
        licenses.push(...snapshot);
      } else missing.push(g);
    }
    // Every snapshot came from memory: the same question may have its answer kept.
    const question = missing.length === 0 ? `${product.id}|${graceDays}|${req.encoding}|${granteeIds.join('\n')}` : undefined;
    if (question !== undefined) {
      const kept = this.answers.get(question);
      if (
        kept &&
        kept.validUntil > now.getTime() &&
        // Element by element and as many: ids are joined by a newline, which an id may hold itself.
        kept.snapshots.length === snapshots.length &&
        kept.snapshots.every((s, i) => s === snapshots[i]) &&
        (kept.answer === null || kept.key === this.signer.heldKey?.(tenant))
      )
        return kept.answer;
    }
    if (missing.length) {
      if (outage) throw outage;
      licenses.push(...(await this.loadMissing(tenant, product.id, missing)));
    }
    if (licenses.length === 0) return null;

    const capabilitiesByPlan = new Map<Id, string[]>();
    const unknownPlans: Id[] = [];
    for (const { planId } of licenses) {
      if (capabilitiesByPlan.has(planId) || unknownPlans.includes(planId)) continue;
      const caps = cache.capabilities(planId, stale);
      if (caps) capabilitiesByPlan.set(planId, caps);
      else unknownPlans.push(planId);
    }
    if (unknownPlans.length) {
      if (outage) throw outage;
      const mark = cache.mark();
      const names = await reads.read((r) => r.plans.capabilityNames(unknownPlans));
      cache.storeCapabilities(mark, product.id, names, unknownPlans);
      for (const id of unknownPlans) capabilitiesByPlan.set(id, names.get(id) ?? []);
    }
    const result = capabilityCheck({ licenses, productId: product.id, granteeIds, capabilitiesByPlan, graceDays, now });
    if (result.capabilities.length === 0) {
      if (question !== undefined && this.admit(question)) this.keep(question, snapshots, null, Infinity, null);
      return null;
    }
    // With the key held (the feed heard), signed without a turn of the event loop.
    const signed =
      (!stale && this.signer.signHeld?.(tenant, result.capsHashed, req.encoding)) ||
      (await this.signer.sign(tenant, result.capsHashed, { encoding: req.encoding, fromMemory: stale }));
    // Field by field: spreading two objects into a third is slow in V8 (about 0.8 us here, on every fresh answer).
    const answer: SignedCheck = {
      capabilities: result.capabilities,
      capabilitiesEndDates: result.capabilitiesEndDates,
      capsHashed: result.capsHashed,
      signature: signed.signature,
      publicHash: signed.publicHash,
    };
    const key = this.signer.heldKey?.(tenant);
    if (question !== undefined && key !== undefined && this.admit(question)) {
      const validUntil = Math.min(...Object.values(result.capabilitiesEndDates).map((d) => d.getTime()));
      this.keep(question, snapshots, key, validUntil, answer);
    }
    return answer;
  }
}
