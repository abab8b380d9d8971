import type {
  Customer,
  Grantee,
  Group,
  GroupMember,
  LineItem,
  Plan,
  Subscription,
  SubscriptionLineItem,
  SubscriptionRecord,
} from '@tollgate/core';
import { iso } from '@tollgate/http';
import { catalogPlan, lineItemView, nestedList, tierTagView } from './views';

/**
 * Catalog views of the people and their subscriptions (issue #20): owners (the customers who
 * pay), subscriptions and subscription plans (docs/decisions.md, "Owners, grantees and groups").
 */

export const ownerView = (c: Customer) => ({
  id: c.id,
  organisation: c.organisationId,
  value: c.value,
  paymentCustomerId: c.paymentCustomerId,
  emailAddress: c.emailAddress,
  createdAt: iso(c.createdAt),
  updatedAt: iso(c.updatedAt),
});

/** A subscription in the catalog's shape; `interval` and `intervalCount` are its plan's. */
export const subscriptionView = (s: Subscription, customer: Customer | undefined, plan: Plan | undefined) => ({
  id: s.id,
  organisation: s.organisationId,
  ownerId: s.customerId,
  paymentSubscriptionId: s.paymentSubscriptionId,
  status: s.status.toLowerCase(),
  customerId: customer?.paymentCustomerId ?? null,
  interval: plan?.interval ?? null,
  intervalCount: plan ? plan.length : null,
  currencyShortCode: s.currency,
  cancelAtPeriodEnd: s.cancelAtPeriodEnd,
  isPerpetual: false,
  isServiceOnly: s.paymentProvider === 'none',
  startDate: iso(s.currentPeriodStart),
  cancelledAt: iso(s.canceledAt),
  createdAt: iso(s.createdAt),
  updatedAt: iso(s.updatedAt),
});

/**
 * The subscription's one subscription plan: a subscription holds one plan, so the subscription
 * plan has the subscription's id, and its group (the team its seats go to) too.
 */
export const subscriptionPlanOf = (s: Subscription) => ({
  id: s.id,
  organisation: s.organisationId,
  ownerId: s.customerId,
  groupId: s.id,
  subscriptionId: s.id,
  planId: s.planId,
  seats: s.quantity,
  status: s.status === 'CANCELED' ? 'inactive' : 'active',
  createdAt: iso(s.createdAt),
  updatedAt: iso(s.updatedAt),
});

const planWithTag = (p: Plan) => ({ ...catalogPlan(p), tierTag: tierTagView(p.tierTag) });

/** A subscription with what `expand` asked for (`owner`, `subscriptionPlans`). */
export const subscriptionRecordView =
  (expand: Set<string>) =>
  ({ subscription: s, customer, plan }: SubscriptionRecord) => ({
    ...subscriptionView(s, customer, plan),
    ...(expand.has('owner') && customer ? { owner: ownerView(customer) } : {}),
    ...(expand.has('subscriptionPlans')
      ? {
          subscriptionPlans: nestedList([s], `/api/subscription-plans?subscriptionId=${s.id}`, (x) => ({
            ...subscriptionPlanOf(x),
            plan: plan ? planWithTag(plan) : null,
          })),
        }
      : {}),
  });

/** A subscription plan with what `expand` asked for (`plan`, `subscription`, `owner`, `subscriptionPlanLineItems`). */
export const subscriptionPlanRecordView =
  (expand: Set<string>, lineItems?: Map<string, SubscriptionLineItem[]>) => (record: SubscriptionRecord) => ({
    ...subscriptionPlanRecordBase(expand, record),
    ...(lineItems
      ? {
          subscriptionPlanLineItems: nestedList(
            lineItems.get(record.subscription.id) ?? [],
            `/api/subscription-plans/${record.subscription.id}`,
            (item) => {
              const li = record.plan?.lineItems.find((x) => x.id === item.lineItemId);
              return subscriptionLineItemBase(item, record, li);
            },
          ),
        }
      : {}),
  });

const subscriptionPlanRecordBase = (expand: Set<string>, { subscription: s, customer, plan }: SubscriptionRecord) => ({
  ...subscriptionPlanOf(s),
  ...(expand.has('plan') && plan ? { plan: catalogPlan(plan) } : {}),
  ...(expand.has('subscription') ? { subscription: subscriptionView(s, customer, plan) } : {}),
  ...(expand.has('owner') && customer ? { owner: ownerView(customer) } : {}),
});

export const granteeView = (g: Grantee) => ({
  id: g.id,
  organisation: g.organisationId,
  name: g.name,
  granteeId: g.granteeId,
  createdAt: iso(g.createdAt),
  updatedAt: iso(g.updatedAt),
});

export const groupView = (g: Group) => ({
  id: g.id,
  organisation: g.organisationId,
  ownerId: g.customerId,
  name: g.name,
  createdAt: iso(g.createdAt),
  updatedAt: iso(g.updatedAt),
});

/** A membership: `granteeId` is the grantee record's id (as published), not the vendor's identifier. */
export const membershipView = (m: GroupMember) => ({
  id: m.membershipId,
  organisation: m.grantee.organisationId,
  granteeId: m.grantee.id,
  groupId: m.groupId,
  createdAt: iso(m.createdAt),
  updatedAt: iso(m.updatedAt),
});

/** A subscription's line item as the catalog's subscription-plan line item, with its line item. */
const subscriptionLineItemBase = (item: SubscriptionLineItem, { subscription: s, plan }: SubscriptionRecord, li: LineItem | undefined) => ({
  id: item.id,
  organisation: item.organisationId,
  subscriptionPlanId: s.id,
  lineItemPaymentProductId: li?.paymentProductId ?? '',
  type: li?.priceType === 'metered' ? 'metered' : 'unit',
  quantity: li?.priceType === 'per_seat' ? s.quantity : 1,
  usageId: null,
  paymentSubscriptionItemId: null,
  paymentPriceId: li?.prices[0]?.paymentPriceId ?? null,
  expiryDate: s.status === 'CANCELED' ? iso(s.canceledAt ?? s.currentPeriodEnd) : s.cancelAtPeriodEnd ? iso(s.currentPeriodEnd) : null,
  createdAt: iso(item.createdAt),
  updatedAt: iso(item.updatedAt),
  ...(li && plan ? { lineItem: lineItemView(s.organisationId, plan.id)(li) } : {}),
});

/** The same with its subscription plan (and subscription): the detail of a subscription-plan line item. */
export const subscriptionLineItemView = (item: SubscriptionLineItem, record: SubscriptionRecord, li: LineItem | undefined) => ({
  ...subscriptionLineItemBase(item, record, li),
  subscriptionPlan: {
    ...subscriptionPlanOf(record.subscription),
    subscription: subscriptionView(record.subscription, record.customer, record.plan),
  },
});
