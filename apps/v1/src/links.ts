import {
  isPerSeat,
  lineItemCurrencies,
  pricedIn,
  productCurrencies,
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
  checkout: Pick<CheckoutService, 'validateLink' | 'checkCustomerId' | 'unsellable'>;
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
 * The one currency of a list of links (a pricing table shows one): the one asked, else the
 * product's default (its first if none is marked, as the contract's `currency` default), else, for
 * a product with no currencies of its own (plans priced by their line items), the first one a plan
 * of the list is sold in. Undefined when nothing is priced (free plans only).
 */
export function listCurrency(plans: Plan[], catalog: ProductCatalog, asked: string | undefined): string | undefined {
  if (asked !== undefined) return asked.toUpperCase();
  const linked = productCurrencies(catalog);
  const preset = linked.find((c) => c.link.isDefault) ?? linked[0];
  if (preset) return preset.currency.shortName.toUpperCase();
  for (const plan of plans) {
    const [first] = lineItemCurrencies(plan);
    if (first) return first;
  }
  return undefined;
}

/**
 * Deferred checkout links for the plans of a catalog: checked now, but the checkout session (and
 * the provider's) is created only when the customer follows one (`/checkout/start/:token`), so a
 * pricing table view costs no provider call. Every link is in the list's one currency (`listCurrency`).
 * The request's `customerId` is checked against the tenant's customers here (one read).
 */
export async function deferredCheckoutLinks(
  s: LinkServices,
  tenant: Tenant,
  plans: Plan[],
  catalog: ProductCatalog,
  global: CheckoutLinkRequest,
  perPlan: ReadonlyMap<Id, PlanLinkOptions> = new Map(),
): Promise<Map<Id, string>> {
  // A \`customerId\` is checked when the table is built (400 naming it), not first when a visitor follows a link.
  await s.checkout.checkCustomerId(tenant, global.customerId);
  const out = new Map<Id, string>();
  const currency = listCurrency(plans, catalog, global.currency);
  const paid = (plan: Plan) => plan.pricingType !== 'free';
  // A currency asked that some plan of the list is priced in: the plans not priced in it are listed
  // without a link (as when it is not asked). One that no plan is priced in is refused as before.
  const someSold = currency !== undefined && plans.some((p) => paid(p) && pricedIn(p, currency, catalog.currencies));
  for (const plan of plans) {
    if (someSold && paid(plan) && !pricedIn(plan, currency as string, catalog.currencies)) continue;
    const req = forPlan(plan, { ...global, ...perPlan.get(plan.id) });
    const { options } = s.checkout.validateLink(plan, catalog, req);
    // A plan sold in another currency than the list's (asked without `currency`, a plan not priced
    // in the product's default would fall back to one it is priced in), a paid plan without a price
    // in the list's currency (the page says "Not sold in"), or one Tollgate would not bill as priced
    // there (`unbilledLine`), or one the payment provider cannot sell there (`unsellable`: Stripe, a
    // charging metered line item without a Stripe price), gets no link: the list shows one currency,
    // a followed link would be refused (the visitor's browser would get the 400), and the other
    // plans of the table are still sold.
    // A free plan charges nothing: its link carries the list's currency only when asked (its own fallback could be refused).
    if (currency !== undefined && paid(plan) && options.currency.toUpperCase() !== currency) continue;
    if (!pricedIn(plan, options.currency, catalog.currencies) || unbilledLine(plan, options.currency)) continue;
    if (s.checkout.unsellable(plan, options.currency)) continue;
    const token = s.links.sign(
      {
        organisationId: tenant.organisationId,
        isTest: tenant.isTest,
        planId: plan.id,
        request: currency === undefined || (!paid(plan) && global.currency === undefined) ? req : { ...req, currency },
      } satisfies DeferredCheckout,
      DEFERRED_LINK_TTL_MS,
      s.clock.now(),
    );
    out.set(plan.id, `${s.config.publicUrl}/checkout/start/${token}`);
  }
  return out;
}
