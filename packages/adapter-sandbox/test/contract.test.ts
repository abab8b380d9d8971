import { randomUUID } from 'node:crypto';
import {
  aCustomer,
  aPlan,
  aProduct,
  aSubscription,
  describePaymentProviderContract,
  FakeSignedLinks,
  FixedClock,
} from '@tollgate/core/testing';
import { SandboxPaymentProvider } from '../src';

describePaymentProviderContract('sandbox', () => {
  const tenant = { organisationId: randomUUID(), isTest: false };
  const product = aProduct(tenant);
  const plan = aPlan(product, { licenseType: 'perSeat' });
  const customer = aCustomer(tenant);
  const provider = new SandboxPaymentProvider({
    publicUrl: 'https://billing.example.com',
    links: new FakeSignedLinks('a link secret for tests'),
    clock: new FixedClock(),
  });
  return { provider, product, plan, customer, subscription: aSubscription(plan, customer, { paymentProvider: 'sandbox', quantity: 2 }) };
});
