import { ErrorCodes, fail } from '../errors';
import type { Customer, Id, License, Plan, Subscription, Tenant } from '../model';
import { assertPlanSellable } from '../domain/catalog';
import { assertAbsoluteUrl, resolveCheckoutOptions, type CheckoutOptionsInput } from '../domain/checkout';
import { startSubscription } from '../domain/license';
import { assertAccessible } from '../domain/tenancy';
import type { Repositories } from '../ports';
import type { CoreDeps } from './deps';
import { loadCurrencies, loadProductCatalog, type ProductCatalog } from './catalog-queries';

export interface CheckoutLinkRequest extends CheckoutOptionsInput {
  successUrl?: string;
  cancelUrl?: string;
  granteeId?: string;
  member?: string;
}

export interface PurchaseRequest {
  planId: Id;
  member: string;
  email: string | null;
  granteeId: string;
  quantity: number;
  currency: string;
  paymentProvider: string;
  paymentSubscriptionId: string | null;
  paymentCustomerId: string | null;
}

const required = (name: string, value: string | undefined): string => {
  if (value === undefined || value.trim() === '') fail(ErrorCodes.VALIDATION_FAILED, `${name} is required`, [{ property: name, error: 'is required' }]);
  return value as string;
};

/** Checkout links and completed purchases. */
export class CheckoutService {
  constructor(private readonly deps: CoreDeps) {}

  /** A checkout link for the plan (validated against the checkout option set rules). */
  async checkoutLink(tenant: Tenant, planId: Id, req: CheckoutLinkRequest): Promise<{ url: string }> {
    const { plan, catalog } = await this.deps.uow.run(async (r) => {
      const p = assertAccessible(await r.plans.get(planId), tenant, ErrorCodes.PLAN_NOT_FOUND, 'plan');
      return { plan: p, catalog: await loadProductCatalog(r, tenant, p.productId) };
    });
    return this.linkFor(plan, catalog, req);
  }

  /** A checkout link for a plan already loaded with its catalog (pricing tables build many). */
  async linkFor(plan: Plan, catalog: ProductCatalog, req: CheckoutLinkRequest): Promise<{ url: string }> {
    const successUrl = assertAbsoluteUrl('successUrl', req.successUrl);
    const cancelUrl = assertAbsoluteUrl('cancelUrl', req.cancelUrl);
    const granteeId = required('granteeId', req.granteeId);
    const member = required('member', req.member);
    assertPlanSellable(plan, catalog.product);
    const options = resolveCheckoutOptions(req, plan, catalog.product, catalog.currencies);
    return this.deps.payments.checkoutLink({ sessionId: this.deps.ids.newId(), product: catalog.product, plan, options, granteeId, member, successUrl, cancelUrl });
  }

  /** Records a paid (or free) checkout: customer, subscription and one license per seat, in one transaction. */
  async completePurchase(req: PurchaseRequest): Promise<{ subscription: Subscription; licenses: License[] }> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      if (req.paymentSubscriptionId) {
        const existing = await r.subscriptions.findByPaymentId(req.paymentSubscriptionId);
        if (existing) return { subscription: existing, licenses: await r.licenses.listBySubscription(existing.id) };
      }
      const plan = (await r.plans.get(req.planId)) ?? fail(ErrorCodes.PLAN_NOT_FOUND, 'plan not found');
      const product = (await r.products.get(plan.productId)) ?? fail(ErrorCodes.PRODUCT_NOT_FOUND, 'product not found');
      const currencies = await loadCurrencies(r);
      const currency = resolveCheckoutOptions({ currency: req.currency }, plan, product, currencies).currency;
      const customer = await this.customerFor(r, plan, req, now);
      const result = startSubscription({
        plan, product, customer, granteeId: req.granteeId, quantity: req.quantity, currency,
        paymentProvider: req.paymentProvider, paymentSubscriptionId: req.paymentSubscriptionId, now, newId: () => this.deps.ids.newId(),
      });
      await r.subscriptions.save(result.subscription);
      await r.licenses.saveMany(result.licenses);
      return result;
    });
  }

  private async customerFor(r: Repositories, plan: Plan, req: PurchaseRequest, now: Date): Promise<Customer> {
    const tenant = { organisationId: plan.organisationId, isTest: plan.isTest };
    const existing = await r.customers.findByValue(tenant, req.member);
    const customer: Customer = existing
      ? { ...existing, emailAddress: req.email ?? existing.emailAddress, paymentCustomerId: req.paymentCustomerId ?? existing.paymentCustomerId, updatedAt: now }
      : { id: this.deps.ids.newId(), ...tenant, value: req.member, emailAddress: req.email, paymentCustomerId: req.paymentCustomerId, createdAt: now, updatedAt: now };
    await r.customers.save(customer);
    return customer;
  }
}
