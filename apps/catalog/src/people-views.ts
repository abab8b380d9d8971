import {
  LICENSE_STATUSES,
  SUBSCRIPTION_STATUS_VALUES,
  SUBSCRIPTION_STATUSES,
  type Customer,
  type Grantee,
  type Group,
  type GroupMember,
  type LineItem,
  type Plan,
  type Subscription,
  type SubscriptionLineItem,
  type SubscriptionPlanPart,
  type SubscriptionRecord,
  type SubscriptionStatus,
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
 * The subscription statuses whose plans are `active` as subscription plans (they grant); the rest
 * (canceled, and Stripe's unpaid and paused, which keep their seats but grant nothing) are `inactive`.
 * The list's `status` filter reads the same table.
 */
export const SUBSCRIPTION_PLAN_RUNNING: readonly SubscriptionStatus[] = SUBSCRIPTION_STATUS_VALUES.filter(
  (x) => LICENSE_STATUSES[SUBSCRIPTION_STATUSES[x].license].grantsAccess,
);

/** The subscription statuses a subscription plan's `status` filter (`active` or `inactive`) names. */
export const subscriptionStatusesOfPlanStatus = (status: 'active' | 'inactive'): SubscriptionStatus[] =>
  SUBSCRIPTION_STATUS_VALUES.filter((x) => SUBSCRIPTION_PLAN_RUNNING.includes(x) === (status === 'active'));

/**
 * One plan a subscription holds as its subscription plan: the first has the subscription's id, an
 * added one its own; the group (the team the seats go to) is the subscription's, for every plan.
 */
export const subscriptionPartView = (
  s: Subscription,
  part: Pick<SubscriptionPlanPart, 'id' | 'planId' | 'seats' | 'createdAt' | 'updatedAt'>,
) => ({
  id: part.id,
  organisation: s.organisationId,
  ownerId: s.customerId,
  groupId: s.id,
  subscriptionId: s.id,
  planId: part.planId,
  seats: part.seats,
  status: SUBSCRIPTION_PLAN_RUNNING.includes(s.status) ? 'active' : 'inactive',
  createdAt: iso(part.createdAt),
  updatedAt: iso(part.updatedAt),
});

/** The subscription's first plan as its subscription plan (with the subscription's id). */
export const subscriptionPlanOf = (s: Subscription) =>
  subscriptionPartView(s, { id: s.id, planId: s.planId, seats: s.quantity, createdAt: s.createdAt, updatedAt: s.updatedAt });

/** Every plan the subscription holds, as subscription plans (a group's expansion). */
export const subscriptionPlansOf = (s: Subscription) => [
  subscriptionPlanOf(s),
  ...s.addedPlans.map((a) =>
    subscriptionPartView(s, { id: a.id, planId: a.planId, seats: a.quantity, createdAt: a.createdAt, updatedAt: a.updatedAt }),
  ),
];

const planWithTag = (p: Plan) => ({ ...catalogPlan(p), tierTag: tierTagView(p.tierTag) });

/** A subscription with what `expand` asked for (`owner`, `subscriptionPlans`). */
export const subscriptionRecordView =
  (expand: Set<string>) =>
  ({ subscription: s, customer, plan, plans }: SubscriptionRecord) => ({
    ...subscriptionView(s, customer, plan),
    ...(expand.has('owner') && customer ? { owner: ownerView(customer) } : {}),
    ...(expand.has('subscriptionPlans')
      ? {
          subscriptionPlans: nestedList(plans, `/api/subscription-plans?subscriptionId=${s.id}`, (part) => ({
            ...subscriptionPartView(s, part),
            plan: part.plan ? planWithTag(part.plan) : null,
          })),
        }
      : {}),
  });

/** A subscription plan with what `expand` asked for (`plan`, `subscription`, `owner`, `subscriptionPlanLineItems`). */
export const subscriptionPlanRecordView =
  (expand: Set<string>, lineItems?: Map<string, SubscriptionLineItem[]>) =>
  ({ record, part }: { record: SubscriptionRecord; part: SubscriptionPlanPart }) => ({
    ...subscriptionPlanRecordBase(expand, record, part),
    ...(lineItems
      ? {
          subscriptionPlanLineItems: nestedList(lineItems.get(part.id) ?? [], `/api/subscription-plans/${part.id}`, (item) => {
            const li = part.plan?.lineItems.find((x) => x.id === item.lineItemId);
            return subscriptionLineItemBase(item, record, part, li);
          }),
        }
      : {}),
  });

const subscriptionPlanRecordBase = (
  expand: Set<string>,
  { subscription: s, customer, plan }: SubscriptionRecord,
  part: SubscriptionPlanPart,
) => ({
  ...subscriptionPartView(s, part),
  ...(expand.has('plan') && part.plan ? { plan: catalogPlan(part.plan) } : {}),
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
const subscriptionLineItemBase = (
  item: SubscriptionLineItem,
  { subscription: s }: SubscriptionRecord,
  part: SubscriptionPlanPart,
  li: LineItem | undefined,
) => ({
  id: item.id,
  organisation: item.organisationId,
  subscriptionPlanId: part.id,
  lineItemPaymentProductId: li?.paymentProductId ?? '',
  type: li?.priceType === 'metered' ? 'metered' : 'unit',
  quantity: li?.priceType === 'per_seat' ? part.seats : 1,
  usageId: null,
  paymentSubscriptionItemId: null,
  paymentPriceId: li?.prices[0]?.paymentPriceId ?? null,
  expiryDate: s.status === 'CANCELED' ? iso(s.canceledAt ?? s.currentPeriodEnd) : s.cancelAtPeriodEnd ? iso(s.currentPeriodEnd) : null,
  createdAt: iso(item.createdAt),
  updatedAt: iso(item.updatedAt),
  ...(li && part.plan ? { lineItem: lineItemView(s.organisationId, part.plan.id)(li) } : {}),
});

/** The same with its subscription plan (and subscription): the detail of a subscription-plan line item. */
export const subscriptionLineItemView = (
  item: SubscriptionLineItem,
  record: SubscriptionRecord,
  part: SubscriptionPlanPart,
  li: LineItem | undefined,
) => ({
  ...subscriptionLineItemBase(item, record, part, li),
  subscriptionPlan: {
    ...subscriptionPartView(record.subscription, part),
    subscription: subscriptionView(record.subscription, record.customer, record.plan),
  },
});
