import { randomUUID } from 'node:crypto';
import type { BillingDocument, ProviderOutcome } from '@tollgate/core';
import { aCustomer, aPlan, aProduct, aSubscription, FakeSignedLinks, FixedClock } from '@tollgate/core/testing';
import { SandboxPaymentProvider } from '../src';

const tenant = { organisationId: randomUUID(), isTest: false };
const product = aProduct(tenant);
const plan = aPlan(product, { licenseType: 'perSeat' });
const other = aPlan(product, { licenseType: 'perSeat' });
const customer = aCustomer(tenant, { value: 'member-7@example.com', emailAddress: 'billing@example.com' });
const provider = new SandboxPaymentProvider({
  publicUrl: 'https://billing.example.com',
  links: new FakeSignedLinks('a link secret for tests'),
  clock: new FixedClock(),
});
const s = aSubscription(plan, customer, { paymentProvider: 'sandbox', quantity: 2 });
const usage = [
  { description: 'API calls', amount: 120, quantity: 12, unitAmount: 10, periodStart: s.currentPeriodStart, periodEnd: s.currentPeriodEnd },
];

const metadataOf = (o: ProviderOutcome | false) =>
  ((o as ProviderOutcome).documents ?? [])
    .filter((d) => d.kind === 'invoice')
    .map((d: BillingDocument) => (d.body as { subscription_details: { metadata: Record<string, unknown> } }).subscription_details.metadata);

describe('sandbox invoices after the first', () => {
  it('name the member the customer is (as the first invoice does), never the customer record id', async () => {
    const first = await provider.purchaseCompleted({ subscription: s, plan, customer, unitAmount: 1200 } as never);
    const member = 'member-7@example.com';
    expect(metadataOf(first)[0]).toMatchObject({ member });
    const later = [
      provider.renewedBySweep(s, plan, 1200, [], [], member),
      provider.usageBilled(s, plan, usage as never, member),
      await provider.changePlan({
        subscription: s,
        from: plan,
        to: other,
        proration: 'always_invoice',
        fromUnitAmount: 1200,
        toUnitAmount: 2400,
        member,
      }),
      await provider.changeSeats(s, plan, 3, 'always_invoice', 1200, member),
      await provider.addPlan({ subscription: s, plan: other, quantity: 1, unitAmount: 900, proration: 'always_invoice', member }),
      await provider.removePlan({ subscription: s, plan: other, quantity: 1, unitAmount: 900, proration: 'always_invoice', member }),
    ];
    for (const o of later) expect(metadataOf(o)).toEqual([{ granteeId: s.granteeId, member }]);
  });

  it('show no internal id when the member is not given', () => {
    const [withEmail] = metadataOf(provider.renewedBySweep(s, plan, 1200));
    expect(withEmail.member).toBe('billing@example.com');
    const noEmail = { ...s, email: null };
    const [metadata] = metadataOf(provider.renewedBySweep(noEmail, plan, 1200));
    expect(metadata.member).not.toBe(s.customerId);
    expect(metadata.member).toBe('');
  });
});
