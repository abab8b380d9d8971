import { STATUS_CODES } from 'node:http';
import type {
  DeliveryAttempt,
  OutboxEvent,
  Plan,
  PlanDetail,
  WebhookEndpoint,
  Capability,
  CurrencyOption,
  LineItem,
  Page,
  PlanFilterOptions,
  Price,
  Product,
  Subscription,
  Tier,
  TierTag,
  Customer,
  UsageTerms,
} from '@tollgate/core';
import { exactNumber } from '@tollgate/core';
import { iso } from '@tollgate/http';

/** Catalog views: `{type: 'object'|'list', ...}` envelopes, camelCase, ids as `id`. */

/** How many items a nested list shows before `hasMore` says it was cut. */
export const NESTED_LIMIT = 100;

export function nestedList<T, V>(items: T[], path: string, view: (t: T) => V) {
  return { type: 'list' as const, data: items.slice(0, NESTED_LIMIT).map(view), hasMore: items.length > NESTED_LIMIT, path };
}

export const objectEnvelope = <T>(data: T) => ({ type: 'object' as const, data });

/** The page a list request asks for: `limit` (default 25) and the `after` / `before` cursors. */
export const pageQueryOf = (q: Record<string, string | undefined>) => ({
  limit: q.limit ? Number(q.limit) : 25,
  after: q.after,
  before: q.before,
});

export const listEnvelope = <T, V>(page: Page<T>, view: (t: T) => V) => ({
  type: 'list' as const,
  data: page.items.map(view),
  nextCursor: page.nextCursor,
  previousCursor: page.previousCursor,
  hasMore: page.hasMore,
});

import { catalogPlan, catalogProduct } from '@tollgate/core';

export { catalogPlan, catalogProduct };

export const catalogSettings = (p: Product) => {
  const s = p.settings;
  return {
    id: s.id,
    organisation: p.organisationId,
    successUrl: s.successUrl,
    cancelUrl: s.cancelUrl,
    allowPromoCodes: s.allowPromoCodes,
    automaticTax: s.automaticTax,
    collectBillingAddress: s.collectBillingAddress,
    collectShippingAddress: s.collectShippingAddress,
    cardPrefillPreference: s.cardPrefillPreference,
    pastDueEntitlements: s.pastDueEntitlements,
    productId: p.id,
    createdAt: iso(s.createdAt),
    updatedAt: iso(s.updatedAt),
  };
};

export const tierTagView = (t: TierTag | null) =>
  t ? { id: t.id, name: t.name, organisation: t.organisationId, createdAt: iso(t.createdAt), updatedAt: iso(t.updatedAt) } : null;

export const entitlementView = (organisation: string) => (c: Capability) => ({
  id: c.id,
  organisation,
  name: c.name,
  createdAt: iso(c.createdAt),
  updatedAt: iso(c.updatedAt),
});

const tierView = (organisation: string, optionId: string) => (t: Tier) => ({
  id: t.id,
  organisation,
  upTo: t.upTo,
  flatAmount: t.flatAmount,
  unitAmount: t.unitAmount,
  currencyOptionId: optionId,
  createdAt: iso(t.createdAt),
  updatedAt: iso(t.updatedAt),
});

const currencyOptionView = (organisation: string, priceId: string) => (o: CurrencyOption) => ({
  id: o.id,
  organisation,
  currency: o.currency,
  unitAmount: o.unitAmount,
  priceId,
  isDefault: o.isDefault,
  createdAt: iso(o.createdAt),
  updatedAt: iso(o.updatedAt),
  tiers: nestedList(o.tiers, `/api/currency-options/${o.id}/tiers`, tierView(organisation, o.id)),
});

/** A price's own fields, as every catalog view of one shows them (in this order). */
export const priceFields = (organisation: string, lineItemId: string, p: Price) => ({
  id: p.id,
  organisation,
  paymentPriceId: p.paymentPriceId,
  interval: p.interval,
  intervalCount: p.intervalCount,
  lineItemId,
  archivedAt: iso(p.archivedAt),
  createdAt: iso(p.createdAt),
  updatedAt: iso(p.updatedAt),
});

