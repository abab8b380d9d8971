import { ErrorCodes, fail } from '../../errors';
import type { Id, Tenant } from '../../model';
import { effectiveStatus } from '../../domain/subscription';
import type { CoreDeps } from '../deps';
import { afterProvider, billedByProvider, loadOwned, saveOutcome } from './shared';

/**
 * Coupons of a subscription (v2/v3 `POST|PUT /subscriptions/:uuid/coupons`), kept by the payment
 * provider: Stripe applies them to the subscription's discounts; the sandbox keeps them as its
 * documents. The provider is called outside any transaction; what it asks us to keep is written after.
 */
export class SubscriptionCoupons {
  constructor(private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'payments' | 'freeCheckout'>) {}

  async apply(tenant: Tenant, id: Id, code: string): Promise<void> {
    const { payments } = this.deps;
    if (!payments.applyCoupon) return fail(ErrorCodes.PAYMENT_NOT_AVAILABLE, `the payment provider ${payments.name} takes no coupons`);
    const { s, stored } = await this.load(tenant, id);
    if (effectiveStatus(s, this.deps.clock.now()) === 'CANCELED') fail(ErrorCodes.SUBSCRIPTION_CANCELED, 'the subscription is canceled');
    const outcome = await payments.applyCoupon(s, code, stored);
    await afterProvider(this.deps.uow, billedByProvider(s, this.deps.freeCheckout), () =>
      this.deps.uow.run((r) => saveOutcome(r, outcome)),
    );
  }

  async remove(tenant: Tenant, id: Id, code: string): Promise<void> {
    const { payments } = this.deps;
    if (!payments.removeCoupon) return fail(ErrorCodes.PAYMENT_NOT_AVAILABLE, `the payment provider ${payments.name} takes no coupons`);
    const { s, stored } = await this.load(tenant, id);
    const outcome = await payments.removeCoupon(s, code, stored);
    await afterProvider(this.deps.uow, billedByProvider(s, this.deps.freeCheckout), () =>
      this.deps.uow.run((r) => saveOutcome(r, outcome)),
    );
  }

  private load(tenant: Tenant, id: Id) {
    return this.deps.uow.run(async (r) => {
      const s = await loadOwned(r, tenant, id, false);
      return { s, stored: await r.billingDocuments.list(s.id, 'coupon') };
    });
  }
}
