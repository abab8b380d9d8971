import { ErrorCodes, fail, invalid } from '../errors';
import type { Capability, Id, License, Tenant } from '../model';
import { assertAccessible } from '../domain/tenancy';
import { assignGrantee, cancelLicense, createAdHocLicense, setLicenseEnd } from '../domain/license';
import { assertCheckableGranteeId } from '../domain/grantee-ids';
import { assertOneSeatPerGrantee, type GivenSeat } from '../domain/seat-grantees';
import type { LicenseCount, LicenseFilter, Repositories } from '../ports';
import { limitsOf, type CoreDeps } from './deps';
import { lockSubscriptionsOf } from './subscriptions/shared';

export interface AdHocLicenseRequest {
  planUuid: string;
  member: string;
  granteeId: string | null;
  /**
   * When the license ends (ahead of now), set as `update` sets it (`setLicenseEnd`) but in the
   * creation's own transaction; none: the plan's (an evaluation's end, or never). v2 only: legacy and v1 refuse it.
   */
  endTime?: Date;
}

/** One batch of a license list: the licenses, the capabilities of their plans, where the next batch starts. */
export interface LicensePage {
  licenses: License[];
  /** Capabilities by plan id, for every plan of the licenses seen so far. */
  capabilities: ReadonlyMap<Id, Capability[]>;
  /** The cursor after the last license, or null at the end. */
  nextCursor: string | null;
}

/**
 * Licenses a write just made or changed, with the capabilities of their plans read in the same
 * transaction: the answer's views need nothing from the database after the commit (a read then
 * could fail in an outage and answer 503 for a change that was made).
 */
export type WrittenLicenses = Pick<LicensePage, 'licenses' | 'capabilities'>;

/** Units of one feature used under a license (the real v1 API's usage record). */
export interface LicenseUsage {
  licenseId: Id;
  featureId: Id;
  planId: Id;
  unitCount: number;
  /** When the balance the units are counted in last changed. */
  updatedAt: Date;
}

/** License records: ad hoc licenses, cancelling them, grantees, and the lists and counts of licenses. */
export class LicenseService {
  constructor(private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'ids' | 'limits'>) {}