const priceView = (organisation: string, lineItemId: string) => (p: Price) => ({
  ...priceFields(organisation, lineItemId, p),
  currencyOptions: nestedList(p.currencyOptions, `/api/prices/${p.id}/currency-options`, currencyOptionView(organisation, p.id)),
});

/** A line item's own fields, as every catalog view of one shows them (in this order). */
export const lineItemFields = (organisation: string, planId: string, li: LineItem) => ({
  id: li.id,
  organisation,
  name: li.name,
  slug: li.slug,
  paymentProductId: li.paymentProductId,
  meterId: li.meter?.id ?? null,
  nickname: li.nickname,
  priceType: li.priceType,
  intervalType: li.intervalType,
  billingScheme: li.billingScheme,
  tiersMode: li.tiersMode,
  minQuantity: li.minQuantity,
  maxQuantity: li.maxQuantity,
  isActive: li.isActive,
  planId,
  allowChangingQuantity: li.allowChangingQuantity,
  archivedAt: iso(li.archivedAt),
  unitLabel: li.unitLabel,
  createdAt: iso(li.createdAt),
  updatedAt: iso(li.updatedAt),
});

export const lineItemView = (organisation: string, planId: string) => (li: LineItem) => ({
  ...lineItemFields(organisation, planId, li),
  meter: li.meter
    ? {
        id: li.meter.id,
        slug: li.meter.slug,
        name: li.meter.name,
        paymentMeterId: li.meter.paymentMeterId,
        organisation,
        createdAt: iso(li.meter.createdAt),
        updatedAt: iso(li.meter.updatedAt),
      }
    : null,
  prices: nestedList(li.prices, `/api/line-items/${li.id}/prices`, priceView(organisation, li.id)),
  // Tollgate's usage plan terms, on metered line items that have them (the published shape has none).
  ...(li.usage ? { usage: usageTermsView(li.usage, li.meter?.scale) } : {}),
});

/** A line item's usage terms as the save took them: units of its meter (decimals on a decimal meter) as JSON numbers. */
export const usageTermsView = (t: UsageTerms, scale = 0) => ({
  allowance: exactNumber(t.allowance, scale),
  maxUsage: t.maxUsage === null ? null : exactNumber(t.maxUsage, scale),
  minUsage: exactNumber(t.minUsage, scale),
  rollover: t.rollover.kind === 'upTo' ? { upTo: exactNumber(t.rollover.units, scale) } : t.rollover.kind,
});

/**
 * A subscription as its catalog subscription plan of `planId`: one row per subscription holding the
 * plan (its first plan: the subscription's id; an added one: its own).
 */
export const subscriptionPlanView = (s: Subscription, customer: Customer | undefined, planId: string = s.planId) => {
  const added = planId === s.planId ? undefined : s.addedPlans.find((a) => a.planId === planId);
  return {
    id: added?.id ?? s.id,
    organisation: s.organisationId,
    ownerId: s.customerId,
    groupId: s.id,
    subscriptionId: s.id,
    planId: added?.planId ?? s.planId,
    seats: added?.quantity ?? s.quantity,
    status: s.status === 'CANCELED' ? 'inactive' : 'active',
    createdAt: iso(added?.createdAt ?? s.createdAt),
    updatedAt: iso(added?.updatedAt ?? s.updatedAt),
    subscription: {
      id: s.id,
      organisation: s.organisationId,
      ownerId: s.customerId,
      paymentSubscriptionId: s.paymentSubscriptionId,
      status: s.status.toLowerCase(),
      customerId: customer?.paymentCustomerId ?? null,
      interval: null,
      intervalCount: null,
      currencyShortCode: s.currency,
      cancelAtPeriodEnd: s.cancelAtPeriodEnd,
      isPerpetual: false,
      isServiceOnly: false,
      startDate: iso(s.createdAt),
      cancelledAt: iso(s.canceledAt),
      createdAt: iso(s.createdAt),
      updatedAt: iso(s.updatedAt),
      owner: customer
        ? {
            id: customer.id,
            organisation: customer.organisationId,
            value: customer.value,
            paymentCustomerId: customer.paymentCustomerId,
            emailAddress: customer.emailAddress,
            createdAt: iso(customer.createdAt),
            updatedAt: iso(customer.updatedAt),
          }
        : null,
    },
  };
};

