import { invalid } from '../errors';
import type { Interval, Plan } from '../model';
import { isPerSeat, minimumSeats } from './catalog';
import { seatsForGroup } from './people';

/** What a quick checkout asks for (the published catalog API's `POST /api/checkout`), as typed by the edge. */
export interface QuickCheckoutRequest {
  planId: string;
  owner: string;
  grantee?: string;
  interval: Interval | null;
  intervalCount: number | null;
  currency?: string;
  metadata?: Record<string, { quantity: number }>;
  email?: string;
  successUrl?: string;
  cancelUrl?: string;
  allowPromoCodes?: boolean;
  automaticTax?: boolean;
  collectBillingAddress?: boolean;
  collectShippingAddress?: boolean;
  cardPrefillPreference?: 'none' | 'always' | 'choice';
  trialPeriodDays?: number;
}

/**
 * The seat count a quick checkout asks for: the quantity its `metadata` gives the plan's per-seat
 * line item (by slug). A slug the plan does not have is refused, naming it; quantities of other
 * line items do not change what is sold here (a plan is sold whole).
 */
export function quickCheckoutQuantity(plan: Plan, metadata: QuickCheckoutRequest['metadata']): number | undefined {
  let seats: number | undefined;
  for (const [slug, { quantity }] of Object.entries(metadata ?? {})) {
    const li = plan.lineItems.find((l) => l.slug === slug);
    if (!li) return invalid(`metadata.${slug}`, 'the plan has no line item of this slug');
    if (!Number.isInteger(quantity) || quantity < 1) return invalid(`metadata.${slug}.quantity`, 'must be a whole number from 1');
    if (li.priceType === 'per_seat') seats = quantity;
  }
  return seats;
}

/**
 * A quick checkout names the billing interval it expects: it must be the plan's (a one-off request,
 * null, for a recurring plan is refused, and the other way round), so the buyer pays what was shown.
 */
export function assertPlanInterval(plan: Plan, interval: Interval | null, intervalCount: number | null): void {
  const recurring = plan.lineItems.length ? plan.lineItems.some((l) => l.intervalType === 'recurring') : true;
  if (interval === null) {
    if (recurring) invalid('interval', `the plan is billed every ${plan.length} ${plan.interval}(s), not once`);
    return;
  }
  if (interval !== plan.interval) invalid('interval', `the plan is billed by ${plan.interval}`);
  if (intervalCount !== null && intervalCount !== plan.length)
    invalid('intervalCount', `the plan is billed every ${plan.length} ${plan.interval}(s)`);
}

/** The seats a checkout for a group of `members` sells (see `seatsForGroup`): the quantity `metadata` asks, checked or grown. */
export function groupSeats(plan: Plan, members: number, metadata: QuickCheckoutRequest['metadata']): number | undefined {
  return seatsForGroup(members, isPerSeat(plan), minimumSeats(plan), quickCheckoutQuantity(plan, metadata));
}
