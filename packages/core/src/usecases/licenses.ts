import { ErrorCodes, fail, invalid } from '../errors';
import type { Capability, Id, License, Tenant } from '../model';
import { assertAccessible } from '../domain/tenancy';
import { assignGrantee, cancelLicense, createAdHocLicense } from '../domain/license';
import { capabilityCheck, type CapabilityCheck, type CheckLicense } from '../domain/check';
import { EntitlementCache } from './check-cache';
import { Lru } from '../support/lru';
import type { LicenseCount, LicenseFilter, Repositories, SignedMessage, Signer } from '../ports';
import { limitsOf, type CoreDeps } from './deps';

export interface AdHocLicenseRequest {
  planUuid: string;
  member: string;
  granteeId: string | null;
}

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

/** One batch of a license list: the licenses, the capabilities of their plans, where the next batch starts. */
export interface LicensePage {
  licenses: License[];
  /** Capabilities by plan id, for every plan of the licenses seen so far. */
  capabilities: ReadonlyMap<Id, Capability[]>;
  /** The cursor after the last license, or null at the end. */
  nextCursor: string | null;
}

/** A check answer kept for the same question while what it was computed from is unchanged. */
interface KeptAnswer {
  /** The snapshot objects it was computed from, one per grantee (compared by identity). */
  snapshots: readonly (readonly CheckLicense[])[];
  /** The signing key it was signed under (compared by identity), or null for no answer. */
  key: object | undefined | null;
  /** Until when (ms): the earliest capability end; after it a capability lapses. */
  validUntil: number;
  answer: SignedCheck | null;
}

/** Answers kept at most (the hot set of questions; the snapshots hold the rest). */
const KEPT_ANSWERS = 20_000;

/** Units of one feature used under a license (the real v1 API's usage record). */
export interface LicenseUsage {
  licenseId: Id;
  featureId: Id;
  planId: Id;
  unitCount: number;
}

export class LicenseService {
  /**
   * Answers to repeated questions (same product, grantees, grace, encoding): reused while every
   * snapshot they came from is the very object the cache holds (an invalidation replaces it), the
   * signing key is the same object, and no capability has ended since. The same answer object comes
   * back, so the edge can keep its rendering too.
   */
  private readonly answers = new Lru<string, KeptAnswer>(KEPT_ANSWERS);

  constructor(
    private readonly deps: CoreDeps,
    private readonly signer: Signer,
    /** Per-instance entitlement snapshots (never live without a change feed). */
    readonly cache: EntitlementCache = new EntitlementCache(),
  ) {}

