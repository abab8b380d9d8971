/**
 * Response schemas of the people and their subscriptions (owners, subscriptions, subscription
 * plans, grantees, groups), written from the published catalog document's component schemas
 * (docs/reference/published-catalog-api.md 2.1-2.6) with the contract's neutral field names.
 */
import { bool, date, int, ndate, str, uuid } from '@tollgate/http';
import { lineItemSchema, nestedListOf, object, planProps, tierTagSchema } from './response-schemas';

const nstr = { type: ['string', 'null'] } as const;
const stamps = { createdAt: date, updatedAt: date };
const interval = { enum: [null, 'day', 'week', 'month', 'year'] };

export const ownerSchema = object({
  id: uuid,
  organisation: uuid,
  value: str,
  paymentCustomerId: nstr,
  emailAddress: nstr,
  ...stamps,
});

export const subscriptionProps = {
  id: uuid,
  organisation: uuid,
  ownerId: uuid,
  paymentSubscriptionId: nstr,
  status: str,
  customerId: nstr,
  interval,
  intervalCount: { type: ['integer', 'null'] },
  currencyShortCode: nstr,
  cancelAtPeriodEnd: bool,
  isPerpetual: bool,
  isServiceOnly: bool,
  startDate: date,
  cancelledAt: ndate,
  ...stamps,
};
export const subscriptionSchema = object(subscriptionProps);

export const subscriptionPlanProps = {
  id: uuid,
  organisation: uuid,
  ownerId: uuid,
  groupId: uuid,
  subscriptionId: uuid,
  planId: { anyOf: [uuid, { type: 'null' }] },
  seats: int,
  status: { enum: ['active', 'inactive'] },
  ...stamps,
};
const planWithTagSchema = object({ ...planProps, tierTag: { anyOf: [tierTagSchema, { type: 'null' }] } });

/** A subscription in a list or detail: `owner` and `subscriptionPlans` when expanded. */
export const subscriptionItemSchema = object(subscriptionProps, {
  owner: ownerSchema,
  subscriptionPlans: nestedListOf(object(subscriptionPlanProps, { plan: { anyOf: [planWithTagSchema, { type: 'null' }] } })),
});

const subscriptionLineItemProps = {
  id: uuid,
  organisation: uuid,
  subscriptionPlanId: uuid,
  lineItemPaymentProductId: str,
  type: { enum: ['unit', 'metered'] },
  quantity: int,
  usageId: nstr,
  paymentSubscriptionItemId: nstr,
  paymentPriceId: nstr,
  expiryDate: ndate,
  ...stamps,
};

/** A subscription-plan line item: a subscription's line item, with its subscription plan (and subscription) and the line item. */
export const subscriptionLineItemSchema = object(subscriptionLineItemProps, {
  subscriptionPlan: object({ ...subscriptionPlanProps, subscription: subscriptionSchema }),
  lineItem: lineItemSchema,
});

/** A subscription plan: `plan`, `subscription`, `owner` and `subscriptionPlanLineItems` when expanded. */
export const subscriptionPlanItemSchema = object(subscriptionPlanProps, {
  plan: object(planProps),
  subscription: subscriptionSchema,
  owner: ownerSchema,
  subscriptionPlanLineItems: nestedListOf(object(subscriptionLineItemProps, { lineItem: lineItemSchema })),
});

/** The answer of a batch: how many succeeded, failed and were skipped, and each id's outcome. */
export const batchResultSchema = object({
  total: int,
  succeeded: int,
  failed: int,
  skipped: int,
  results: {
    type: 'array',
    items: object({ id: uuid, status: { enum: ['succeeded', 'failed', 'skipped'] } }, { reason: str }),
  },
});

export const granteeSchema = object({ id: uuid, organisation: uuid, name: nstr, granteeId: str, ...stamps });
export const groupSchema = object({ id: uuid, organisation: uuid, ownerId: uuid, name: nstr, ...stamps });
export const membershipSchema = object({ id: uuid, organisation: uuid, granteeId: uuid, groupId: uuid, ...stamps });
