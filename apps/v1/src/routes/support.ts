import type { CheckoutLinkRequest, Clock, Core, License, LicensePage, Plan, ProductCatalog, SignedLinks, Tenant } from '@tollgate/core';
import { licenseViews } from '@tollgate/http';
import { deferredCheckoutLinks, type PlanLinkOptions } from '../links';

/** What the v1 generation needs: use cases, the link signer and clock (deferred checkout links), its public address. */
export interface V1Services {
  core: Pick<Core, 'apiKeys' | 'queries' | 'checkout' | 'subscriptions' | 'seats' | 'licenses' | 'checks' | 'worker' | 'signing' | 'usage'>;
  links: SignedLinks;
  clock: Clock;
  config: { publicUrl: string };
}

const str = { type: 'string' } as const;
const bool = { enum: ['true', 'false'] } as const;

/** The checkout options every link-making query takes. */
export const checkoutOptionProps = {
  promoCode: str,
  allowPromoCode: bool,
  customerEmail: str,
  customerId: str,
  currency: str,
  automaticTax: bool,
} as const;

/** The deferred checkout links of a list of plans (the pricing tables and `expand=generateCheckoutLinks`). */
export const deferredLinksOf =
  ({ core, links, clock, config }: V1Services) =>
  (tenant: Tenant, plans: Plan[], catalog: ProductCatalog, req: CheckoutLinkRequest, perPlan?: Map<string, PlanLinkOptions>) =>
    deferredCheckoutLinks({ checkout: core.checkout, links, clock, config }, tenant, plans, catalog, req, perPlan);

/** Licenses read (not written: a write's answer carries its capabilities) as v1 views, with the capabilities of their plans. */
export async function licenseViewsOf(licenses: Pick<Core['licenses'], 'capabilitiesOf'>, ls: License[]) {
  return licenseViews({ licenses: ls, capabilities: await licenses.capabilitiesOf(ls) });
}

/** Licenses as v1 views, page by page (constant memory whatever their number). */
export async function* licenseViewPages(pages: AsyncIterable<LicensePage>): AsyncGenerator<unknown[]> {
  for await (const p of pages) yield licenseViews(p);
}
