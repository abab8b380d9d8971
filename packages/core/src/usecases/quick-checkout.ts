import { ErrorCodes, fail } from '../errors';
import type { Tenant } from '../model';
import { assertPlanInterval, groupSeats, quickCheckoutQuantity, type QuickCheckoutRequest } from '../domain/quick-checkout';
import { GROUP_PREFIX } from '../domain/people';
import { purchaseFor } from './people/shared';
import { assertAccessible } from '../domain/tenancy';
import { assertCheckableGranteeId } from '../domain/grantee-ids';
import type { CheckoutService } from './checkout';
import type { CoreDeps } from './deps';

/**
 * The published catalog API's quick checkout: a checkout link for one plan and owner, with the
 * product's checkout settings as defaults. The owner is the buyer (the checkout's member); the
 * grantee, when none is named, is the owner; a group named as the grantee gets the seats, one per
 * member (docs/decisions.md, "A group as the grantee").
 */
export class QuickCheckout {
  constructor(
    private readonly deps: Pick<CoreDeps, 'uow'>,
    private readonly checkout: CheckoutService,
  ) {}

  async link(tenant: Tenant, req: QuickCheckoutRequest): Promise<{ url: string }> {
    const { plan, product, who } = await this.deps.uow.read(async (r) => {
      const p = assertAccessible(await r.plans.get(req.planId), tenant, 'plan');
      return {
        plan: p,
        product: (await r.products.get(p.productId)) ?? fail(ErrorCodes.PRODUCT_NOT_FOUND, 'product not found'),
        who: await purchaseFor(r, tenant, req.grantee),
      };
    });
    assertPlanInterval(plan, req.interval, req.intervalCount);
    // Without a grantee the owner gets the seat: its value must read back in the check too.
    if (!who.group && who.granteeId === null)
      assertCheckableGranteeId('owner', req.owner, { because: 'gets the seat when no grantee is named', fix: 'name a grantee' });
    const quantity = who.group ? groupSeats(plan, who.members.length, req.metadata) : quickCheckoutQuantity(plan, req.metadata);
    return this.checkout.checkoutLink(tenant, plan.id, {
      successUrl: req.successUrl ?? product.settings.successUrl ?? undefined,
      cancelUrl: req.cancelUrl ?? product.settings.cancelUrl ?? undefined,
      granteeId: who.group ? `${GROUP_PREFIX}${who.group.id}` : (who.granteeId ?? req.owner),
      ...(who.group ? { groupId: who.group.id } : {}),
      member: req.owner,
      customerEmail: req.email,
      currency: req.currency,
      allowPromoCode: req.allowPromoCodes ?? product.settings.allowPromoCodes,
      automaticTax: req.automaticTax ?? product.settings.automaticTax,
      ...(quantity !== undefined ? { quantity } : {}),
    });
  }
}
