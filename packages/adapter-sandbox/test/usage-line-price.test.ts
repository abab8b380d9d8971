import { randomUUID } from 'node:crypto';
import type { BillingDocument } from '@tollgate/core';
import { aCustomer, aPlan, aProduct, aSubscription, FakeSignedLinks, FixedClock } from '@tollgate/core/testing';
import { SandboxPaymentProvider } from '../src';

// A usage line priced in a fraction of the minor unit says its real unit price, as Stripe's
// `unit_amount_decimal` does (`unit_amount` is null there), beside its exact amount.

const tenant = { organisationId: randomUUID(), isTest: false };
const plan = aPlan(aProduct(tenant));
const s = aSubscription(plan, aCustomer(tenant), { paymentProvider: 'sandbox' });
const provider = new SandboxPaymentProvider({
  publicUrl: 'https://billing.example.com',
  links: new FakeSignedLinks('a link secret for tests'),
  clock: new FixedClock(),
});

type Line = {
  amount: number;
  quantity: number;
  unit_amount_excluding_tax: string;
  price: { unit_amount: number | null; unit_amount_decimal: string };
  plan: { amount: number | null; amount_decimal: string };
};
const linesOf = (documents: BillingDocument[] = []) =>
  documents.flatMap((d) => (d.kind === 'invoice' ? (d.body as { lines: { data: Line[] } }).lines.data : []));

describe('sandbox usage lines', () => {
  it('show a fractional unit price exactly (unit_amount_decimal), and a whole one as unit_amount', () => {
    const usage = [
      { description: 'tokens', quantity: 1e12, unitAmount: 0.0000075, amount: 7_500_000 },
      { description: 'calls', quantity: 12, unitAmount: 10, amount: 120 },
    ].map((l) => ({ ...l, periodStart: s.currentPeriodStart, periodEnd: s.currentPeriodEnd }));
    const outcome = provider.usageBilled(s, plan, usage);
    const [tokens, calls] = linesOf(outcome.documents);
    expect(tokens).toMatchObject({
      amount: 7_500_000,
      quantity: 1e12,
      unit_amount_excluding_tax: '0.0000075',
      price: { unit_amount: null, unit_amount_decimal: '0.0000075' },
      plan: { amount: null, amount_decimal: '0.0000075' },
    });
    expect(calls).toMatchObject({ unit_amount_excluding_tax: '10', price: { unit_amount: 10, unit_amount_decimal: '10' } });
  });
});