  /** Ad hoc licenses (free or evaluation), all or none. */
  async createAdHoc(tenant: Tenant, requests: AdHocLicenseRequest[]): Promise<License[]> {
    const max = limitsOf(this.deps).maxLicensesPerRequest;
    if (requests.length > max) invalid('licenses', `at most ${max} licenses can be created in one request`);
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      const created: License[] = [];
      for (const req of requests) {
        const plan = assertAccessible(await r.plans.get(req.planUuid), tenant, 'plan');
        const product = (await r.products.get(plan.productId)) ?? fail(ErrorCodes.PRODUCT_NOT_FOUND, 'product not found');
        created.push(createAdHocLicense({ plan, product, member: req.member, granteeId: req.granteeId, now, id: this.deps.ids.newId() }));
      }
      await r.licenses.saveMany(created);
      return created;
    });
  }

  /**
   * The usage recorded against the license's metered features, per feature. Tollgate records no
   * usage (no metering API exists yet), so this is the truth: none. The route exists so that real
   * clients that ask get a well-formed answer, and 403 for a license they cannot see.
   */
  async usage(tenant: Tenant, id: Id): Promise<LicenseUsage[]> {
    await this.get(tenant, id);
    return [];
  }

  /** One license of the tenant (another tenant's answers as every foreign id does). */
  async get(tenant: Tenant, id: Id): Promise<License> {
    return this.deps.uow.read(async (r) => assertAccessible(await r.licenses.get(id), tenant, 'license'));
  }

  /**
   * Ends licenses now, all or none. Only ad hoc licenses end this way: a subscription's license is
   * one of its seats, which change through the seat operations (a decrement) or end with the
   * subscription; asking to cancel one is a 409 that says so (docs/decisions.md).
   */
  async cancel(tenant: Tenant, ids: Id[]): Promise<License[]> {
    const max = limitsOf(this.deps).maxLicensesPerRequest;
    if (ids.length === 0) invalid('uuids', 'names no license');
    if (ids.length > max) invalid('uuids', `at most ${max} licenses can be canceled in one request`);
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      const wanted = [...new Set(ids)];
      const found = new Map((await r.licenses.getManyForUpdate(wanted)).map((l) => [l.id, l]));
      const canceled = wanted.map((id) => {
        const license = assertAccessible(found.get(id), tenant, 'license');
        if (license.subscriptionId !== null)
          fail(
            ErrorCodes.CONFLICT,
            `license ${id} is a seat of subscription ${license.subscriptionId}: remove the seat (PUT /subscriptions/:uuid/seats) or cancel the subscription`,
          );
        return cancelLicense(license, now);
      });
      await r.licenses.saveMany(canceled);
      return canceled;
    });
  }

  /** Sets the grantee of each license; an unknown license fails the whole batch. */
  async batchUpdate(tenant: Tenant, updates: { uuid: Id; granteeId: string | null }[]): Promise<License[]> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      const found = new Map((await r.licenses.getManyForUpdate(updates.map((u) => u.uuid))).map((l) => [l.id, l]));
      const updated = new Map<Id, License>();
      for (const u of updates) {
        const current = updated.get(u.uuid) ?? assertAccessible(found.get(u.uuid), tenant, `license ${u.uuid}`);
        updated.set(u.uuid, assignGrantee(current, u.granteeId, now));
      }
      await r.licenses.saveMany([...updated.values()]);
      return updates.map((u) => updated.get(u.uuid) as License);
    });
  }

  /**
   * The tenant's licenses matching the filter, `batch` (200) at a time with the capabilities of their
   * plans, oldest first, from `after` (a cursor) up to `take` licenses: memory stays bounded by one
   * batch whatever the number of licenses.
   */
  async *pages(
    tenant: Tenant,
    filter: LicenseFilter,
    options: { after?: string; take?: number; batch?: number } = {},
  ): AsyncGenerator<LicensePage> {
    const batch = options.batch ?? 200;
    let remaining = options.take ?? Number.POSITIVE_INFINITY;
    let after = options.after;
    const capabilities = new Map<Id, Capability[]>();
    while (remaining > 0) {
      const page = await this.deps.uow.read((r) => r.licenses.page(tenant, filter, { limit: Math.min(batch, remaining), after }));
      const missing = page.items.filter((l) => !capabilities.has(l.planId));
      if (missing.length) for (const [planId, caps] of await this.capabilitiesOf(missing)) capabilities.set(planId, caps);
      remaining -= page.items.length;
      const more = page.hasMore && remaining > 0;
      yield { licenses: page.items, capabilities, nextCursor: page.hasMore ? page.nextCursor : null };
      if (!more || !page.nextCursor) return;
      after = page.nextCursor;
    }
  }

  async list(tenant: Tenant, filter: LicenseFilter): Promise<License[]> {
    return this.deps.uow.run((r) => r.licenses.list(tenant, filter));
  }

  async count(tenant: Tenant, filter: LicenseFilter): Promise<LicenseCount> {
    return this.deps.uow.run(async (r) => {
      if (filter.subscriptionId) assertAccessible(await r.subscriptions.get(filter.subscriptionId), tenant, 'subscription');
      return r.licenses.count(tenant, filter);
    });
  }

  /** The capabilities each license's plan grants, for views that show them with the license. */
  async capabilitiesOf(licenses: License[]): Promise<Map<Id, Capability[]>> {
    return this.deps.uow.run((r) =>
      capabilitiesByPlan(
        r,
        licenses.map((l) => l.planId),
      ),
    );
  }

  /**
   * The signed capability check; null when the grantees have no capability. Answered from the
   * entitlement cache when it is live (misses load only what is missing, in one round of reads,
   * from the read replica when there is one); the check is the pure function over the snapshots.
   */
  async check(tenant: Tenant, req: CheckRequest): Promise<SignedCheck | null> {
    const { productId, granteeIds, graceDays } = req;
    if (granteeIds.length === 0) invalid('granteeIds', 'names no grantee');
    if (!Number.isSafeInteger(graceDays) || graceDays < 0)
      fail(ErrorCodes.CHECK_GRACE_INVALID, 'grace must be a whole number of days greater than 0');
    const now = this.deps.clock.now();
    const cache = this.cache;
    const reads = this.deps.readUow ?? this.deps.uow;

    let owner = cache.owner(productId);
    if (owner === undefined) {
      const mark = cache.mark();
      owner = (await reads.read((r) => r.products.getOwnership(productId))) ?? null;
      cache.storeOwner(mark, productId, owner);
    }
    const product = assertAccessible(owner, tenant, 'product');

    const licenses: CheckLicense[] = [];
    const missing: string[] = [];
    const snapshots: (readonly CheckLicense[])[] = [];
    for (const g of granteeIds) {
      const snapshot = cache.snapshot(product.id, g);
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
        kept.snapshots.every((s, i) => s === snapshots[i]) &&
        (kept.answer === null || kept.key === this.signer.heldKey?.(tenant.organisationId))
      )
        return kept.answer;
    }
    if (missing.length) {
      const mark = cache.mark();
      const loaded = await reads.read((r) => r.licenses.findForCheck(tenant, product.id, missing));
      const byGrantee = new Map<string, CheckLicense[]>(missing.map((g) => [g, []]));
      for (const l of loaded) if (l.granteeId !== null) byGrantee.get(l.granteeId)?.push(l);
      cache.storeSnapshots(mark, product.id, byGrantee);
      licenses.push(...loaded);
    }
    if (licenses.length === 0) return null;

    const capabilitiesByPlan = new Map<Id, string[]>();
    const unknownPlans: Id[] = [];
    for (const planId of new Set(licenses.map((l) => l.planId))) {
      const caps = cache.capabilities(planId);
      if (caps) capabilitiesByPlan.set(planId, caps);
      else unknownPlans.push(planId);
    }
    if (unknownPlans.length) {
      const mark = cache.mark();
      const names = await reads.read((r) => r.plans.capabilityNames(unknownPlans));
      cache.storeCapabilities(mark, names, unknownPlans);
      for (const id of unknownPlans) capabilitiesByPlan.set(id, names.get(id) ?? []);
    }
    const result = capabilityCheck({ licenses, productId: product.id, granteeIds, capabilitiesByPlan, graceDays, now });
    if (result.capabilities.length === 0) {
      if (question !== undefined) this.answers.set(question, { snapshots, key: null, validUntil: Infinity, answer: null });
      return null;
    }
    const signed = await this.signer.sign(tenant.organisationId, result.capsHashed, { encoding: req.encoding });
    const answer: SignedCheck = { ...result, ...signed };
    const key = this.signer.heldKey?.(tenant.organisationId);
    if (question !== undefined && key !== undefined) {
      const validUntil = Math.min(...Object.values(result.capabilitiesEndDates).map((d) => d.getTime()));
      this.answers.set(question, { snapshots, key, validUntil, answer });
    }
    return answer;
  }
}

/** The capabilities each plan grants (by plan id), as license views show them. */
export async function capabilitiesByPlan(r: Repositories, planIds: Id[]): Promise<Map<Id, Capability[]>> {
  const plans = await r.plans.getMany([...new Set(planIds)]);
  const out = new Map<Id, Capability[]>();
  for (const plan of plans) {
    const product = await r.products.get(plan.productId);
    const byId = new Map((product?.capabilities ?? []).map((c) => [c.id, c]));
    out.set(
      plan.id,
      plan.capabilityIds.map((id) => byId.get(id)).filter((c): c is Capability => !!c),
    );
  }
  return out;
}
