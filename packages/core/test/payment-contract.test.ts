import { randomUUID } from 'node:crypto';
import { aCustomer, aPlan, aProduct, aSubscription, describePaymentProviderContract, FakePaymentProvider } from '../src/testing';

describePaymentProviderContract('fake', () => {
  const tenant = { organisationId: randomUUID(), isTest: false };
  const product = aProduct(tenant);
  const plan = aPlan(product, { licenseType: 'perSeat' });
  const customer = aCustomer(tenant);
  const provider = new FakePaymentProvider();
  return {
    provider,
    product,
    plan,
    customer,
    subscription: aSubscription(plan, customer),
    failNext: () => void (provider.failNext = new Error('outage')),
  };
});
