/* The contract every payment provider keeps (fake, sandbox, Stripe under nock): links are absolute
   URLs, outcomes are documents of the subscription, invoice lists are consistent, and a provider
   failure surfaces as an error rather than a silent success. */
import type { Customer, Plan, Product, Subscription } from '../../model';
import type { CheckoutRequest, PaymentProvider, ProviderOutcome } from '../../ports';

export interface PaymentProviderWorld {
  provider: PaymentProvider;
  product: Product;
  plan: Plan;
  customer: Customer;
  /** A subscription this provider bills (with its provider ids where it needs them). */
  subscription: Subscription;
  /** Makes the provider's next call fail (network, 5xx); absent for providers that cannot fail. */
  failNext?: () => void;
}

const absoluteUrl = (url: string) => {
  const u = new URL(url);
  expect(['http:', 'https:']).toContain(u.protocol);
};

function expectOutcome(outcome: ProviderOutcome, s: Subscription): void {
  for (const d of outcome.documents ?? []) {
    expect(['invoice', 'payment_method']).toContain(d.kind);
    expect(d.subscriptionId).toBe(s.id);
    expect(d.organisationId).toBe(s.organisationId);
    expect(typeof d.body.id).toBe('string');
  }
}

export function describePaymentProviderContract(name: string, world: () => PaymentProviderWorld | Promise<PaymentProviderWorld>): void {
  describe(`${name}: payment provider`, () => {
    let w: PaymentProviderWorld;
    beforeEach(async () => {
      w = await world();
    });
    const checkoutRequest = (): CheckoutRequest => ({
      sessionId: 'b8f3c1de-0000-4000-8000-00000000c0de',
      product: w.product,
      plan: w.plan,
      options: {
        promoCode: null,
        allowPromoCode: false,
        customerEmail: null,
        customerId: null,
        currency: 'USD',
        automaticTax: false,
        quantity: 2,
        changeQuantity: false,
      },
      granteeId: 'alice',
      member: 'm@example.com',
      successUrl: 'https://vendor.example.com/ok',
      cancelUrl: 'https://vendor.example.com/no',
      unitAmount: 1200,
    });

    it('has a name for the records it bills', () => {
      expect(w.provider.name).toMatch(/^[a-z]+$/);
    });

    it('hands out absolute links: checkout, update payment, portal, cancel', async () => {
      absoluteUrl((await w.provider.checkoutLink(checkoutRequest())).url);
      absoluteUrl((await w.provider.updatePaymentLink(w.subscription, w.customer)).url);
      absoluteUrl((await w.provider.portalLink(w.subscription, w.customer)).url);
      absoluteUrl((await w.provider.cancelLink(w.subscription, w.customer)).url);
    });

    it('answers seat and plan changes and purchases with documents of the subscription only', async () => {
      const s = w.subscription;
      expectOutcome(await w.provider.changeSeats(s, w.plan, s.quantity + 2, 'always_invoice', 1200), s);
      expectOutcome(
        await w.provider.changePlan({
          subscription: s,
          from: w.plan,
          to: { ...w.plan, id: 'b8f3c1de-0000-4000-8000-0000000000aa' },
          proration: 'create_prorations',
          fromUnitAmount: 1200,
          toUnitAmount: 2400,
        }),
        s,
      );
      expectOutcome(
        await w.provider.purchaseCompleted({
          session: {
            id: 'b8f3c1de-0000-4000-8000-00000000c0de',
            organisationId: s.organisationId,
            isTest: s.isTest,
            productId: s.productId,
            planId: s.planId,
            granteeId: 'alice',
            groupId: null,
            extraItems: [],
            member: 'm@example.com',
            successUrl: 'https://vendor.example.com/ok',
            cancelUrl: 'https://vendor.example.com/no',
            options: checkoutRequest().options,
            provider: w.provider.name,
            providerSessionId: null,
            status: 'completed',
            subscriptionId: s.id,
            createdAt: s.createdAt,
            completedAt: s.createdAt,
          },
          subscription: s,
          plan: w.plan,
          customer: w.customer,
          unitAmount: 1200,
        }),
        s,
      );
    });

    it('cancels now or at period end, and reactivates', async () => {
      await expect(w.provider.cancel(w.subscription, 'end')).resolves.toBeUndefined();
      await expect(w.provider.reactivate(w.subscription)).resolves.toBeUndefined();
      await expect(w.provider.cancel(w.subscription, 'now')).resolves.toBeUndefined();
    });

    it('lists invoices with first and last naming the ends of the list, and gives a payment method or none', async () => {
      const list = await w.provider.listInvoices(w.subscription, []);
      expect(typeof list.hasMore).toBe('boolean');
      expect(list.first).toBe(list.data[0]?.id ?? null);
      expect(list.last).toBe(list.data[list.data.length - 1]?.id ?? null);
      for (const invoice of list.data) expect(typeof invoice.id).toBe('string');
      const pm = await w.provider.paymentMethod(w.subscription, w.customer, []);
      if (pm !== null) expect(typeof pm.id).toBe('string');
    });

    it('surfaces a failure of the provider as an error, not a success', async () => {
      if (!w.failNext) return void expect(w.provider.name).toBe('sandbox');
      w.failNext();
      await expect(w.provider.changeSeats(w.subscription, w.plan, w.subscription.quantity + 1, 'none', 1200)).rejects.toBeDefined();
    });
  });
}
