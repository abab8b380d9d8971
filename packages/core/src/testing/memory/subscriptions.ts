import { randomUUID } from 'node:crypto';
import { ErrorCodes, fail } from '../../errors';
import type { Id, License } from '../../model';
import { heldLineItemIds, holdsPlan } from '../../domain/subscription';
import { pageOf } from '../../support/pagination';
import type { CheckIndexRow, EventRepository, LicenseFilter, LicenseRepository, SubscriptionRepository } from '../../ports';
import { type Changed, type Tables, byCreated, copy, inTenant, values } from './tables';

/** Why a seat removal is refused: a seat to remove has a grantee (docs: access is never silently taken). */
const ASSIGNED_MEANWHILE = 'a seat to remove was assigned meanwhile, so none was removed; try again';

export function subscriptionRepository(db: Tables): SubscriptionRepository {
  return {
    get: async (id) => copy(db.subscriptions.get(id)),
    getForUpdate: async (id) => copy(db.subscriptions.get(id)),
    findByPaymentId: async (pid) => values(db.subscriptions).find((s) => s.paymentSubscriptionId === pid),
    revision: async (id) => db.subscriptionRevisions.get(id)?.toString(),
    listByPlan: async (planId) =>
      values(db.subscriptions)
        .filter((s) => holdsPlan(s, planId))
        .sort(byCreated),
    countReferencing: async ({ planId, productId, customerId }) =>
      values(db.subscriptions).filter(
        (s) => (planId && holdsPlan(s, planId)) || (productId && s.productId === productId) || (customerId && s.customerId === customerId),
      ).length,
    page: async (t, q) =>
      pageOf(
        values(db.subscriptions).filter(
          (s) =>
            inTenant(s, t) &&
            (!q.customerIds || q.customerIds.includes(s.customerId)) &&
            (!q.planIds || q.planIds.some((p) => holdsPlan(s, p))) &&
            (!q.productIds || q.productIds.includes(s.productId)) &&
            (!q.statuses || q.statuses.includes(s.status)) &&
            (!q.ids || q.ids.includes(s.id)),
        ),
        q,
      ),
    delete: async (id) => {
      for (const table of [db.licenses, db.billingDocuments, db.events] as Map<string, { subscriptionId: string | null }>[])
        for (const [key, row] of table) if (row.subscriptionId === id) table.delete(key);
      for (const session of db.checkoutSessions.values()) if (session.subscriptionId === id) session.subscriptionId = null;
      for (const [key, group] of db.groups) if (group.subscriptionId === id) db.groups.delete(key);
      for (const [key, row] of db.subscriptionLineItems) if (row.subscriptionId === id) db.subscriptionLineItems.delete(key);
      db.subscriptions.delete(id);
      db.subscriptionRevisions.delete(id);
    },
    listDueForCancellation: async (now, limit) =>
      values(db.subscriptions)
        .filter((s) => s.status !== 'CANCELED' && s.cancelAtPeriodEnd && s.currentPeriodEnd <= now)
        .sort(byCreated)
        .slice(0, limit)
        .map((s) => s.id),
    listDueForRenewal: async (now, providers, limit, testModeOnly = []) =>
      values(db.subscriptions)
        .filter(
          (s) =>
            s.status !== 'CANCELED' &&
            !s.cancelAtPeriodEnd &&
            s.currentPeriodEnd <= now &&
            providers.includes(s.paymentProvider) &&
            (s.isTest || !testModeOnly.includes(s.paymentProvider)),
        )
        .sort(byCreated)
        .slice(0, limit)
        .map((s) => s.id),
    save: async (s) => {
      db.subscriptions.set(s.id, copy(s));
      db.subscriptionRevisions.set(s.id, (db.subscriptionRevisions.get(s.id) ?? 0) + 1);
      const held = heldLineItemIds(s);
      const kept = new Set<string>();
      for (const [key, row] of db.subscriptionLineItems)
        if (row.subscriptionId === s.id) {
          if (held.includes(row.lineItemId)) kept.add(row.lineItemId);
          else db.subscriptionLineItems.delete(key);
        }
      for (const lineItemId of held)
        if (!kept.has(lineItemId)) {
          const id = randomUUID();
          db.subscriptionLineItems.set(id, {
            id,
            organisationId: s.organisationId,
            isTest: s.isTest,
            subscriptionId: s.id,
            lineItemId,
            createdAt: s.updatedAt,
            updatedAt: s.updatedAt,
          });
          kept.add(lineItemId);
        }
    },
    lineItems: async (subscriptionId) => {
      const s = db.subscriptions.get(subscriptionId);
      const rows = values(db.subscriptionLineItems).filter((r) => r.subscriptionId === subscriptionId);
      return s ? heldLineItemIds(s).flatMap((li) => rows.filter((r) => r.lineItemId === li)) : [];
    },
    getLineItem: async (id) => copy(db.subscriptionLineItems.get(id)),
    subscriptionOfPlan: async (id) => values(db.subscriptions).find((s) => s.addedPlans.some((a) => a.id === id))?.id,
  };
}

