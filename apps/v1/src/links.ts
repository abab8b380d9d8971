import {
  isPerSeat,
  pricedIn,
  unbilledLine,
  type CheckoutLinkRequest,
  type CheckoutService,
  type Clock,
  type Id,
  type Plan,
  type ProductCatalog,
  type SignedLinks,
  type Tenant,
} from '@tollgate/core';

/** What a deferred checkout link carries (signed). */
export interface DeferredCheckout {
  organisationId: Id;
  isTest: boolean;
  planId: Id;
  request: CheckoutLinkRequest;
}

/** How long a pricing table's checkout links stay valid. */
export const DEFERRED_LINK_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** What a pricing table's caller may set for one plan instead of the global value. */
export type PlanLinkOptions = Partial<Pick<CheckoutLinkRequest, 'granteeId' | 'successUrl' | 'cancelUrl'>>;

export interface LinkServices {
  checkout: Pick<CheckoutService, 'validateLink'>;
  links: SignedLinks;
  clock: Clock;
  config: { publicUrl: string };
}

/**
 * A table's seat options (the seat choice, a seat count) are for its per-seat plans: a table that
 * mixes a free plan with a per-seat one can still let the customer choose seats.
 */
function forPlan(plan: Plan, req: CheckoutLinkRequest): CheckoutLinkRequest {
  if (isPerSeat(plan)) return req;
  const { changeQuantity: _choice, quantity: _seats, ...rest } = req;
  void [_choice, _seats];
  return rest;
}

/**
 * Deferred checkout links for the plans of a catalog: checked now, but the checkout session (and
 * the provider's) is created only when the customer follows one (`/checkout/start/:token`), so a
 * pricing table view costs no provider call.
 */
export function deferredCheckoutLinks(
  s: LinkServices,
  tenant: Tenant,
  plans: Plan[],
  catalog: ProductCatalog,
  global: CheckoutLinkRequest,
  perPlan: ReadonlyMap<Id, PlanLinkOptions> = new Map(),
): Map<Id, string> {
  const out = new Map<Id, string>();
  for (const plan of plans) {
    const req = forPlan(plan, { ...global, ...perPlan.get(plan.id) });
    const { options } = s.checkout.validateLink(plan, catalog, req);
    // A paid plan without a price in the list's currency (the page says "Not sold in"), or one
    // Tollgate would not bill as priced there (`unbilledLine`), gets no link: followed, it would be
    // refused, and the other plans of the table are still sold.
    if (!pricedIn(plan, options.currency, catalog.currencies) || unbilledLine(plan, options.currency)) continue;
    const token = s.links.sign(
      { organisationId: tenant.organisationId, isTest: tenant.isTest, planId: plan.id, request: req } satisfies DeferredCheckout,
      DEFERRED_LINK_TTL_MS,
      s.clock.now(),
    );
    out.set(plan.id, `${s.config.publicUrl}/checkout/start/${token}`);
  }
  return out;
}