  /**
   * Ad hoc licenses (free or evaluation), all or none. `many`: the body was an array (a refusal
   * names `[i].granteeId`, even in an array of one), else one object (`granteeId`); by default
   * an array of more than one.
   */
  async createAdHoc(
    tenant: Tenant,
    requests: AdHocLicenseRequest[],
    { many = requests.length !== 1 }: { many?: boolean } = {},
  ): Promise<WrittenLicenses> {
    const max = limitsOf(this.deps).maxLicensesPerRequest;
    if (requests.length > max) invalid('licenses', `at most ${max} licenses can be created in one request`);
    requests.forEach((req, i) => {
      if (req.granteeId !== null && req.granteeId !== undefined)
        assertCheckableGranteeId(many ? `[${i}].granteeId` : 'granteeId', req.granteeId);
    });
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      const created: License[] = [];
      for (const req of requests) {
        const plan = assertAccessible(await r.plans.get(req.planUuid), tenant, 'plan');
        const product = (await r.products.get(plan.productId)) ?? fail(ErrorCodes.PRODUCT_NOT_FOUND, 'product not found');
        const license = createAdHocLicense({ plan, product, member: req.member, granteeId: req.granteeId, now, id: this.deps.ids.newId() });
        created.push(req.endTime === undefined ? license : setLicenseEnd(license, req.endTime, now));
      }
      await r.licenses.saveMany(created);
      return written(r, created);
    });
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
      // Seats are refused below, but their rows are locked first: their subscriptions before them, in
      // the one order every seat writer takes (a seat locked first could deadlock with the seat worker).
      await lockSubscriptionsOf(r, wanted);
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

  /**
   * Sets the grantee of each license, in order; an unknown license fails the whole batch. A new
   * grantee id must read back in the check (400 naming `[i].granteeId`); a license's own id sent
   * back unchanged is kept, however it was stored. Every item is applied first, then the end state
   * is checked, all or none: a seat may not go to a grantee that then holds another seat of the
   * same subscription and plan (400 naming `[i].granteeId` of the last item that gave it). A swap
   * `[A→Y, B→X]` and a move `[B→X, A→null]` pass; two items giving one grantee two seats do not.
   */
  async batchUpdate(tenant: Tenant, updates: { uuid: Id; granteeId: string | null }[]): Promise<WrittenLicenses> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      const ids = updates.map((u) => u.uuid);
      // The seats' subscriptions first, as every seat writer locks them (see lockSubscriptions).
      await lockSubscriptionsOf(r, ids);
      const found = new Map((await r.licenses.getManyForUpdate(ids)).map((l) => [l.id, l]));
      const updated = new Map<Id, License>();
      const lastItem = new Map<Id, number>();
      for (const [i, u] of updates.entries()) {
        const at = `[${i}].granteeId`;
        const current = updated.get(u.uuid) ?? assertAccessible(found.get(u.uuid), tenant, `license ${u.uuid}`);
        if (u.granteeId !== null && u.granteeId !== current.granteeId) assertCheckableGranteeId(at, u.granteeId);
        updated.set(u.uuid, assignGrantee(current, u.granteeId, now));
        lastItem.set(u.uuid, i);
      }
      const given = [...lastItem.entries()]
        .sort(([, a], [, b]) => a - b)
        .map(([id, i]) => ({ seat: updated.get(id) as License, before: found.get(id) as License, property: `[${i}].granteeId` }));
      await assertSeatsHeldOnce(r, tenant, given, updated.values());
      await r.licenses.saveMany([...updated.values()]);
      return written(
        r,
        updates.map((u) => updated.get(u.uuid) as License),
      );
    });
  }

  /**
   * One license's grantee and, for an ad hoc license, its end, in one transaction. A seat may not go
   * to a grantee that holds another seat of the same subscription and plan (400 naming `granteeId`).
   */
  async update(tenant: Tenant, id: Id, change: { granteeId: string | null; endTime?: Date }): Promise<WrittenLicenses> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      await lockSubscriptionsOf(r, [id]);
      const [found] = await r.licenses.getManyForUpdate([id]);
      const current = assertAccessible(found, tenant, 'license');
      let license = assignGrantee(current, change.granteeId, now);
      await assertSeatsHeldOnce(r, tenant, [{ seat: license, before: current, property: 'granteeId' }], [license]);
      if (change.endTime !== undefined) license = setLicenseEnd(license, change.endTime, now);
      await r.licenses.saveMany([license]);
      return written(r, [license]);
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
}

/**
 * The one-seat rule on the end state of a license write (in its transaction, under the
 * subscriptions' row locks): of each seat given to a new grantee, only that grantee's running seats
 * of the same subscription and plan are read (not the subscription's every seat: assigning many
 * seats one request at a time stays linear), with the write's own licenses (`written`, as it leaves
 * them) laid over them.
 */
async function assertSeatsHeldOnce(
  r: Repositories,
  tenant: Tenant,
  changes: (GivenSeat & { before: License })[],
  written: Iterable<License>,
): Promise<void> {
  const given = changes.filter(
    ({ seat, before }) => seat.subscriptionId !== null && seat.granteeId !== null && seat.granteeId !== before.granteeId,
  );
  if (!given.length) return;
  const seats = new Map<Id, License>();
  const read = new Set<string>();
  for (const { seat } of given) {
    const key = JSON.stringify([seat.subscriptionId, seat.planId, seat.granteeId]);
    if (read.has(key)) continue;
    read.add(key);
    const held = await r.licenses.list(tenant, {
      subscriptionId: seat.subscriptionId as Id,
      planId: seat.planId,
      granteeId: seat.granteeId as string,
      live: true,
    });
    for (const l of held) seats.set(l.id, l);
  }
  for (const l of written) if (l.subscriptionId !== null) seats.set(l.id, l);
  assertOneSeatPerGrantee(seats.values(), given);
}

/** The licenses with their plans' capabilities, read in the transaction `r` that wrote them. */
const written = async (r: Repositories, licenses: License[]): Promise<WrittenLicenses> => ({
  licenses,
  capabilities: await capabilitiesByPlan(
    r,
    licenses.map((l) => l.planId),
  ),
});

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
