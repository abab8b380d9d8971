import { ErrorCodes, fail } from '../errors';
import type { Customer, Id, License, Plan, Product, Subscription } from '../model';
import { assertPlanSellable, isPerSeat, minimumSeats } from './catalog';
import { assertCheckableGranteeId } from './grantee-ids';
import { DEFAULT_MAX_SEATS } from './limits';
import { assertSeatTotal, NewSeats, seatLicense } from './seats';
import { addDays, addInterval } from './time';

export interface AdHocLicenseInput {
  plan: Plan;
  product: Product;
  member: string;
  granteeId: string | null;
  now: Date;
  id: Id;
}

/**
 * A license without payment: for a free plan it is ACTIVE and does not end; for an evaluation plan
 * it is EVALUATION and ends `evalDays` after now. A paid plan without evaluation needs a checkout.
 */
export function createAdHocLicense({ plan, product, member, granteeId, now, id }: AdHocLicenseInput): License {
  assertPlanSellable(plan, product);
  const evaluation = plan.evaluation && plan.evalDays > 0;
  if (plan.pricingType !== 'free' && !evaluation) {
    fail(ErrorCodes.PLAN_NOT_FREE_OR_EVALUATION, 'ad hoc licenses are for free or evaluation plans; use a checkout link for paid plans');
  }
  return {
    id,
    organisationId: plan.organisationId,
    isTest: plan.isTest,
    productId: plan.productId,
    planId: plan.id,
    subscriptionId: null,
    granteeId,
    purchaser: member,
    email: member.includes('@') ? member : null,
    name: null,
    paymentService: 'none',
    type: plan.licenseType,
    status: evaluation ? 'EVALUATION' : 'ACTIVE',
    cancelAtPeriodEnd: false,
    startTime: now,
    endTime: evaluation ? addDays(now, plan.evalDays) : null,
    metadata: {},
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * Gives the license to a grantee, or takes it back with null. A new grantee id must read back in the
 * check; the license's own, sent back unchanged (an id stored before that rule), is kept as it is.
 */
export function assignGrantee(license: License, granteeId: string | null, now: Date): License {
  if (license.status === 'CANCELED') fail(ErrorCodes.LICENSE_CANCELED, 'a canceled license cannot be reassigned');
  if (granteeId !== null && (typeof granteeId !== 'string' || granteeId.trim() === '')) {
    fail(ErrorCodes.VALIDATION_FAILED, 'granteeId must be a non-empty string or null', [
      { property: 'granteeId', error: 'must be a non-empty string or null' },
    ]);
  }
  if (granteeId !== null && granteeId !== license.granteeId) assertCheckableGranteeId('granteeId', granteeId);
  return { ...license, granteeId, updatedAt: now };
}

/**
 * Moves when an ad hoc license ends (v2 `PUT /licenses/:uuid {endTime}`); a seat of a
 * subscription ends with its subscription's period, so it is a conflict; the end must lie ahead.
 */
export function setLicenseEnd(license: License, endTime: Date, now: Date): License {
  if (license.status === 'CANCELED') fail(ErrorCodes.LICENSE_CANCELED, 'a canceled license cannot be changed');
  if (license.subscriptionId !== null)
    fail(ErrorCodes.CONFLICT, `license ${license.id} is a seat of subscription ${license.subscriptionId}: it ends with the subscription`);
  if (Number.isNaN(endTime.getTime()) || endTime.getTime() <= now.getTime())
    fail(ErrorCodes.VALIDATION_FAILED, 'endTime must lie in the future', [{ property: 'endTime', error: 'must lie in the future' }]);
  return { ...license, endTime, updatedAt: now };
}

export function cancelLicense(license: License, now: Date): License {
  if (license.status === 'CANCELED') fail(ErrorCodes.LICENSE_CANCELED, 'the license is already canceled');
  return { ...license, status: 'CANCELED', cancelAtPeriodEnd: false, endTime: now, updatedAt: now };
}

export interface PurchaseInput {
  plan: Plan;
  product: Product;
  customer: Customer;
  granteeId: string | null;
  /** Bought for a group: its members, one seat each in this order (`granteeId` is then unused). */
  seatGrantees?: readonly string[];
  quantity: number;
  currency: string;
  paymentProvider: string;
  paymentSubscriptionId: string | null;
  now: Date;
  newId: () => Id;
  maxSeats?: number;
  /**
   * A payment the provider reports taken (a checkout's completion): the rules of the sale (plan
   * and product sellable, the seat minimum) held when its session was made, and what was paid is
   * recorded even if the catalog changed since. The seats are those paid for.
   */
  completing?: boolean;
}

/**
 * A completed checkout: the subscription (trialing when the plan has trial days) and one license
 * per seat, the first assigned to the grantee.
 */
export function startSubscription(input: PurchaseInput): { subscription: Subscription; licenses: NewSeats } {
  const { plan, product, customer, now } = input;
  let quantity: number;
  if (input.completing) {
    // Integrity only: the plan is the product's, and the seat count is one (bounded below).
    if (plan.productId !== product.id) fail(ErrorCodes.PLAN_NOT_IN_PRODUCT, 'the plan belongs to another product');
    quantity = input.quantity;
    if (!Number.isSafeInteger(quantity) || quantity < 1)
      fail(ErrorCodes.CHECKOUT_QUANTITY_INVALID, 'the seat count must be a whole number of at least 1');
  } else {
    assertPlanSellable(plan, product);
    quantity = isPerSeat(plan) ? input.quantity : 1;
    if (isPerSeat(plan) && quantity < minimumSeats(plan)) {
      fail(ErrorCodes.CHECKOUT_QUANTITY_BELOW_MINIMUM, `the plan needs at least ${minimumSeats(plan)} seat(s)`);
    }
  }
  assertSeatTotal(quantity, input.maxSeats ?? DEFAULT_MAX_SEATS);
  const trialing = (plan.trialDays ?? 0) > 0;
  const periodEnd = trialing ? addDays(now, plan.trialDays as number) : addInterval(now, plan.interval, plan.length);
  const subscription: Subscription = {
    id: input.newId(),
    organisationId: plan.organisationId,
    isTest: plan.isTest,
    productId: product.id,
    planId: plan.id,
    customerId: customer.id,
    granteeId: input.seatGrantees ? (input.seatGrantees[0] ?? null) : input.granteeId,
    email: customer.emailAddress,
    paymentProvider: input.paymentProvider,
    paymentSubscriptionId: input.paymentSubscriptionId,
    type: plan.licenseType,
    quantity,
    status: trialing ? 'TRIALING' : 'ACTIVE',
    currency: input.currency,
    currentPeriodStart: now,
    currentPeriodEnd: periodEnd,
    cancelAtPeriodEnd: false,
    canceledAt: null,
    replacesId: null,
    lineItemIds: plan.lineItems.map((li) => li.id),
    addedPlans: [],
    createdAt: now,
    updatedAt: now,
  };
  const licenses = new NewSeats(
    seatLicense(subscription, plan, customer.value, '', now),
    quantity,
    input.newId,
    input.seatGrantees ?? input.granteeId,
  );
  return { subscription, licenses };
}