export function licenseRepository(db: Tables, changed: Changed): LicenseRepository {
  const licenseChanged = (l: License | undefined) => {
    if (l?.granteeId) changed({ kind: 'license', productId: l.productId, granteeId: l.granteeId });
  };
  return {
    get: async (id) => copy(db.licenses.get(id)),
    getManyForUpdate: async (ids) =>
      ids
        .map((id) => db.licenses.get(id))
        .filter((l): l is License => !!l)
        .map(copy),
    subscriptionsOf: async (ids) =>
      [...new Set(ids.map((id) => db.licenses.get(id)?.subscriptionId).filter((sid): sid is Id => !!sid))].sort(),
    listBySubscription: async (sid) =>
      values(db.licenses)
        .filter((l) => l.subscriptionId === sid)
        .sort(byCreated),
    list: async (t, f) =>
      values(db.licenses)
        .filter((l) => inTenant(l, t) && licenseMatches(l, f))
        .sort(byCreated),
    page: async (t, f, q) =>
      pageOf(
        values(db.licenses).filter((l) => inTenant(l, t) && licenseMatches(l, f)),
        q,
      ),
    count: async (t, f) => {
      const ls = values(db.licenses).filter((l) => inTenant(l, t) && licenseMatches(l, f));
      const assigned = ls.filter((l) => l.granteeId !== null).length;
      return { count: ls.length, assigned, unassigned: ls.length - assigned };
    },
    findForCheck: async (t, productId, grantees) =>
      values(db.licenses).filter(
        (l) => inTenant(l, t) && l.productId === productId && l.granteeId !== null && grantees.includes(l.granteeId),
      ),
    scanForCheck: async (statuses, batch, visit) => {
      const granting = values(db.licenses).filter((l) => {
        const product = db.products.get(l.productId);
        return (
          l.granteeId !== null &&
          statuses.includes(l.status) &&
          product !== undefined &&
          product.organisationId === l.organisationId &&
          product.isTest === l.isTest
        );
      });
      // One row per product, grantee and plan: the latest end, no end beating any.
      const reduced = new Map<string, CheckIndexRow>();
      for (const l of granting) {
        const key = `${l.productId}|${l.granteeId}|${l.planId}`;
        const endMs = l.endTime?.getTime() ?? null;
        const kept = reduced.get(key);
        if (kept === undefined)
          reduced.set(key, { productId: l.productId, planId: l.planId, granteeId: l.granteeId as string, status: l.status, endMs });
        else if (kept.endMs !== null && (endMs === null || endMs > kept.endMs)) kept.endMs = endMs;
      }
      const rows = [...reduced.values()];
      for (let at = 0; at < rows.length; at += batch) if (!visit(rows.slice(at, at + batch))) return;
    },
    listEndedEvaluations: async (now, limit) =>
      values(db.licenses)
        .filter((l) => l.status === 'EVALUATION' && l.subscriptionId === null && l.endTime !== null && l.endTime <= now)
        .sort((a, b) => (a.endTime as Date).getTime() - (b.endTime as Date).getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .slice(0, limit)
        .map((l) => l.id),
    saveMany: async (ls) =>
      ls.forEach((l) => {
        licenseChanged(db.licenses.get(l.id));
        licenseChanged(l);
        db.licenses.set(l.id, copy(l));
      }),
    deleteMany: async (ids) => {
      // As on the database: an assigned seat is refused, and nothing is removed.
      if (ids.some((id) => db.licenses.get(id)?.granteeId != null)) fail(ErrorCodes.CONFLICT, ASSIGNED_MEANWHILE);
      ids.forEach((id) => {
        licenseChanged(db.licenses.get(id));
        db.licenses.delete(id);
      });
    },
  };
}

export function eventRepository(db: Tables): EventRepository {
  return {
    get: async (id) => copy(db.events.get(id)),
    save: async (e) => void db.events.set(e.id, copy(e)),
    getForUpdate: async (id) => copy(db.events.get(id)),
    countOpen: async () => {
      const all = [...db.events.values()];
      return { queued: all.filter((e) => e.status === 'queued').length, pending: all.filter((e) => e.status === 'pending').length };
    },
    hasOpen: async (subscriptionId) =>
      [...db.events.values()].some((e) => e.subscriptionId === subscriptionId && (e.status === 'queued' || e.status === 'pending')),
    // First queued first: the map keeps insertion order, like the SQL adapter's sequence.
    claimNext: async (now, leaseUntil) => {
      const open = [...db.events.values()].filter((e) => e.status === 'queued' || e.status === 'pending');
      const next = open.find(
        (e, i) =>
          e.runAt <= now &&
          (!e.lockedUntil || e.lockedUntil <= now) &&
          !open.slice(0, i).some((p) => p.subscriptionId !== null && p.subscriptionId === e.subscriptionId),
      );
      if (!next) return undefined;
      const leased = { ...copy(next), lockedUntil: leaseUntil };
      db.events.set(leased.id, copy(leased));
      return leased;
    },
  };
}

function licenseMatches(l: License, f: LicenseFilter): boolean {
  return (
    (!f.status || l.status === f.status) &&
    (!f.live || l.status !== 'CANCELED') &&
    (!f.subscriptionId || l.subscriptionId === f.subscriptionId) &&
    (!f.productId || l.productId === f.productId) &&
    (!f.planId || l.planId === f.planId) &&
    (f.purchaser === undefined || l.purchaser === f.purchaser) &&
    (f.granteeId === undefined || l.granteeId === f.granteeId)
  );
}
