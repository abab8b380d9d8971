// Tollgate inside another team's service: the domain (@tollgate/core) with a database adapter and a
// signer, no Tollgate server. It defines a plan, buys it, and checks a grantee, verifying the signed
// answer the way the service's clients do. `--memory` runs on core's in-memory unit of work instead
// of the embedded PostgreSQL (PGlite).
import { randomUUID, verify } from 'node:crypto';
import { createCore, type CoreDeps, type UnitOfWork } from '@tollgate/core';
import { CountingEventQueue, FakePaymentProvider, InMemoryUnitOfWork } from '@tollgate/core/testing';
import { migrateToLatest, openDatabase, PostgresUnitOfWork } from '@tollgate/adapter-postgres';
import { CryptoRandomness, EcdsaP256Scheme, SecretBox } from '@tollgate/adapter-hmac';

async function main(): Promise<void> {
  const memory = process.argv.includes('--memory');
  let uow: UnitOfWork;
  let close = async () => undefined as void;
  if (memory) uow = new InMemoryUnitOfWork();
  else {
    // openDatabase({ url: process.env.DATABASE_URL }) for a PostgreSQL server; no url: PGlite in memory.
    const database = openDatabase({ url: process.env.DATABASE_URL });
    await migrateToLatest(database.db);
    uow = new PostgresUnitOfWork(database.db);
    close = () => database.close();
  }
  const deps: CoreDeps = {
    uow,
    clock: { now: () => new Date(), monotonicMs: () => performance.now() },
    ids: { newId: () => randomUUID() },
    random: new CryptoRandomness(),
    // Your payment provider goes here (Stripe: @tollgate/adapter-stripe). This example records the
    // purchase the way the provider's "paid" webhook would, so it needs none.
    payments: new FakePaymentProvider(),
    scheme: new EcdsaP256Scheme(),
    cipher: new SecretBox(process.env.TOLLGATE_SECRET ?? 'an example secret, not for production'),
    events: new CountingEventQueue(),
  };
  const core = createCore(deps);

  // 1. A vendor organisation and its catalog: one product, one per-seat plan.
  const org = await core.apiKeys.ensureOrganisation('example-vendor');
  const { keys } = await core.importer.apply({
    organisation: 'example-vendor',
    products: [
      {
        key: 'notes',
        name: 'notes-app',
        currencies: ['USD'],
        capabilities: ['edit', 'export'],
        plans: [
          {
            key: 'team',
            displayName: 'Team',
            pricingType: 'paid',
            licenseType: 'perSeat',
            perSeatAmount: 2,
            prices: { USD: 12 },
            capabilities: ['edit', 'export'],
          },
        ],
      },
    ],
  });
  const tenant = { organisationId: org.id, isTest: false };

  // 2. A customer buys three seats; the first license goes to alice.
  const purchase = await core.checkout.completePurchase({
    planId: keys['plans.notes.team'],
    member: 'buyer@example.com',
    email: 'buyer@example.com',
    granteeId: 'alice',
    quantity: 3,
    currency: 'USD',
    paymentProvider: 'fake',
    paymentSubscriptionId: null,
    paymentCustomerId: null,
  });

  // 3. The question asked on every request: what may alice do? (bob has no seat yet)
  const request = { productId: keys['products.notes'], graceDays: 0, encoding: 'der' as const };
  const alice = await core.checks.check(tenant, { ...request, granteeIds: ['alice'] });
  const bob = await core.checks.check(tenant, { ...request, granteeIds: ['bob'] });
  if (!alice) throw new Error('alice holds a license: the check must answer');
  const key = await core.signing.current(tenant);
  const pem = core.signing.publicKeyPem(key);
  const verified =
    !!pem && verify('sha256', Buffer.from(alice.capsHashed, 'utf8'), { key: pem, dsaEncoding: 'der' }, Buffer.from(alice.signature, 'hex'));
  console.log(
    JSON.stringify({
      store: memory ? 'memory' : 'pglite',
      subscription: purchase.subscription.id,
      alice: alice.capabilities,
      signatureVerified: verified,
      bob: bob?.capabilities ?? null,
    }),
  );
  await close();
  if (!verified || bob !== null || alice.capabilities.join(',') !== 'edit,export') process.exit(1);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