/** The filter values of the plan list; currencies in upper case as the published schema has them (ISO 4217). */
export const filterOptionsView = (f: PlanFilterOptions) => ({
  currencies: [...new Set(f.currencies.map((c) => c.toUpperCase()))].sort(),
  intervals: f.intervals,
});

/** The catalog error body: `{title, detail, errors}`. */
export const catalogErrorBody = (e: { status: number; message: string; details: { property: string; error: string }[] }) => ({
  title: STATUS_CODES[e.status] ?? 'Error',
  detail: e.message,
  errors: e.details.length ? e.details.map((d) => ({ property: d.property, message: d.error })) : null,
});

/** A product with what `expand` asked for (`plans`, `settings`). */
export const productView = (p: Product, plans: Map<string, Plan[]> | undefined, expand: Set<string>) => ({
  ...catalogProduct(p),
  ...(plans ? { plans: nestedList(plans.get(p.id) ?? [], `/api/plans?productId=${p.id}`, catalogPlan) } : {}),
  ...(expand.has('settings') ? { settings: catalogSettings(p) } : {}),
});

/** A plan with what `expand` asked for (`product`, `tierTag`, `entitlements`, `lineItems`). */
export const planView = (p: Plan, product: Product | undefined, expand: Set<string>) => ({
  ...catalogPlan(p),
  ...(expand.has('product') && product ? { product: catalogProduct(product) } : {}),
  ...(expand.has('tierTag') ? { tierTag: tierTagView(p.tierTag) } : {}),
  ...(expand.has('entitlements') && product
    ? {
        entitlements: nestedList(
          product.capabilities.filter((c) => p.capabilityIds.includes(c.id)),
          `/api/plans/${p.id}/entitlements`,
          entitlementView(p.organisationId),
        ),
      }
    : {}),
  ...(expand.has('lineItems')
    ? { lineItems: nestedList(p.lineItems, `/api/plans/${p.id}/line-items`, lineItemView(p.organisationId, p.id)) }
    : {}),
});

/** A plan's detail: its product in short, and with `subscriptionPlans` the subscriptions on it. */
export const planDetailView = (d: PlanDetail, expand: Set<string>) => ({
  ...planView(d.plan, d.product, new Set([...expand].filter((e) => e !== 'product'))),
  ...(expand.has('product') ? { product: { id: d.product.id, name: d.product.name, archivedAt: iso(d.product.archivedAt) } } : {}),
  ...(expand.has('subscriptionPlans')
    ? {
        subscriptionPlans: nestedList(d.subscriptions, `/api/plans/${d.plan.id}/subscription-plans`, (s) =>
          subscriptionPlanView(s, d.customers.get(s.customerId), d.plan.id),
        ),
      }
    : {}),
});

export const endpointView = (e: WebhookEndpoint) => ({
  id: e.id,
  organisation: e.organisationId,
  url: e.url,
  secret: null as string | null,
  description: e.description,
  events: e.events,
  isActive: !e.disabledAt,
  disabledAt: iso(e.disabledAt),
  isTest: e.isTest,
  createdAt: iso(e.createdAt),
  updatedAt: iso(e.updatedAt),
});

export const outboxEventView = (e: OutboxEvent) => ({
  id: e.id,
  organisation: e.organisationId,
  type: e.type,
  isTest: e.isTest,
  payload: e.payload,
  createdAt: iso(e.createdAt),
  // Events never change after they are written.
  updatedAt: iso(e.createdAt),
});

export const attemptView = (a: DeliveryAttempt) => ({
  id: a.id,
  endpointId: a.endpointId,
  eventId: a.eventId,
  deliveryId: a.deliveryId,
  responseStatus: a.responseStatus,
  responseBody: a.responseBody,
  durationMs: a.durationMs,
  createdAt: iso(a.createdAt),
});
