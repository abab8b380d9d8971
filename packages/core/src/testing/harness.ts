import type { ChangeFeed, Randomness, Tenant, UnitOfWork, WebhookSender } from '..';
import { type CatalogFile, createCore, demoCatalog, type CoreDeps } from '../usecases';
import {
  CountingEventQueue,
  FakePaymentProvider,
  FakeScheme,
  FakeWebhookSigner,
  FixedClock,
  FakeCipher,
  RandomIds,
  SeededRandomness,
} from './fakes';
import { InMemoryUnitOfWork } from './memory';

/** Every use case wired to fakes (or to the given unit of work) by `createCore`, for tests and embedding. */
export function createTestCore(
  options: {
    uow?: UnitOfWork;
    changes?: ChangeFeed;
    webhooks?: WebhookSender;
    random?: Randomness;
    limits?: CoreDeps['limits'];
    freeCheckout?: CoreDeps['freeCheckout'];
  } = {},
) {
  const clock = new FixedClock();
  const payments = new FakePaymentProvider();
  const events = new CountingEventQueue();
  const uow = options.uow ?? new InMemoryUnitOfWork();
  const changes = options.changes ?? (uow instanceof InMemoryUnitOfWork ? uow.changeFeed() : undefined);
  const deps: CoreDeps = {
    uow,
    clock,
    ids: new RandomIds(),
    random: options.random ?? new SeededRandomness(),
    payments,
    scheme: new FakeScheme(),
    cipher: new FakeCipher(),
    events,
    changes,
    webhooks: options.webhooks,
    webhookSigner: new FakeWebhookSigner(),
    limits: options.limits,
    freeCheckout: options.freeCheckout,
  };
  return { ...createCore(deps), deps, uow, clock, payments, events, changes };
}

export type TestCore = ReturnType<typeof createTestCore>;

/**
 * A free checkout as the runtime wires one beside the payment provider (`none`, renewals made by
 * the sweep): free plans and carts of only free plans go to it.
 */
export function fakeFreeCheckout(): NonNullable<CoreDeps['freeCheckout']> {
  return {
    name: 'none',
    renewedBySweep: () => ({}),
    checkoutLink: async () => ({ url: 'http://localhost/free' }),
    purchaseCompleted: async () => ({}),
  };
}

/** A completed purchase of the plan as a provider reports it (customer, subscription, one license per seat). */
export const buyPlan = (core: Pick<TestCore, 'checkout'>, planId: string, quantity = 1, granteeId = 'alice', paymentProvider = 'fake') =>
  core.checkout.completePurchase({
    planId,
    member: 'buyer@example.com',
    email: 'buyer@example.com',
    granteeId,
    quantity,
    currency: 'USD',
    paymentProvider,
    paymentSubscriptionId: null,
    paymentCustomerId: null,
  });

/** The demo catalog plus a second per-seat plan and two usage-based plans, for tests of plan changes. */
export function sampleCatalog(organisation: string, test = false): CatalogFile {
  const base = demoCatalog(organisation, test);
  const [product] = base.products ?? [];
  return {
    ...base,
    products: [
      {
        ...product,
        plans: [
          ...(product.plans ?? []),
          {
            key: 'business',
            displayName: 'Business',
            pricingType: 'paid',
            licenseType: 'perSeat',
            perSeatAmount: 1,
            interval: 'month',
            length: 1,
            prices: { USD: 30, EUR: 28 },
            capabilities: ['edit', 'export', 'admin'],
          },
          {
            key: 'metered',
            displayName: 'Metered',
            pricingType: 'paid',
            licenseType: 'user',
            usageBased: true,
            interval: 'month',
            length: 1,
            prices: { USD: 5 },
            capabilities: ['edit'],
          },
          {
            key: 'metered-pro',
            displayName: 'Metered Pro',
            pricingType: 'paid',
            licenseType: 'user',
            usageBased: true,
            interval: 'month',
            length: 1,
            prices: { USD: 9 },
            capabilities: ['edit', 'export'],
          },
        ],
        pricingTables: (product.pricingTables ?? []).map((t) => ({ ...t, plans: ['free', 'team', 'business'] })),
      },
    ],
  };
}

/** An organisation with the sample catalog imported; returns its tenant and the key -> uuid map. */
export async function seedSample(
  core: TestCore,
  organisation: string,
  test = false,
): Promise<{ tenant: Tenant; keys: Record<string, string> }> {
  const org = await core.apiKeys.ensureOrganisation(organisation);
  const result = await core.importer.apply(sampleCatalog(organisation, test));
  return { tenant: { organisationId: org.id, isTest: test }, keys: result.keys };
}
