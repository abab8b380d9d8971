import type { Capability, Id, License, Plan, Product, Subscription } from './model';

/**
 * The record views that leave Tollgate in more than one way: over HTTP (v1 License and Subscription,
 * catalog Product and Plan) and in webhook payloads, which carry the same shapes. One definition
 * each, so an event's `data` is exactly what the API answers for the record.
 */

/** ISO 8601 UTC with milliseconds, as every generation renders timestamps. */
export const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

export const capabilityView = (c: Capability) => ({
  uuid: c.id,
  name: c.name,
  description: c.description,
  status: c.status,
  productUuid: c.productId,
  updatedAt: iso(c.updatedAt),
});

/** The v1 License (also the body of legacy `POST /licenses`, whose shape the contract leaves open). */
export const licenseView = (l: License, capabilities: Capability[]) => ({
  uuid: l.id,
  productUuid: l.productId,
  planUuid: l.planId,
  subscriptionUuid: l.subscriptionId,
  cancelAtPeriodEnd: l.cancelAtPeriodEnd,
  granteeId: l.granteeId,
  purchaser: l.purchaser,
  email: l.email,
  name: l.name,
  paymentService: l.paymentService,
  type: l.type,
  capabilities: capabilities.map(capabilityView),
  startTime: iso(l.startTime),
  endTime: iso(l.endTime),
  status: l.status,
  metadata: l.metadata,
  updatedAt: iso(l.updatedAt),
  isTest: l.isTest,
});

/** Licenses as views, each with its plan's capabilities (by plan id, as a write or a page of licenses carries them). */
export const licenseViews = (w: { licenses: License[]; capabilities: ReadonlyMap<Id, Capability[]> }) =>
  w.licenses.map((l) => licenseView(l, w.capabilities.get(l.planId) ?? []));

/**
 * When the subscription ends: once canceled, the instant it ended (`canceledAt`, when its licenses
 * ended too: canceled now, even after a period end the sweep had not renewed yet; the period's end
 * for a cancellation at the period's end, as the sweep and Stripe's `ended_at` record it); else its
 * period's end. The catalog API's views show the same instant.
 */
const expiryOf = (s: Subscription): Date => (s.status === 'CANCELED' && s.canceledAt ? s.canceledAt : s.currentPeriodEnd);

/** The v1 Subscription without expansions. */
export const subscriptionView = (s: Subscription) => ({
  uuid: s.id,
  productUuid: s.productId,
  planUuid: s.planId,
  organisation: s.organisationId,
  paymentIntegrationSubscriptionId: s.paymentSubscriptionId,
  type: s.type,
  quantity: s.quantity,
  email: s.email,
  expiryDate: iso(expiryOf(s)),
  lineItemIds: s.lineItemIds,
  status: s.status,
  createdAt: iso(s.createdAt),
  updatedAt: iso(s.updatedAt),
  isTest: s.isTest,
  cancelAtPeriodEnd: s.cancelAtPeriodEnd,
});

/** The catalog Product. */
export const catalogProduct = (p: Product) => ({
  id: p.id,
  organisation: p.organisationId,
  name: p.name,
  isActive: !p.archivedAt,
  archivedAt: iso(p.archivedAt),
  createdAt: iso(p.createdAt),
  updatedAt: iso(p.updatedAt),
});

/** The catalog Plan. */
export const catalogPlan = (p: Plan) => ({
  id: p.id,
  organisation: p.organisationId,
  name: p.name,
  isActive: p.active && !p.archivedAt,
  productId: p.productId,
  tierTagId: p.tierTag?.id ?? null,
  trialPeriodDays: p.trialDays,
  archivedAt: iso(p.archivedAt),
  createdAt: iso(p.createdAt),
  updatedAt: iso(p.updatedAt),
});
