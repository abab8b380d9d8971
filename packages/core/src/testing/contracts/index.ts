/* Contract suites: one per port, run against the in-memory fake and every real adapter.
   They use jest's globals (describe/it/expect) and create fresh organisations, so several suites
   may share one database. */
import { randomUUID } from 'node:crypto';
import type { OutboxDelivery, OutboxEvent, Organisation, Repositories, Tenant, UnitOfWork, WebhookEndpoint } from '../..';
import { hashApiKey } from '../../usecases/api-keys';
import { encodeCursor } from '../../support/pagination';
import { T0, aCustomer, aLicense, aPlan, aProduct, aSubscription, aTenant, anEvent, anOrganisation, at } from '../fixtures';

export type UnitOfWorkFactory = () => UnitOfWork;

async function withOrg(uow: UnitOfWork, over: Partial<Organisation> = {}) {
  const org = anOrganisation(over);
  await uow.run((r) => r.organisations.save(org));
  return org;
}

const tx = <T>(uow: UnitOfWork, fn: (r: Repositories) => Promise<T>) => uow.run(fn);

export function describeOrganisationAndKeyContracts(name: string, uow: UnitOfWorkFactory): void {
  describe(`${name}: organisations and API keys`, () => {
    it('saves, gets and finds an organisation by name', async () => {
      const org = await withOrg(uow());
      expect(await tx(uow(), (r) => r.organisations.get(org.id))).toEqual(org);
      expect(await tx(uow(), (r) => r.organisations.findByName(org.name))).toEqual(org);
      expect(await tx(uow(), (r) => r.organisations.get(randomUUID()))).toBeUndefined();
      expect(await tx(uow(), (r) => r.organisations.any())).toBe(true);
    });

    it('lists organisations by name', async () => {
      const b = await withOrg(uow(), { name: `zz-list-${randomUUID()}` });
      const a = await withOrg(uow(), { name: `zy-list-${randomUUID()}` });
      const names = (await tx(uow(), (r) => r.organisations.list())).map((o) => o.name);
      expect(names.indexOf(a.name)).toBeGreaterThanOrEqual(0);
      expect(names.indexOf(a.name)).toBeLessThan(names.indexOf(b.name));
      expect([...names].sort()).toEqual(names);
    });

    it('finds keys by hash, lists them newest first and records revocation', async () => {
      const org = await withOrg(uow());
      const k1 = {
        id: randomUUID(),
        organisationId: org.id,
        name: 'a',
        keyHash: hashApiKey(randomUUID()),
        prefix: 'live_abcd',
        scopes: ['products:read' as const],
        isTest: false,
        createdAt: T0,
        revokedAt: null,
      };
      const k2 = { ...k1, id: randomUUID(), keyHash: hashApiKey(randomUUID()), isTest: true, createdAt: at(1000), scopes: ['*' as const] };
      await tx(uow(), async (r) => {
        await r.apiKeys.save(k1);
        await r.apiKeys.save(k2);
      });
      expect(await tx(uow(), (r) => r.apiKeys.findByHash(k2.keyHash))).toEqual(k2);
      expect((await tx(uow(), (r) => r.apiKeys.listByOrganisation(org.id))).map((k) => k.id)).toEqual([k2.id, k1.id]);
      await tx(uow(), (r) => r.apiKeys.save({ ...k1, revokedAt: at(5) }));
      expect((await tx(uow(), (r) => r.apiKeys.get(k1.id)))?.revokedAt).toEqual(at(5));
    });

    it('keeps payment integrations per tenant and currencies as shared reference data', async () => {
      const org = await withOrg(uow());
      const pi = {
        id: randomUUID(),
        organisationId: org.id,
        isTest: true,
        integrationName: 'sandbox',
        accountName: 'Sandbox',
        accountId: 'acct_1',
        accountData: { a: 1 },
        updatedAt: T0,
      };
      await tx(uow(), (r) => r.paymentIntegrations.save(pi));
      expect(await tx(uow(), (r) => r.paymentIntegrations.findByName(aTenant(org, true), 'sandbox'))).toEqual(pi);
      expect(await tx(uow(), (r) => r.paymentIntegrations.findByName(aTenant(org, false), 'sandbox'))).toBeUndefined();
      const code = `Q${randomUUID()
        .replace(/[^A-Z]/gi, '')
        .slice(0, 6)
        .toUpperCase()}`;
      const c = { id: randomUUID(), shortName: code, longName: 'Test money', symbol: 'T' };
      await tx(uow(), (r) => r.currencies.save(c));
      expect((await tx(uow(), (r) => r.currencies.list())).find((x) => x.id === c.id)).toEqual(c);
    });

    it("lists an organisation's active signing keys of one mode and algorithm, newest first", async () => {
      const org = await withOrg(uow());
      const live = aTenant(org, false);
      const test = aTenant(org, true);
      const k = (createdAt: Date, over = {}) => ({
        id: randomUUID(),
        organisationId: org.id,
        isTest: false,
        algorithm: 'ecdsa-p256' as const,
        publicKey: '04ab',
        secretCiphertext: 'c',
        createdAt,
        retiredAt: null,
        ...over,
      });
      const old = k(T0);
      const fresh = k(at(1000));
      const retired = k(at(2000), { retiredAt: at(3000) });
      const hmac = k(at(500), { algorithm: 'hmac-sha256' as const, publicKey: '' });
      // A test-mode key, newer than every live one: it never signs (nor is listed) for live mode.
      const testKey = k(at(5000), { isTest: true, publicKey: '04cd' });
      await tx(uow(), async (r) => {
        for (const x of [old, fresh, retired, hmac, testKey]) await r.signingKeys.save(x);
      });
      expect((await tx(uow(), (r) => r.signingKeys.listActive(live, 'ecdsa-p256'))).map((x) => x.id)).toEqual([fresh.id, old.id]);
      expect(await tx(uow(), (r) => r.signingKeys.listActive(live, 'hmac-sha256'))).toEqual([hmac]);
      expect(await tx(uow(), (r) => r.signingKeys.listActive(test, 'ecdsa-p256'))).toEqual([testKey]);
      expect(await tx(uow(), (r) => r.signingKeys.listActive(test, 'hmac-sha256'))).toEqual([]);
      await tx(uow(), (r) => r.signingKeys.save({ ...old, retiredAt: at(4000) }));
      expect((await tx(uow(), (r) => r.signingKeys.listActive(live, 'ecdsa-p256'))).map((x) => x.id)).toEqual([fresh.id]);
      await tx(uow(), (r) => r.signingKeys.save({ ...testKey, retiredAt: at(6000) }));
      expect(await tx(uow(), (r) => r.signingKeys.listActive(test, 'ecdsa-p256'))).toEqual([]);
      expect((await tx(uow(), (r) => r.signingKeys.listActive(live, 'ecdsa-p256'))).map((x) => x.id)).toEqual([fresh.id]);
    });
  });
}

export function describeCatalogRepositoryContracts(name: string, uow: UnitOfWorkFactory): void {
  describe(`${name}: products, plans and pricing tables`, () => {
    it('round-trips a product with settings, currencies, features (enum options) and capabilities', async () => {
      const org = await withOrg(uow());
      const c = { id: randomUUID(), shortName: 'USD', longName: 'US Dollar', symbol: '$' };
      const currencies = await tx(uow(), (r) => r.currencies.list());
      const usd = currencies.find((x) => x.shortName === 'USD') ?? c;
      if (usd === c) await tx(uow(), (r) => r.currencies.save(c));
      const p = { ...aProduct(aTenant(org)), key: 'notes', currencies: [{ currencyId: usd.id, isDefault: true }] };
      await tx(uow(), (r) => r.products.save(p));
      expect(await tx(uow(), (r) => r.products.get(p.id))).toEqual(p);
      expect(await tx(uow(), (r) => r.products.findByKey(aTenant(org), 'notes'))).toEqual(p);
      expect(await tx(uow(), (r) => r.products.findByKey(aTenant(org, true), 'notes'))).toBeUndefined();

      const changed = {
        ...p,
        name: 'renamed',
        features: [{ ...p.features[0], enumOptions: p.features[0].enumOptions.slice(0, 1) }],
        capabilities: p.capabilities.slice(1),
      };
      await tx(uow(), (r) => r.products.save(changed));
      expect(await tx(uow(), (r) => r.products.get(p.id))).toEqual(changed);
    });

    it("lists a tenant's products without archived ones unless asked, and pages them by cursor", async () => {
      const org = await withOrg(uow());
      const t = aTenant(org);
      const products = Array.from({ length: 5 }, (_, i) => aProduct(t, { name: `p${i}`, createdAt: at(i * 1000) }));
      products[4] = { ...products[4], archivedAt: at(9999) };
      await tx(uow(), async (r) => {
        for (const p of products) await r.products.save(p);
      });
      await tx(uow(), (r) => r.products.save(aProduct(aTenant(org, true), { name: 'test-mode' })));
      expect((await tx(uow(), (r) => r.products.list(t))).map((p) => p.name)).toEqual(['p0', 'p1', 'p2', 'p3']);
      expect(await tx(uow(), (r) => r.products.list(t, { includeArchived: true }))).toHaveLength(5);

      const first = await tx(uow(), (r) => r.products.page(t, { limit: 2 }));
      expect(first.items.map((p) => p.name)).toEqual(['p0', 'p1']);
      expect(first.hasMore).toBe(true);
      expect(first.previousCursor).toBeNull();
      // An insert before the cursor does not shift the next page.
      await tx(uow(), (r) => r.products.save(aProduct(t, { name: 'early', createdAt: at(-5000) })));
      const second = await tx(uow(), (r) => r.products.page(t, { limit: 2, after: first.nextCursor as string }));
      expect(second.items.map((p) => p.name)).toEqual(['p2', 'p3']);
      expect(second.hasMore).toBe(false);
      expect(second.nextCursor).toBeNull();
      const back = await tx(uow(), (r) => r.products.page(t, { limit: 2, before: second.previousCursor as string }));
      expect(back.items.map((p) => p.name)).toEqual(['p0', 'p1']);
      expect(back.hasMore).toBe(true);
      const searched = await tx(uow(), (r) => r.products.page(t, { limit: 10, search: 'EAR' }));
      expect(searched.items.map((p) => p.name)).toEqual(['early']);
    });

    it('round-trips a plan with currencies, capabilities, feature values, tier tag and nested line items', async () => {
      const org = await withOrg(uow());
      const t = aTenant(org);
      const product = aProduct(t);
      const currency = {
        id: randomUUID(),
        shortName: `X${randomUUID()
          .replace(/[^A-Z]/gi, '')
          .slice(0, 2)
          .toUpperCase()}`,
        longName: 'X',
        symbol: 'x',
      };
      const tierTag = { id: randomUUID(), organisationId: org.id, name: 'gold', createdAt: T0, updatedAt: T0 };
      const plan = aPlan(product, {
        key: 'team',
        tierTag,
        currencies: [{ currencyId: currency.id, amountMinor: 1250, paymentPlanId: 'team_x' }],
        capabilityIds: product.capabilities.map((c) => c.id),
        features: [
          {
            featureId: product.features[0].id,
            value: '',
            enumOptionId: product.features[0].enumOptions[1].id,
            isUnlimited: false,
            isUsage: false,
            pricePerUnit: 0,
            minUsage: 0,
            maxUsage: 0,
            updatedAt: T0,
          },
        ],
        lineItems: [
          {
            id: randomUUID(),
            name: 'Seats',
            slug: 'seats',
            paymentProductId: 'prod_1',
            nickname: 'Seats',
            priceType: 'per_seat',
            intervalType: 'recurring',
            billingScheme: 'tiered',
            tiersMode: 'graduated',
            minQuantity: 1,
            maxQuantity: 50,
            isActive: true,
            allowChangingQuantity: true,
            unitLabel: 'seat',
            meter: { id: randomUUID(), slug: 'm', name: 'meter', paymentMeterId: 'mtr_1', createdAt: T0, updatedAt: T0 },
            archivedAt: null,
            createdAt: T0,
            updatedAt: T0,
            prices: [
              {
                id: randomUUID(),
                paymentPriceId: 'price_1',
                interval: 'month',
                intervalCount: 1,
                archivedAt: null,
                createdAt: T0,
                updatedAt: T0,
                currencyOptions: [
                  {
                    id: randomUUID(),
                    currency: 'usd',
                    unitAmount: null,
                    isDefault: true,
                    createdAt: T0,
                    updatedAt: T0,
                    tiers: [
                      { id: randomUUID(), upTo: '10', flatAmount: null, unitAmount: 1000, createdAt: T0, updatedAt: T0 },
                      { id: randomUUID(), upTo: 'inf', flatAmount: 500, unitAmount: 800, createdAt: T0, updatedAt: T0 },
                    ],
                  },
                ],
              },
            ],
          },
        ],
      });
      await tx(uow(), async (r) => {
        await r.currencies.save(currency);
        await r.products.save(product);
        await r.plans.save(plan);
      });
      expect(await tx(uow(), (r) => r.plans.get(plan.id))).toEqual(plan);
      expect(await tx(uow(), (r) => r.plans.findByKey(product.id, 'team'))).toEqual(plan);
      expect(await tx(uow(), (r) => r.plans.getTierTag(tierTag.id))).toEqual(tierTag);
      expect((await tx(uow(), (r) => r.plans.pageTierTags(org.id, { limit: 10, search: 'OL' }))).items).toEqual([tierTag]);
      expect((await tx(uow(), (r) => r.plans.pageTierTags(org.id, { limit: 10, search: 'silver' }))).items).toEqual([]);
      expect((await tx(uow(), (r) => r.plans.getMany([plan.id, randomUUID()]))).map((p) => p.id)).toEqual([plan.id]);

      const replaced = { ...plan, lineItems: [], currencies: [], capabilityIds: [], features: [], tierTag: null, archivedAt: at(1) };
      await tx(uow(), (r) => r.plans.save(replaced));
      expect(await tx(uow(), (r) => r.plans.get(plan.id))).toEqual(replaced);
    });

    it('filters and pages plans, and reports filter options', async () => {
      const org = await withOrg(uow());
      const t = aTenant(org);
      const product = aProduct(t);
      const mk = (name: string, i: number, currency: string, interval: 'month' | 'year', over = {}) =>
        aPlan(product, {
          name,
          createdAt: at(i * 1000),
          lineItems: [
            {
              id: randomUUID(),
              name: 'base',
              slug: 'base',
              paymentProductId: 'p',
              nickname: 'base',
              priceType: 'flat_rate',
              intervalType: 'recurring',
              billingScheme: 'flat_rate',
              tiersMode: null,
              minQuantity: 1,
              maxQuantity: 1,
              isActive: true,
              allowChangingQuantity: false,
              unitLabel: null,
              meter: null,
              archivedAt: null,
              createdAt: T0,
              updatedAt: T0,
              prices: [
                {
                  id: randomUUID(),
                  paymentPriceId: 'x',
                  interval,
                  intervalCount: 1,
                  archivedAt: null,
                  createdAt: T0,
                  updatedAt: T0,
                  currencyOptions: [
                    { id: randomUUID(), currency, unitAmount: 100, isDefault: true, tiers: [], createdAt: T0, updatedAt: T0 },
                  ],
                },
              ],
            },
          ],
          ...over,
        });
      const plans = [
        mk('monthly usd', 0, 'usd', 'month'),
        mk('yearly eur', 1, 'eur', 'year'),
        mk('inactive', 2, 'usd', 'month', { active: false }),
        mk('archived', 3, 'usd', 'month', { archivedAt: at(1) }),
      ];
      await tx(uow(), async (r) => {
        await r.products.save(product);
        for (const p of plans) await r.plans.save(p);
      });
      const names = async (q: object) => (await tx(uow(), (r) => r.plans.page(t, { limit: 10, ...q }))).items.map((p) => p.name);
      expect(await names({})).toEqual(['monthly usd', 'yearly eur', 'inactive']);
      expect(await names({ includeArchived: true })).toHaveLength(4);
      expect(await names({ currency: 'eur' })).toEqual(['yearly eur']);
      expect(await names({ interval: 'month', intervalCount: 1 })).toEqual(['monthly usd', 'inactive']);
      expect(await names({ interval: 'one_off' })).toEqual([]);
      expect(await names({ isActive: false })).toEqual(['inactive']);
      expect(await names({ productId: product.id, search: 'YEAR' })).toEqual(['yearly eur']);
      expect(await names({ productId: randomUUID() })).toEqual([]);
      const page = await tx(uow(), (r) => r.plans.page(t, { limit: 1 }));
      expect(page.hasMore).toBe(true);
      expect((await tx(uow(), (r) => r.plans.page(t, { limit: 5, after: page.nextCursor as string }))).items.map((p) => p.name)).toEqual([
        'yearly eur',
        'inactive',
      ]);
      const options = await tx(uow(), (r) => r.plans.filterOptions(t));
      expect(options.currencies).toEqual(['eur', 'usd']);
      expect(options.intervals).toEqual(
        expect.arrayContaining([
          { interval: 'month', intervalCount: 1 },
          { interval: 'year', intervalCount: 1 },
        ]),
      );
      expect(await tx(uow(), (r) => r.plans.listByProduct(product.id))).toHaveLength(4);
      // Each pricing part leads to its plan.
      const [li] = plans[1].lineItems;
      const [price] = li.prices;
      for (const part of [li.id, price.id, price.currencyOptions[0].id])
        expect(await tx(uow(), (r) => r.plans.planOfPart(part))).toBe(plans[1].id);
      expect(await tx(uow(), (r) => r.plans.planOfPart(randomUUID()))).toBeUndefined();
    });

    it("reads a product's ownership alone and the capability names of plans (the check's hot path)", async () => {
      const org = await withOrg(uow());
      const product = { ...aProduct(aTenant(org, true)), archivedAt: at(3) };
      const [edit, exp] = product.capabilities;
      const both = aPlan(product, { capabilityIds: [exp.id, edit.id] });
      const none = aPlan(product, { capabilityIds: [] });
      await tx(uow(), async (r) => {
        await r.products.save(product);
        await r.plans.save(both);
        await r.plans.save(none);
      });
      expect(await uow().read((r) => r.products.getOwnership(product.id))).toEqual({
        id: product.id,
        organisationId: org.id,
        isTest: true,
        archivedAt: at(3),
      });
      expect(await uow().read((r) => r.products.getOwnership(randomUUID()))).toBeUndefined();
      const names = await uow().read((r) => r.plans.capabilityNames([both.id, none.id, randomUUID()]));
      expect([...names.entries()]).toEqual([[both.id, ['export', 'edit']]]);
      expect(await uow().read((r) => r.plans.capabilityNames([]))).toEqual(new Map());
    });

    it('deletes a product with its plans, and a single plan', async () => {
      const org = await withOrg(uow());
      const product = aProduct(aTenant(org));
      const [a, b] = [aPlan(product), aPlan(product)];
      await tx(uow(), async (r) => {
        await r.products.save(product);
        await r.plans.save(a);
        await r.plans.save(b);
      });
      await tx(uow(), (r) => r.plans.delete(a.id));
      expect(await tx(uow(), (r) => r.plans.get(a.id))).toBeUndefined();
      await tx(uow(), (r) => r.products.delete(product.id));
      expect(await tx(uow(), (r) => r.products.get(product.id))).toBeUndefined();
      expect(await tx(uow(), (r) => r.plans.get(b.id))).toBeUndefined();
    });

    it('round-trips pricing tables with their plan and feature rows', async () => {
      const org = await withOrg(uow());
      const product = aProduct(aTenant(org));
      const plan = aPlan(product);
      const table = {
        id: randomUUID(),
        organisationId: org.id,
        isTest: false,
        productId: product.id,
        key: 'main',
        name: 'Main',
        status: 'ACTIVE' as const,
        title: 'Pick',
        text: 'text',
        theme: 'light',
        featureOrder: 'asc',
        customTheme: { accent: '#123' },
        featuredPlanId: plan.id,
        plans: [{ planId: plan.id, sortOrder: 0, updatedAt: T0 }],
        features: [{ featureId: product.features[0].id, sortOrder: 0, updatedAt: T0 }],
        updatedAt: T0,
      };
      await tx(uow(), async (r) => {
        await r.products.save(product);
        await r.plans.save(plan);
        await r.pricingTables.save(table);
      });
      expect(await tx(uow(), (r) => r.pricingTables.get(table.id))).toEqual(table);
      expect(await tx(uow(), (r) => r.pricingTables.listByProduct(product.id))).toEqual([table]);
      const emptied = { ...table, plans: [], features: [], featuredPlanId: null };
      await tx(uow(), (r) => r.pricingTables.save(emptied));
      expect(await tx(uow(), (r) => r.pricingTables.get(table.id))).toEqual(emptied);
    });
  });
}

export function describeSubscriptionRepositoryContracts(name: string, uow: UnitOfWorkFactory): void {
  describe(`${name}: customers, subscriptions, licenses and events`, () => {
    async function world() {
      const org = await withOrg(uow());
      const t = aTenant(org);
      const product = aProduct(t);
      const plan = aPlan(product);
      const customer = aCustomer(t);
      await tx(uow(), async (r) => {
        await r.products.save(product);
        await r.plans.save(plan);
        await r.customers.save(customer);
      });
      return { org, t, product, plan, customer };
    }

    it('round-trips customers and finds them by member value within a tenant', async () => {
      const { t, customer } = await world();
      expect(await tx(uow(), (r) => r.customers.get(customer.id))).toEqual(customer);
      expect(await tx(uow(), (r) => r.customers.findByValue(t, customer.value))).toEqual(customer);
      expect(await tx(uow(), (r) => r.customers.findByValue({ ...t, isTest: true }, customer.value))).toBeUndefined();
    });

    it('finds or creates a customer by member value, and a grantee by granteeId, in one step', async () => {
      const { t, customer } = await world();
      // An existing value: the stored customer, nothing inserted.
      const twin = aCustomer(t, { value: customer.value, emailAddress: 'other@example.com' });
      expect(await tx(uow(), (r) => r.customers.findOrCreate(twin))).toEqual(customer);
      expect(await tx(uow(), (r) => r.customers.get(twin.id))).toBeUndefined();
      // A new value: inserted as given; again in the other mode of the tenant (its own customer).
      const fresh = aCustomer(t, { value: `new-${randomUUID()}` });
      expect(await tx(uow(), (r) => r.customers.findOrCreate(fresh))).toEqual(fresh);
      expect(await tx(uow(), (r) => r.customers.findByValue(t, fresh.value))).toEqual(fresh);
      const testMode = aCustomer({ ...t, isTest: true }, { value: fresh.value });
      expect(await tx(uow(), (r) => r.customers.findOrCreate(testMode))).toEqual(testMode);
      const grantee = { id: randomUUID(), ...t, granteeId: `g-${randomUUID()}`, name: 'Ann', createdAt: at(1), updatedAt: at(1) };
      expect(await tx(uow(), (r) => r.people.findOrCreateGrantee(grantee))).toEqual(grantee);
      const again = { ...grantee, id: randomUUID(), name: 'Other' };
      expect(await tx(uow(), (r) => r.people.findOrCreateGrantee(again))).toEqual(grantee);
      expect(await tx(uow(), (r) => r.people.getGrantee(again.id))).toBeUndefined();
      const foreign = { ...again, isTest: true };
      expect(await tx(uow(), (r) => r.people.findOrCreateGrantee(foreign))).toEqual(foreign);
    });

    it("pages a tenant's subscriptions by creation, filtered by status, product, plan, customer and id", async () => {
      const { t, plan, customer } = await world();
      const other = aCustomer(t);
      const otherProduct = aProduct(t);
      const otherPlan = aPlan(otherProduct);
      const ft = aTenant(await withOrg(uow()));
      const foreignProduct = aProduct(ft);
      const foreignPlan = aPlan(foreignProduct);
      const foreignCustomer = aCustomer(ft);
      await tx(uow(), async (r) => {
        await r.customers.save(other);
        await r.customers.save(foreignCustomer);
        for (const p of [otherProduct, foreignProduct]) await r.products.save(p);
        for (const p of [otherPlan, foreignPlan]) await r.plans.save(p);
      });
      const subs = [
        aSubscription(plan, customer, { createdAt: at(1), email: 'a@example.com' }),
        aSubscription(plan, other, { createdAt: at(2), status: 'CANCELED', canceledAt: at(2) }),
        aSubscription(plan, customer, { createdAt: at(3) }),
        { ...aSubscription(plan, customer, { createdAt: at(4) }), planId: otherPlan.id, productId: otherPlan.productId },
      ];
      const foreign = aSubscription(foreignPlan, foreignCustomer, { createdAt: at(0) });
      await tx(uow(), async (r) => {
        for (const x of [...subs, foreign]) await r.subscriptions.save(x);
      });
      type Query = Parameters<Repositories['subscriptions']['page']>[1];
      const ids = async (q: Query) => {
        const page = await tx(uow(), (r) => r.subscriptions.page(t, q));
        return { ids: page.items.map((x) => x.id), page };
      };
      const first = await ids({ limit: 2 });
      expect(first.ids).toEqual([subs[0].id, subs[1].id]);
      expect(first.page.hasMore).toBe(true);
      expect((await ids({ limit: 10, after: first.page.nextCursor as string })).ids).toEqual([subs[2].id, subs[3].id]);
      expect((await ids({ limit: 2, before: encodeCursor(subs[3]) })).ids).toEqual([subs[1].id, subs[2].id]);
      expect((await ids({ limit: 10, statuses: ['CANCELED'] })).ids).toEqual([subs[1].id]);
      expect((await ids({ limit: 10, customerIds: [customer.id] })).ids).toEqual([subs[0].id, subs[2].id, subs[3].id]);
      expect((await ids({ limit: 10, customerIds: [] })).ids).toEqual([]);
      expect((await ids({ limit: 10, planIds: [otherPlan.id] })).ids).toEqual([subs[3].id]);
      expect((await ids({ limit: 10, productIds: [plan.productId] })).ids).toEqual([subs[0].id, subs[1].id, subs[2].id]);
      expect((await ids({ limit: 10, ids: [subs[2].id, foreign.id] })).ids).toEqual([subs[2].id]);
    });

    it('pages customers by search and provider id, and deletes one (issue #20: owners)', async () => {
      const { t, customer } = await world();
      const other = aCustomer(t, {
        value: `zed-${randomUUID()}`,
        emailAddress: 'Zed@Example.com',
        paymentCustomerId: 'cus_zed',
        createdAt: at(2),
      });
      await tx(uow(), (r) => r.customers.save(other));
      const all = await tx(uow(), (r) => r.customers.page(t, { limit: 1 }));
      expect(all.items.map((c) => c.id)).toEqual([customer.id]);
      expect(all.hasMore).toBe(true);
      const next = await tx(uow(), (r) => r.customers.page(t, { limit: 1, after: all.nextCursor as string }));
      expect(next.items.map((c) => c.id)).toEqual([other.id]);
      expect((await tx(uow(), (r) => r.customers.page(t, { limit: 10, search: 'zed@example' }))).items.map((c) => c.id)).toEqual([
        other.id,
      ]);
      expect((await tx(uow(), (r) => r.customers.page(t, { limit: 10, paymentCustomerId: 'cus_zed' }))).items).toEqual([other]);
      expect((await tx(uow(), (r) => r.customers.page({ ...t, isTest: true }, { limit: 10 }))).items).toEqual([]);
      await tx(uow(), (r) => r.customers.delete(other.id));
      expect(await tx(uow(), (r) => r.customers.get(other.id))).toBeUndefined();
    });

    it('pages subscriptions by customer, plan, product, status and id, and deletes one with its licenses (issue #20)', async () => {
      const { t, plan, product, customer } = await world();
      const first = aSubscription(plan, customer, { createdAt: at(1) });
      const second = aSubscription(plan, customer, { createdAt: at(2), status: 'CANCELED', canceledAt: at(3) });
      const seat = aLicense(plan, { subscriptionId: second.id, granteeId: 'gone' });
      await tx(uow(), async (r) => {
        await r.subscriptions.save(first);
        await r.subscriptions.save(second);
        await r.licenses.saveMany([seat]);
      });
      const ids = (q: Partial<Parameters<Repositories['subscriptions']['page']>[1]>) =>
        tx(uow(), async (r) => (await r.subscriptions.page(t, { limit: 10, ...q })).items.map((x) => x.id));
      expect(await ids({ customerIds: [customer.id] })).toEqual([first.id, second.id]);
      expect(await ids({ planIds: [plan.id], statuses: ['CANCELED'] })).toEqual([second.id]);
      expect(await ids({ productIds: [product.id], ids: [first.id] })).toEqual([first.id]);
      expect(await ids({ customerIds: [] })).toEqual([]);
      const one = await tx(uow(), (r) => r.subscriptions.page(t, { limit: 1, customerIds: [customer.id] }));
      expect(one.hasMore).toBe(true);
      expect(await tx(uow(), (r) => r.subscriptions.countReferencing({ customerId: customer.id }))).toBe(2);
      await tx(uow(), (r) => r.subscriptions.delete(second.id));
      expect(await tx(uow(), (r) => r.subscriptions.get(second.id))).toBeUndefined();
      expect(await tx(uow(), (r) => r.licenses.get(seat.id))).toBeUndefined();
      expect(await ids({ customerIds: [customer.id] })).toEqual([first.id]);
    });

    it("keeps a subscription's line items in step with lineItemIds, each with a lasting id (issue #20)", async () => {
      const { plan, customer } = await world();
      const s = aSubscription(plan, customer, { lineItemIds: ['li-a', 'li-b'] });
      await tx(uow(), (r) => r.subscriptions.save(s));
      const first = await tx(uow(), (r) => r.subscriptions.lineItems(s.id));
      expect(first.map((l) => l.lineItemId)).toEqual(['li-a', 'li-b']);
      expect(first[0]).toMatchObject({ subscriptionId: s.id, organisationId: s.organisationId, isTest: s.isTest });
      await tx(uow(), (r) => r.subscriptions.save({ ...s, lineItemIds: ['li-b', 'li-c'] }));
      const second = await tx(uow(), (r) => r.subscriptions.lineItems(s.id));
      expect(second.map((l) => l.lineItemId)).toEqual(['li-b', 'li-c']);
      expect(second[0].id).toBe(first[1].id);
      expect(await tx(uow(), (r) => r.subscriptions.getLineItem(second[1].id))).toEqual(second[1]);
      expect(await tx(uow(), (r) => r.subscriptions.getLineItem(first[0].id))).toBeUndefined();
      await tx(uow(), (r) => r.subscriptions.delete(s.id));
      expect(await tx(uow(), (r) => r.subscriptions.getLineItem(second[1].id))).toBeUndefined();
    });

    it('keeps the plans a subscription holds beyond its first, with their line items; finds it by any of its plans (issue #20)', async () => {
      const { t, product, plan, customer } = await world();
      const second = aPlan(product);
      await tx(uow(), (r) => r.plans.save(second));
      const added = { id: randomUUID(), planId: second.id, quantity: 3, lineItemIds: ['li-x'], createdAt: at(1), updatedAt: at(1) };
      const s = aSubscription(plan, customer, { lineItemIds: ['li-a'], addedPlans: [added] });
      const alone = aSubscription(plan, customer);
      await tx(uow(), async (r) => {
        await r.subscriptions.save(s);
        await r.subscriptions.save(alone);
      });
      expect(await tx(uow(), (r) => r.subscriptions.get(s.id))).toEqual(s);
      expect(await tx(uow(), (r) => r.subscriptions.getForUpdate(s.id))).toEqual(s);
      expect(await tx(uow(), (r) => r.subscriptions.subscriptionOfPlan(added.id))).toBe(s.id);
      expect(await tx(uow(), (r) => r.subscriptions.subscriptionOfPlan(randomUUID()))).toBeUndefined();
      expect((await tx(uow(), (r) => r.subscriptions.listByPlan(second.id))).map((x) => x.id)).toEqual([s.id]);
      expect(await tx(uow(), (r) => r.subscriptions.countReferencing({ planId: second.id }))).toBe(1);
      expect((await tx(uow(), (r) => r.subscriptions.page(t, { limit: 10, planIds: [second.id] }))).items).toEqual([s]);
      expect((await tx(uow(), (r) => r.subscriptions.lineItems(s.id))).map((l) => l.lineItemId)).toEqual(['li-a', 'li-x']);
      // Removed: its row and line items go; the subscription stays.
      await tx(uow(), (r) => r.subscriptions.save({ ...s, addedPlans: [] }));
      expect((await tx(uow(), (r) => r.subscriptions.get(s.id)))?.addedPlans).toEqual([]);
      expect(await tx(uow(), (r) => r.subscriptions.subscriptionOfPlan(added.id))).toBeUndefined();
      expect((await tx(uow(), (r) => r.subscriptions.lineItems(s.id))).map((l) => l.lineItemId)).toEqual(['li-a']);
      expect(await tx(uow(), (r) => r.subscriptions.countReferencing({ planId: second.id }))).toBe(0);
      // Two added in order (the second with its payment provider's item), then the subscription deleted with them.
      const two = [added, { ...added, id: randomUUID(), planId: plan.id, quantity: 1, lineItemIds: [], paymentItemId: 'si_added' }];
      await tx(uow(), (r) => r.subscriptions.save({ ...alone, addedPlans: two }));
      expect((await tx(uow(), (r) => r.subscriptions.get(alone.id)))?.addedPlans).toEqual(two);
      await tx(uow(), (r) => r.subscriptions.delete(alone.id));
      expect(await tx(uow(), (r) => r.subscriptions.subscriptionOfPlan(added.id))).toBeUndefined();
    });

    it('keeps grantees, groups and memberships (issue #20): pages, filters, cascades', async () => {
      const { t, customer, plan } = await world();
      const s = aSubscription(plan, customer);
      const grantee = (granteeId: string, n: number) => ({
        id: randomUUID(),
        ...t,
        granteeId,
        name: null,
        createdAt: at(n),
        updatedAt: at(n),
      });
      const [ann, bob] = [grantee('ann', 1), grantee('bob', 2)];
      const group = {
        id: randomUUID(),
        ...t,
        customerId: customer.id,
        subscriptionId: null,
        name: 'team',
        createdAt: at(1),
        updatedAt: at(1),
      };
      const subGroup = { ...group, id: s.id, subscriptionId: s.id, name: null, createdAt: at(2), updatedAt: at(2) };
      const member = { id: randomUUID(), ...t, groupId: group.id, granteeRef: ann.id, createdAt: at(3), updatedAt: at(3) };
      await tx(uow(), async (r) => {
        await r.subscriptions.save(s);
        await r.people.saveGrantee(ann);
        await r.people.saveGrantee(bob);
        await r.people.saveGroup(group);
        await r.people.saveGroup(subGroup);
        await r.people.addMember(member);
        await r.people.addMember({ ...member, id: randomUUID() });
      });
      expect(await tx(uow(), (r) => r.people.getGrantee(ann.id))).toEqual(ann);
      expect((await tx(uow(), (r) => r.people.findGrantees(t, ['bob', 'zed']))).map((g) => g.id)).toEqual([bob.id]);
      const first = await tx(uow(), (r) => r.people.pageGrantees(t, { limit: 1 }));
      expect(first.items.map((g) => g.id)).toEqual([ann.id]);
      expect(
        (await tx(uow(), (r) => r.people.pageGrantees(t, { limit: 5, after: first.nextCursor as string }))).items.map((g) => g.id),
      ).toEqual([bob.id]);
      expect((await tx(uow(), (r) => r.people.pageGrantees(t, { limit: 5, groupId: group.id }))).items.map((g) => g.id)).toEqual([ann.id]);
      expect((await tx(uow(), (r) => r.people.pageGrantees(t, { limit: 5, granteeIds: ['bob'] }))).items.map((g) => g.id)).toEqual([
        bob.id,
      ]);
      expect((await tx(uow(), (r) => r.people.pageGrantees({ ...t, isTest: true }, { limit: 5 }))).items).toEqual([]);
      expect(await tx(uow(), (r) => r.people.getGroup(subGroup.id))).toEqual(subGroup);
      expect((await tx(uow(), (r) => r.people.pageGroups(t, { limit: 5, customerId: customer.id }))).items.map((g) => g.id)).toEqual([
        group.id,
        subGroup.id,
      ]);
      expect(await tx(uow(), (r) => r.people.members(group.id))).toEqual([member]);
      expect(await tx(uow(), (r) => r.people.membershipsOf(ann.id))).toEqual([member]);
      await tx(uow(), (r) => r.people.removeMember(group.id, ann.id));
      expect(await tx(uow(), (r) => r.people.members(group.id))).toEqual([]);
      await tx(uow(), (r) => r.people.addMember(member));
      await tx(uow(), (r) => r.people.deleteGrantee(ann.id));
      expect(await tx(uow(), (r) => r.people.members(group.id))).toEqual([]);
      await tx(uow(), (r) => r.people.addMember({ ...member, granteeRef: bob.id }));
      await tx(uow(), (r) => r.people.deleteGroup(group.id));
      expect(await tx(uow(), (r) => r.people.membershipsOf(bob.id))).toEqual([]);
      // A subscription's group goes with the subscription.
      await tx(uow(), (r) => r.subscriptions.delete(s.id));
      expect(await tx(uow(), (r) => r.people.getGroup(subGroup.id))).toBeUndefined();
    });

    it('round-trips subscriptions, finds them by provider id, plan and due cancellation', async () => {
      const { plan, product, customer } = await world();
      const s = aSubscription(plan, customer, { paymentSubscriptionId: `sub_${randomUUID()}`, lineItemIds: ['a', 'b'] });
      const due = aSubscription(plan, customer, { cancelAtPeriodEnd: true, currentPeriodEnd: at(10), createdAt: at(5) });
      const canceled = aSubscription(plan, customer, {
        cancelAtPeriodEnd: true,
        currentPeriodEnd: at(10),
        status: 'CANCELED',
        canceledAt: at(10),
      });
      await tx(uow(), async (r) => {
        for (const x of [s, due, canceled]) await r.subscriptions.save(x);
      });
      expect(await tx(uow(), (r) => r.subscriptions.get(s.id))).toEqual(s);
      expect(await tx(uow(), (r) => r.subscriptions.getForUpdate(s.id))).toEqual(s);
      expect(await tx(uow(), (r) => r.subscriptions.findByPaymentId(s.paymentSubscriptionId as string))).toEqual(s);
      // Its revision changes with every transaction that saves it, even with the same values; a lock does not change it.
      const revision = await tx(uow(), (r) => r.subscriptions.revision(s.id));
      expect(revision).toEqual(expect.any(String));
      expect(await tx(uow(), async (r) => (await r.subscriptions.getForUpdate(s.id), r.subscriptions.revision(s.id)))).toBe(revision);
      const [again, twice] = await tx(uow(), async (r) => {
        await r.subscriptions.save(s);
        const one = await r.subscriptions.revision(s.id);
        await r.subscriptions.save(s);
        return [one, await r.subscriptions.revision(s.id)];
      });
      expect(again).not.toBe(revision);
      expect(await tx(uow(), (r) => r.subscriptions.revision(s.id))).toBe(twice);
      expect(await tx(uow(), (r) => r.subscriptions.revision(randomUUID()))).toBeUndefined();
      expect((await tx(uow(), (r) => r.subscriptions.listByPlan(plan.id))).map((x) => x.id).sort()).toEqual(
        [s.id, due.id, canceled.id].sort(),
      );
      expect(await tx(uow(), (r) => r.subscriptions.countReferencing({ planId: plan.id }))).toBe(3);
      expect(await tx(uow(), (r) => r.subscriptions.countReferencing({ productId: product.id }))).toBe(3);
      const dueIds = await tx(uow(), (r) => r.subscriptions.listDueForCancellation(at(10), 1000));
      expect(dueIds).toContain(due.id);
      expect(dueIds).not.toContain(canceled.id);
      expect(dueIds).not.toContain(s.id);
      expect(await tx(uow(), (r) => r.subscriptions.listDueForCancellation(at(9), 1000))).not.toContain(due.id);
      const lapsed = aSubscription(plan, customer, { currentPeriodEnd: at(10), paymentProvider: 'sandbox' });
      const lapsedStripe = aSubscription(plan, customer, { currentPeriodEnd: at(10), paymentProvider: 'stripe' });
      await tx(uow(), async (r) => {
        await r.subscriptions.save(lapsed);
        await r.subscriptions.save(lapsedStripe);
      });
      const renewals = await tx(uow(), (r) => r.subscriptions.listDueForRenewal(at(10), ['sandbox', 'none'], 1000));
      expect(renewals).toContain(lapsed.id);
      expect(renewals).not.toContain(lapsedStripe.id);
      expect(renewals).not.toContain(due.id);
      expect(renewals).not.toContain(canceled.id);
      expect(await tx(uow(), (r) => r.subscriptions.listDueForRenewal(at(9), ['sandbox'], 1000))).not.toContain(lapsed.id);
      expect(await tx(uow(), (r) => r.subscriptions.listDueForRenewal(at(10), [], 1000))).toEqual([]);
      // A provider that renews test mode only (the sandbox beside a live Stripe key): its live-mode ones are not listed.
      const lapsedTest = aSubscription(plan, customer, { currentPeriodEnd: at(10), paymentProvider: 'sandbox', isTest: true });
      await tx(uow(), (r) => r.subscriptions.save(lapsedTest));
      const testOnly = await tx(uow(), (r) => r.subscriptions.listDueForRenewal(at(10), ['sandbox', 'none'], 1000, ['sandbox']));
      expect(testOnly).toContain(lapsedTest.id);
      expect(testOnly).not.toContain(lapsed.id);
      expect(await tx(uow(), (r) => r.subscriptions.listDueForRenewal(at(10), ['sandbox'], 1000))).toContain(lapsed.id);
    });

    it('stores licenses; lists, counts and finds them for the check by tenant, product and grantee', async () => {
      const { t, plan, customer, product } = await world();
      const s = aSubscription(plan, customer);
      const ls = [
        aLicense(plan, { subscriptionId: s.id, granteeId: 'alice', createdAt: at(1) }),
        aLicense(plan, { subscriptionId: s.id, granteeId: null, createdAt: at(2) }),
        aLicense(plan, { granteeId: 'bob', status: 'EVALUATION', endTime: null, createdAt: at(3), metadata: { source: 'trial' } }),
        aLicense(plan, { granteeId: 'alice', status: 'CANCELED', createdAt: at(4) }),
      ];
      const testMode = aLicense({ ...plan, isTest: true }, { granteeId: 'alice' });
      await tx(uow(), async (r) => {
        await r.subscriptions.save(s);
        await r.licenses.saveMany([...ls, testMode]);
      });
      expect(await tx(uow(), (r) => r.licenses.get(ls[2].id))).toEqual(ls[2]);
      expect((await tx(uow(), (r) => r.licenses.listBySubscription(s.id))).map((l) => l.id)).toEqual([ls[0].id, ls[1].id]);
      expect((await tx(uow(), (r) => r.licenses.list(t, {}))).map((l) => l.id)).toEqual(ls.map((l) => l.id));
      expect((await tx(uow(), (r) => r.licenses.list(t, { status: 'EVALUATION' }))).map((l) => l.id)).toEqual([ls[2].id]);
      expect(await tx(uow(), (r) => r.licenses.count(t, {}))).toEqual({ count: 4, assigned: 3, unassigned: 1 });
      expect(await tx(uow(), (r) => r.licenses.count(t, { subscriptionId: s.id }))).toEqual({ count: 2, assigned: 1, unassigned: 1 });
      // `live`: every status but CANCELED, in lists, pages and counts; with `status`, both hold.
      expect((await tx(uow(), (r) => r.licenses.list(t, { live: true }))).map((l) => l.id)).toEqual(ls.slice(0, 3).map((l) => l.id));
      expect(await tx(uow(), (r) => r.licenses.count(t, { live: true }))).toEqual({ count: 3, assigned: 2, unassigned: 1 });
      expect(await tx(uow(), (r) => r.licenses.count(t, { live: true, granteeId: 'alice' }))).toEqual({
        count: 1,
        assigned: 1,
        unassigned: 0,
      });
      expect(await tx(uow(), (r) => r.licenses.count(t, { live: true, status: 'CANCELED' }))).toEqual({
        count: 0,
        assigned: 0,
        unassigned: 0,
      });
      const livePage = await tx(uow(), (r) => r.licenses.page(t, { live: true }, { limit: 2, after: encodeCursor(ls[0]) }));
      expect(livePage.items.map((l) => l.id)).toEqual([ls[1].id, ls[2].id]);
      expect(livePage.hasMore).toBe(false);
      const found = await tx(uow(), (r) => r.licenses.findForCheck(t, product.id, ['alice']));
      expect(found.map((l) => l.id).sort()).toEqual([ls[0].id, ls[3].id].sort());
      expect(await tx(uow(), (r) => r.licenses.findForCheck(t, randomUUID(), ['alice']))).toEqual([]);
      // The check's index: every granting license with a grantee, in its product's tenant, in batches.
      const scanned: { granteeId: string; status: string; planId: string; productId: string; endMs: number | null }[] = [];
      const batches: number[] = [];
      await tx(uow(), (r) =>
        r.licenses.scanForCheck(['ACTIVE', 'EVALUATION'], 1, (rows) => {
          batches.push(rows.length);
          scanned.push(...rows);
          return true;
        }),
      );
      const byGrantee = (a: { granteeId: string }, b: { granteeId: string }) => (a.granteeId < b.granteeId ? -1 : 1);
      expect(scanned.sort(byGrantee)).toEqual(
        [ls[0], ls[2]].map((l) => ({
          productId: l.productId,
          planId: l.planId,
          granteeId: l.granteeId,
          status: l.status,
          endMs: l.endTime?.getTime() ?? null,
        })),
      );
      expect(batches).toEqual([1, 1]);
      let visits = 0;
      await tx(uow(), (r) => r.licenses.scanForCheck(['ACTIVE', 'EVALUATION', 'CANCELED'], 1, () => ++visits < 2));
      expect(visits).toBe(2);
      // Reduced per product, grantee and plan: the latest end; no end beats any end.
      const later = new Date((ls[0].endTime as Date).getTime() + 86_400_000);
      await tx(uow(), (r) =>
        r.licenses.saveMany([
          aLicense(plan, { granteeId: 'alice', endTime: later }),
          aLicense(plan, { granteeId: 'bob', endTime: new Date(2000, 0, 1) }),
          aLicense(plan, { granteeId: 'dan', endTime: new Date(2000, 0, 1) }),
          aLicense(plan, { granteeId: 'dan', endTime: null }),
        ]),
      );
      const reduced: { granteeId: string; endMs: number | null }[] = [];
      await tx(uow(), (r) =>
        r.licenses.scanForCheck(['ACTIVE', 'EVALUATION'], 1000, (rows) => {
          reduced.push(...rows.map((x) => ({ granteeId: x.granteeId, endMs: x.endMs })));
          return true;
        }),
      );
      expect(reduced.sort(byGrantee)).toEqual([
        { granteeId: 'alice', endMs: later.getTime() },
        { granteeId: 'bob', endMs: null },
        { granteeId: 'dan', endMs: null },
      ]);
      expect((await tx(uow(), (r) => r.licenses.getManyForUpdate([ls[0].id, randomUUID()]))).map((l) => l.id)).toEqual([ls[0].id]);
      await tx(uow(), (r) => r.licenses.saveMany([{ ...ls[1], granteeId: 'carol' }]));
      expect((await tx(uow(), (r) => r.licenses.get(ls[1].id)))?.granteeId).toBe('carol');
      await tx(uow(), (r) =>
        r.licenses.saveMany([
          { ...ls[0], granteeId: null },
          { ...ls[1], granteeId: null },
        ]),
      );
      await tx(uow(), (r) => r.licenses.deleteMany([ls[0].id, ls[1].id]));
      expect(await tx(uow(), (r) => r.licenses.listBySubscription(s.id))).toEqual([]);
    });

    it('lists ad hoc EVALUATION licenses whose end has come, earliest end first, at most the limit', async () => {
      const { plan, customer } = await world();
      const s = aSubscription(plan, customer);
      // Ends long before every other test's licenses (T0 is 2026): this test's ended ones come first.
      const end = (days: number) => new Date(Date.UTC(1990, 0, 1) + days * 86_400_000);
      const ended = [
        aLicense(plan, { status: 'EVALUATION', endTime: end(2) }),
        aLicense(plan, { status: 'EVALUATION', endTime: end(1), granteeId: 'eve' }),
        aLicense(plan, { status: 'EVALUATION', endTime: end(3), isTest: true }),
      ];
      const kept = [
        aLicense(plan, { status: 'EVALUATION', endTime: end(10) }), // ends after `now`
        aLicense(plan, { status: 'EVALUATION', endTime: null }), // never ends
        aLicense(plan, { status: 'ACTIVE', endTime: end(1) }),
        aLicense(plan, { status: 'CANCELED', endTime: end(1) }),
        aLicense(plan, { status: 'TRIALING', endTime: end(1), subscriptionId: s.id }),
        aLicense(plan, { status: 'EVALUATION', endTime: end(1), subscriptionId: s.id }), // a seat: ends with its subscription
      ];
      await tx(uow(), async (r) => {
        await r.subscriptions.save(s);
        await r.licenses.saveMany([...ended, ...kept]);
      });
      const now = end(5);
      const mine = new Set([...ended, ...kept].map((l) => l.id));
      const listed = (await tx(uow(), (r) => r.licenses.listEndedEvaluations(now, 1000))).filter((id) => mine.has(id));
      expect(listed).toEqual([ended[1].id, ended[0].id, ended[2].id]);
      // The end itself counts as come.
      expect(await tx(uow(), (r) => r.licenses.listEndedEvaluations(end(3), 1000))).toContain(ended[2].id);
      expect(await tx(uow(), (r) => r.licenses.listEndedEvaluations(new Date(end(3).getTime() - 1), 1000))).not.toContain(ended[2].id);
      expect(await tx(uow(), (r) => r.licenses.listEndedEvaluations(now, 2))).toEqual([ended[1].id, ended[0].id]);
      // Written CANCELED, it is not listed again.
      await tx(uow(), (r) => r.licenses.saveMany([{ ...ended[1], status: 'CANCELED' }]));
      expect(await tx(uow(), (r) => r.licenses.listEndedEvaluations(now, 1))).toEqual([ended[0].id]);
    });

    it('names the subscriptions of licenses (sorted) and removes only unassigned seats, all or none', async () => {
      const { plan, customer } = await world();
      const [s1, s2] = [aSubscription(plan, customer), aSubscription(plan, customer)].sort((a, b) => (a.id < b.id ? -1 : 1));
      const free = aLicense(plan, { subscriptionId: s2.id, granteeId: null });
      const taken = aLicense(plan, { subscriptionId: s2.id, granteeId: 'bob' });
      const other = aLicense(plan, { subscriptionId: s1.id, granteeId: null });
      const adHoc = aLicense(plan, { granteeId: 'bob' });
      await tx(uow(), async (r) => {
        await r.subscriptions.save(s1);
        await r.subscriptions.save(s2);
        await r.licenses.saveMany([free, taken, other, adHoc]);
      });
      expect(await tx(uow(), (r) => r.licenses.subscriptionsOf([free.id, taken.id, other.id, adHoc.id, randomUUID()]))).toEqual([
        s1.id,
        s2.id,
      ]);
      expect(await tx(uow(), (r) => r.licenses.subscriptionsOf([adHoc.id]))).toEqual([]);
      // A seat assigned since it was read (as chosen for removal) is kept, and so is every other.
      await expect(tx(uow(), (r) => r.licenses.deleteMany([free.id, taken.id]))).rejects.toMatchObject({ code: 'CONFLICT' });
      expect((await tx(uow(), (r) => r.licenses.listBySubscription(s2.id))).map((l) => l.id).sort()).toEqual([free.id, taken.id].sort());
      await tx(uow(), (r) => r.licenses.deleteMany([free.id, randomUUID()]));
      expect((await tx(uow(), (r) => r.licenses.listBySubscription(s2.id))).map((l) => l.id)).toEqual([taken.id]);
    });

    it('claims the oldest due event and skips done or future ones', async () => {
      const { t, plan, customer } = await world();
      const s = aSubscription(plan, customer);
      const other = aSubscription(plan, customer);
      await tx(uow(), async (r) => {
        await r.subscriptions.save(s);
        await r.subscriptions.save(other);
      });
      const far = at(10 * 365 * 86_400_000);
      const done = anEvent(t, s.id, { status: 'success', createdAt: at(-3) });
      // Of another subscription: a future event of the same one would hold `due` back (order per subscription).
      const future = anEvent(t, other.id, { runAt: at(1e12), createdAt: at(-2) });
      const due = anEvent(t, s.id, { createdAt: at(-1), runAt: at(-1) });
      const before = await tx(uow(), (r) => r.events.countOpen());
      await tx(uow(), (r) => r.events.save(done));
      // A subscription whose events are all done has none open.
      expect(await tx(uow(), (r) => r.events.hasOpen(s.id))).toBe(false);
      await tx(uow(), async (r) => {
        for (const e of [future, due]) await r.events.save(e);
      });
      expect(await tx(uow(), async (r) => [await r.events.hasOpen(s.id), await r.events.hasOpen(other.id)])).toEqual([true, true]);
      // Two more queued (the done one is not counted); other suites may share the database.
      const after = await tx(uow(), (r) => r.events.countOpen());
      expect(after.queued - before.queued).toBeGreaterThanOrEqual(2);
      expect(after.pending).toBeGreaterThanOrEqual(0);
      expect(await tx(uow(), (r) => r.events.get(due.id))).toEqual(due);
      const claimed = await tx(uow(), async (r) => {
        // A lease that has already run out: the events stay claimable below.
        const e = await r.events.claimNext(far, at(-1e13));
        // claimNext may return events of other suites sharing the database; look for ours.
        return e;
      });
      expect(claimed).toBeDefined();
      const ours = await tx(uow(), async (r) => {
        const seen: string[] = [];
        for (;;) {
          const e = await r.events.claimNext(at(0), at(2e12));
          if (!e || seen.includes(e.id)) break;
          seen.push(e.id);
          await r.events.save({ ...e, status: 'success' });
          if (e.id === due.id) break;
        }
        return seen;
      });
      expect(ours).toContain(due.id);
      expect(ours).not.toContain(future.id);
      expect(ours).not.toContain(done.id);
    });

    it('keeps carts with their items in order, finds the cart of an item, and pages carts by status, owner and id', async () => {
      const { org, t, plan, customer } = await world();
      const item = (over: object = {}) => ({
        id: randomUUID(),
        planId: plan.id,
        granteeId: null,
        groupId: null as string | null,
        metadata: null,
        checkoutSessionId: null,
        createdAt: T0,
        updatedAt: T0,
        ...over,
      });
      const cart = {
        id: randomUUID(),
        ...t,
        customerId: customer.id,
        currency: 'USD',
        interval: 'month' as const,
        intervalCount: 1,
        status: 'active' as const,
        items: [item({ granteeId: 'g1', metadata: { seats: { quantity: 3 } } }), item({ groupId: randomUUID() })],
        createdAt: T0,
        updatedAt: T0,
      };
      const abandoned = { ...cart, id: randomUUID(), status: 'abandoned' as const, items: [], createdAt: at(1) };
      const otherMode = { ...cart, id: randomUUID(), isTest: !t.isTest, items: [] };
      await tx(uow(), async (r) => {
        for (const c of [cart, abandoned, otherMode]) await r.carts.save(c);
      });
      expect(await tx(uow(), (r) => r.carts.get(cart.id))).toEqual(cart);
      expect(await tx(uow(), (r) => r.carts.cartOfItem(cart.items[1].id))).toBe(cart.id);
      const fewer = { ...cart, items: [cart.items[1]], currency: null, updatedAt: at(3) };
      await tx(uow(), (r) => r.carts.save(fewer));
      expect(await tx(uow(), (r) => r.carts.getForUpdate(cart.id))).toEqual(fewer);
      expect(await tx(uow(), (r) => r.carts.cartOfItem(cart.items[0].id))).toBeUndefined();
      const ids = async (q: object) => (await tx(uow(), (r) => r.carts.page(t, { limit: 10, ...q }))).items.map((c) => c.id);
      expect(await ids({})).toEqual([cart.id, abandoned.id]);
      expect(await ids({ statuses: ['abandoned'] })).toEqual([abandoned.id]);
      expect(await ids({ customerIds: [randomUUID()] })).toEqual([]);
      expect(await ids({ customerIds: [customer.id], search: cart.id.slice(0, 8).toUpperCase() })).toEqual([cart.id]);
      expect(org).toBeDefined();
      // A deleted plan leaves the carts it was in.
      await tx(uow(), (r) => r.plans.delete(plan.id));
      expect((await tx(uow(), (r) => r.carts.get(cart.id)))?.items).toEqual([]);
    });

    it('tells whether an open checkout session made since a time sells a plan (its first plan or a cart plan)', async () => {
      const { t, plan, product } = await world();
      const other = randomUUID();
      const session = {
        id: randomUUID(),
        ...t,
        productId: product.id,
        planId: plan.id,
        granteeId: 'g',
        groupId: null,
        extraItems: [{ planId: other, quantity: 1, granteeId: null, groupId: null }],
        member: 'm@example.com',
        successUrl: 'https://x.io/ok',
        cancelUrl: 'https://x.io/no',
        options: {
          promoCode: null,
          allowPromoCode: false,
          customerEmail: null,
          customerId: null,
          currency: 'USD',
          automaticTax: false,
          quantity: 1,
          changeQuantity: false,
        },
        provider: 'sandbox',
        providerSessionId: null,
        status: 'open' as const,
        subscriptionId: null,
        createdAt: at(10),
        completedAt: null,
      };
      const open = (planId: string, since: Date, providers = ['sandbox']) =>
        tx(uow(), (r) => r.checkoutSessions.hasOpenForPlan(planId, since, providers));
      expect(await open(plan.id, T0)).toBe(false);
      await tx(uow(), (r) => r.checkoutSessions.save(session));
      expect(await open(plan.id, at(10))).toBe(true);
      // Only the providers asked about: another provider's session, or none asked, holds nothing.
      expect(await open(plan.id, T0, ['stripe'])).toBe(false);
      expect(await open(plan.id, T0, [])).toBe(false);
      expect(await open(plan.id, T0, ['stripe', 'sandbox'])).toBe(true);
      expect(await open(other, T0)).toBe(true);
      expect(await open(plan.id, at(11))).toBe(false);
      expect(await open(randomUUID(), T0)).toBe(false);
      for (const status of ['completed', 'canceled'] as const) {
        await tx(uow(), (r) => r.checkoutSessions.save({ ...session, status, completedAt: at(12) }));
        expect(await open(plan.id, T0)).toBe(false);
        expect(await open(other, T0)).toBe(false);
      }
    });

    it('round-trips checkout sessions, billing documents newest first, and records webhook deliveries once', async () => {
      const { org, t, plan, customer, product } = await world();
      const session = {
        id: randomUUID(),
        ...t,
        productId: product.id,
        planId: plan.id,
        granteeId: 'g',
        groupId: randomUUID() as string | null,
        extraItems: [{ planId: plan.id, quantity: 2, granteeId: null, groupId: randomUUID() }],
        member: 'm@example.com',
        successUrl: 'https://x.io/ok',
        cancelUrl: 'https://x.io/no',
        options: {
          promoCode: null,
          allowPromoCode: false,
          customerEmail: null,
          customerId: null,
          currency: 'USD',
          automaticTax: false,
          quantity: 2,
          changeQuantity: true,
        },
        provider: 'sandbox',
        providerSessionId: null,
        status: 'open' as const,
        subscriptionId: null,
        createdAt: T0,
        completedAt: null,
      };
      await tx(uow(), (r) => r.checkoutSessions.save(session));
      expect(await tx(uow(), (r) => r.checkoutSessions.get(session.id))).toEqual(session);
      const s = aSubscription(plan, customer);
      await tx(uow(), (r) => r.subscriptions.save(s));
      const done = {
        ...session,
        status: 'completed' as const,
        subscriptionId: s.id,
        completedAt: at(5),
        providerSessionId: `cs_${randomUUID()}`,
      };
      await tx(uow(), (r) => r.checkoutSessions.save(done));
      expect(await tx(uow(), (r) => r.checkoutSessions.getForUpdate(session.id))).toEqual(done);
      // Completed sessions page as receipts: per tenant, by subscription, member or search; open ones never.
      const open = { ...session, id: randomUUID(), member: 'other@example.com', createdAt: at(1) };
      const later = {
        ...done,
        id: randomUUID(),
        member: 'other@example.com',
        subscriptionId: null,
        providerSessionId: null,
        createdAt: at(2),
      };
      await tx(uow(), async (r) => {
        await r.checkoutSessions.save(open);
        await r.checkoutSessions.save(later);
      });
      const ids = async (q: object) =>
        (await tx(uow(), (r) => r.checkoutSessions.pageCompleted(t, { limit: 10, ...q }))).items.map((x) => x.id);
      expect(await ids({})).toEqual([done.id, later.id]);
      expect(await ids({ subscriptionId: s.id })).toEqual([done.id]);
      expect(await ids({ members: ['other@example.com'] })).toEqual([later.id]);
      expect(await ids({ members: [] })).toEqual([]);
      expect(await ids({ planIds: [done.planId] })).toEqual([done.id, later.id]);
      expect(await ids({ planIds: [randomUUID()] })).toEqual([]);
      expect(await ids({ planIds: [] })).toEqual([]);
      expect(await ids({ search: 'M@EXAMPLE' })).toEqual([done.id]);
      expect(await ids({ limit: 1 })).toEqual([done.id]);
      expect((await tx(uow(), (r) => r.checkoutSessions.pageCompleted({ ...t, isTest: !t.isTest }, { limit: 10 }))).items).toEqual([]);

      // A deferred link leads to no session until one is set, then to that one; concurrent locks wait for each other.
      const link = `link-${randomUUID()}`;
      expect(await tx(uow(), (r) => r.checkoutSessions.lockDeferredLink(link, T0))).toEqual({ sessionId: null });
      const order: string[] = [];
      await Promise.all([
        tx(uow(), async (r) => {
          const held = await r.checkoutSessions.lockDeferredLink(link, T0);
          order.push(`first saw ${held.sessionId}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
          await r.checkoutSessions.setDeferredLink(link, session.id);
        }),
        new Promise((resolve) => setTimeout(resolve, 10)).then(() =>
          tx(uow(), async (r) => order.push(`second saw ${(await r.checkoutSessions.lockDeferredLink(link, T0)).sessionId}`)),
        ),
      ]);
      expect(order).toEqual(['first saw null', `second saw ${session.id}`]);

      const doc = (id: string, createdAt: Date, kind: 'invoice' | 'payment_method' = 'invoice') => ({
        id,
        organisationId: org.id,
        subscriptionId: s.id,
        kind,
        body: { id, object: kind, lines: { data: [1, 2] } },
        createdAt,
      });
      const [d1, d2, pm] = [
        doc(`in_${randomUUID()}`, T0),
        doc(`in_${randomUUID()}`, at(10)),
        doc(`pm_${randomUUID()}`, T0, 'payment_method'),
      ];
      await tx(uow(), async (r) => {
        for (const d of [d1, d2, pm]) await r.billingDocuments.save(d);
      });
      expect(await tx(uow(), (r) => r.billingDocuments.list(s.id, 'invoice'))).toEqual([d2, d1]);
      expect(await tx(uow(), (r) => r.billingDocuments.list(s.id, 'payment_method'))).toEqual([pm]);

      const eventId = `evt_${randomUUID()}`;
      expect(await tx(uow(), (r) => r.webhookEvents.record('stripe', eventId, T0))).toBe(true);
      expect(await tx(uow(), (r) => r.webhookEvents.record('stripe', eventId, at(1)))).toBe(false);
      expect(await tx(uow(), (r) => r.webhookEvents.record('other', eventId, at(1)))).toBe(true);
    });

    it('keeps idempotency records per organisation, mode, route and key: one claim wins, the answer is kept, old ones purge', async () => {
      const { org } = await world();
      const key = `key-${randomUUID()}`;
      const scope = { organisationId: org.id, isTest: false, route: 'POST /api/products', key };
      const rec = { ...scope, fingerprint: 'POST /api/products abc', status: null, body: null, createdAt: T0 };
      const old = at(-1e9);
      const claim = (r: Repositories, record: typeof rec, expiredBefore: Date) => r.idempotency.claim(record, expiredBefore, 1000);
      // A claim commits only with its answer (one transaction).
      await tx(uow(), async (r) => {
        expect(await claim(r, rec, old)).toBe(true);
        await r.idempotency.complete(scope, 201, { type: 'object', data: { id: 'x' } });
      });
      expect(await tx(uow(), (r) => claim(r, { ...rec, fingerprint: 'other' }, old))).toBe(false);
      expect(await tx(uow(), (r) => r.idempotency.find(scope, at(-1)))).toEqual({
        ...rec,
        status: 201,
        body: { type: 'object', data: { id: 'x' } },
      });
      // Another mode, route or organisation is another key.
      for (const other of [{ isTest: true }, { route: 'POST /api/plans' }, { organisationId: randomUUID() }]) {
        expect(await tx(uow(), (r) => r.idempotency.find({ ...scope, ...other }, at(-1)))).toBeUndefined();
      }
      await tx(uow(), async (r) => {
        expect(await claim(r, { ...rec, isTest: true }, old)).toBe(true);
        await r.idempotency.complete({ ...scope, isTest: true }, 200, null);
      });
      expect((await tx(uow(), (r) => r.idempotency.find(scope, at(-1))))?.status).toBe(201);
      expect((await tx(uow(), (r) => r.idempotency.find({ ...scope, isTest: true }, at(-1))))?.status).toBe(200);
      // A claim whose transaction rolls back leaves nothing.
      const rolled = { ...rec, route: 'POST /api/plans' };
      await expect(
        tx(uow(), async (r) => {
          await claim(r, rolled, old);
          throw new Error('the work failed');
        }),
      ).rejects.toThrow('the work failed');
      expect(await tx(uow(), (r) => r.idempotency.find({ ...scope, route: rolled.route }, at(-1)))).toBeUndefined();
      // An expired record gives its key to a new claim.
      expect(await tx(uow(), (r) => r.idempotency.find(scope, at(1)))).toBeUndefined();
      expect(await tx(uow(), (r) => claim(r, { ...rec, createdAt: at(5) }, at(1)))).toBe(true);
      expect(await tx(uow(), (r) => r.idempotency.purge(at(10)))).toBeGreaterThanOrEqual(1);
      expect(await tx(uow(), (r) => r.idempotency.find(scope, at(-1)))).toBeUndefined();
    });

    it('claims the events of one subscription in order: a later one waits while an earlier one is unfinished', async () => {
      const { t, plan, customer } = await world();
      const s = aSubscription(plan, customer);
      await tx(uow(), (r) => r.subscriptions.save(s));
      // The first event failed once and waits for its retry; the second is due now.
      const first = anEvent(t, s.id, { status: 'pending', runAt: at(1e12), createdAt: at(-4e9) });
      const second = anEvent(t, s.id, { createdAt: at(-4e9 + 1), runAt: at(-4e9) });
      await tx(uow(), async (r) => {
        await r.events.save(first);
        await r.events.save(second);
      });
      const claimedIds = async (now: Date) =>
        tx(uow(), async (r) => {
          const seen: string[] = [];
          for (;;) {
            const e = await r.events.claimNext(now, at(2e12));
            if (!e || seen.includes(e.id)) break;
            seen.push(e.id);
            // Events of other suites sharing the database are finished; ours are left as they are.
            if (e.id !== first.id && e.id !== second.id) await r.events.save({ ...e, status: 'success' });
            else break;
          }
          return seen;
        });
      expect(await claimedIds(at(0))).not.toContain(second.id);
      await tx(uow(), async (r) => r.events.save({ ...first, status: 'failed' }));
      // A finished earlier event (even a failed one) lets the next one through.
      expect(await claimedIds(at(0))).toContain(second.id);
      await tx(uow(), async (r) => r.events.save({ ...second, status: 'success' }));
    });

    it('never hands one event to two concurrent claimers', async () => {
      const { t, plan, customer } = await world();
      const [s1, s2] = [aSubscription(plan, customer), aSubscription(plan, customer)];
      await tx(uow(), async (r) => {
        await r.subscriptions.save(s1);
        await r.subscriptions.save(s2);
      });
      const early = [
        anEvent(t, s1.id, { createdAt: at(-2e9), runAt: at(-2e9) }),
        anEvent(t, s2.id, { createdAt: at(-2e9 + 1), runAt: at(-2e9) }),
      ];
      await tx(uow(), async (r) => {
        for (const e of early) await r.events.save(e);
      });
      const claim = () =>
        uow().run(async (r) => {
          const e = await r.events.claimNext(at(0), at(2e12));
          await new Promise((res) => setTimeout(res, 50));
          if (e) await r.events.save({ ...e, status: 'success' });
          return e?.id;
        });
      const [a, b] = await Promise.all([claim(), claim()]);
      expect(a).toBeDefined();
      expect(b).toBeDefined();
      expect(a).not.toEqual(b);
      expect([a, b].sort()).toEqual(early.map((e) => e.id).sort());
    });
  });
}

export function describeUnitOfWorkContract(name: string, uow: UnitOfWorkFactory): void {
  describe(`${name}: unit of work`, () => {
    it('commits every write of a successful unit together', async () => {
      const org = anOrganisation();
      const product = aProduct(aTenant(org));
      await uow().run(async (r) => {
        await r.organisations.save(org);
        await r.products.save(product);
      });
      expect(await uow().run((r) => r.products.get(product.id))).toEqual(product);
    });

    it('rolls back every write when the unit throws', async () => {
      const org = anOrganisation();
      const product = aProduct(aTenant(org));
      await expect(
        uow().run(async (r) => {
          await r.organisations.save(org);
          await r.products.save(product);
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await uow().run((r) => r.organisations.get(org.id))).toBeUndefined();
      expect(await uow().run((r) => r.products.get(product.id))).toBeUndefined();
    });

    it('serialises writers of one subscription row (getForUpdate): no lost update', async () => {
      const org = await withOrg(uow());
      const t = aTenant(org);
      const product = aProduct(t);
      const plan = aPlan(product);
      const customer = aCustomer(t);
      const s = aSubscription(plan, customer, { quantity: 0 });
      await uow().run(async (r) => {
        await r.products.save(product);
        await r.plans.save(plan);
        await r.customers.save(customer);
        await r.subscriptions.save(s);
      });
      await Promise.all(
        Array.from({ length: 10 }, () =>
          uow().run(async (r) => {
            const cur = await r.subscriptions.getForUpdate(s.id);
            await new Promise((res) => setTimeout(res, 2));
            await r.subscriptions.save({ ...(cur as typeof s), quantity: (cur as typeof s).quantity + 1 });
          }),
        ),
      );
      expect((await uow().run((r) => r.subscriptions.get(s.id)))?.quantity).toBe(10);
    });
  });
}

const anEndpoint = (t: Tenant, over: Partial<WebhookEndpoint> = {}): WebhookEndpoint => ({
  id: randomUUID(),
  organisationId: t.organisationId,
  isTest: t.isTest,
  url: 'https://vendor.example.com/hooks',
  description: null,
  events: [],
  sealedSecret: 'sealed',
  disabledAt: null,
  createdAt: T0,
  updatedAt: T0,
  ...over,
});
const anOutboxEvent = (t: Tenant, orderingKey: string, over: Partial<OutboxEvent> = {}): OutboxEvent => ({
  id: randomUUID(),
  organisationId: t.organisationId,
  isTest: t.isTest,
  type: 'license.created',
  orderingKey,
  payload: { type: 'license.created', timestamp: T0.toISOString(), data: { n: 1 } },
  createdAt: T0,
  ...over,
});
const aDelivery = (e: OutboxEvent, endpointId: string, over: Partial<OutboxDelivery> = {}): OutboxDelivery => ({
  id: randomUUID(),
  eventId: e.id,
  endpointId,
  organisationId: e.organisationId,
  orderingKey: e.orderingKey,
  status: 'pending',
  attempts: 0,
  nextAttemptAt: at(-3e9),
  lockedUntil: null,
  createdAt: T0,
  updatedAt: T0,
  ...over,
});

export function describeWebhookRepositoryContracts(name: string, uow: UnitOfWorkFactory): void {
  describe(`${name}: webhook endpoints, outbox events, deliveries and attempts`, () => {
    /** Claims until one of `ours` comes back (others' deliveries sharing the database are finished on the way); its id or undefined. */
    const claimOurs = (ours: string[], now = at(0)) =>
      tx(uow(), async (r) => {
        for (let i = 0; i < 1000; i++) {
          const d = await r.webhooks.claimNext(now, at(2e12));
          if (!d) return undefined;
          if (ours.includes(d.id)) {
            await r.webhooks.saveDelivery({ ...d, lockedUntil: null });
            return d.id;
          }
          await r.webhooks.saveDelivery({ ...d, status: 'delivered', lockedUntil: null });
        }
        return undefined;
      });

    it('keeps endpoints per tenant: saves, reads, pages, lists the enabled ones, and deletes with their deliveries', async () => {
      const org = await withOrg(uow());
      const t = aTenant(org);
      const a = anEndpoint(t, { events: ['license.created', 'seats.changed'], description: 'a' });
      const b = anEndpoint(t, { createdAt: at(1), disabledAt: at(2) });
      const test = anEndpoint(aTenant(org, true));
      await tx(uow(), async (r) => {
        for (const e of [a, b, test]) await r.webhooks.saveEndpoint(e);
      });
      expect(await tx(uow(), (r) => r.webhooks.getEndpoint(a.id))).toEqual(a);
      expect((await tx(uow(), (r) => r.webhooks.pageEndpoints(t, { limit: 10 }))).items.map((e) => e.id)).toEqual([a.id, b.id]);
      expect((await tx(uow(), (r) => r.webhooks.enabledEndpoints(t))).map((e) => e.id)).toEqual([a.id]);
      const event = anOutboxEvent(t, randomUUID());
      const delivery = aDelivery(event, a.id);
      await tx(uow(), async (r) => {
        await r.outbox.append([event]);
        await r.webhooks.addDeliveries([delivery]);
      });
      await tx(uow(), (r) => r.webhooks.deleteEndpoint(a.id));
      expect(await tx(uow(), (r) => r.webhooks.getEndpoint(a.id))).toBeUndefined();
      expect(await tx(uow(), (r) => r.webhooks.getDeliveryForUpdate(delivery.id))).toBeUndefined();
    });

    it('appends events and pages them per tenant, by type when asked', async () => {
      const org = await withOrg(uow());
      const t = aTenant(org);
      const e1 = anOutboxEvent(t, randomUUID());
      const e2 = anOutboxEvent(t, randomUUID(), { type: 'seats.changed', createdAt: at(1) });
      const other = anOutboxEvent(aTenant(org, true), randomUUID());
      await tx(uow(), (r) => r.outbox.append([e1, e2, other]));
      expect(await tx(uow(), (r) => r.outbox.get(e2.id))).toEqual(e2);
      expect((await tx(uow(), (r) => r.outbox.page(t, { limit: 10 }))).items.map((e) => e.id)).toEqual([e1.id, e2.id]);
      expect((await tx(uow(), (r) => r.outbox.page(t, { limit: 10, types: ['seats.changed'] }))).items).toEqual([e2]);
      const first = await tx(uow(), (r) => r.outbox.page(t, { limit: 1 }));
      expect(first.hasMore).toBe(true);
      expect((await tx(uow(), (r) => r.outbox.page(t, { limit: 1, after: first.nextCursor as string }))).items).toEqual([e2]);
    });

    /** A tenant with `endpoints` endpoints, each given one delivery of its own event (own ordering key). */
    const crowd = async (endpoints: number) => {
      const org = await withOrg(uow());
      const t = aTenant(org);
      const eps = Array.from({ length: endpoints }, () => anEndpoint(t));
      const events = eps.map(() => anOutboxEvent(t, randomUUID()));
      const deliveries = eps.map((e, i) => aDelivery(events[i], e.id));
      await tx(uow(), async (r) => {
        for (const e of eps) await r.webhooks.saveEndpoint(e);
        await r.outbox.append(events);
        await r.webhooks.addDeliveries(deliveries);
      });
      return { eps, deliveries };
    };

    it('claims fairly: the organisation served longest ago first, whatever was written before', async () => {
      const crowded = await crowd(6);
      const quiet = await crowd(1);
      const ours = [...crowded.deliveries, ...quiet.deliveries].map((d) => d.id);
      const order: string[] = [];
      for (let id = await claimOurs(ours); id; id = await claimOurs(ours)) {
        order.push(id);
        await tx(uow(), async (r) => {
          const d = (await r.webhooks.getDeliveryForUpdate(id as string)) as OutboxDelivery;
          await r.webhooks.saveDelivery({ ...d, status: 'delivered' });
        });
      }
      expect(order).toHaveLength(7);
      // The crowded tenant's first delivery went first (written first), then the quiet tenant had its turn.
      expect(order.indexOf(quiet.deliveries[0].id)).toBeLessThanOrEqual(1);
    });

    it('leaves an endpoint and an organisation holding their share of live leases out of the claim', async () => {
      const org = await withOrg(uow());
      const t = aTenant(org);
      const [busy, other, third] = [anEndpoint(t), anEndpoint(t), anEndpoint(t)];
      const events = Array.from({ length: 5 }, () => anOutboxEvent(t, randomUUID()));
      const deliveries = [
        aDelivery(events[0], busy.id),
        aDelivery(events[1], busy.id),
        aDelivery(events[2], busy.id),
        aDelivery(events[3], other.id),
        aDelivery(events[4], third.id),
      ];
      await tx(uow(), async (r) => {
        for (const e of [busy, other, third]) await r.webhooks.saveEndpoint(e);
        await r.outbox.append(events);
        await r.webhooks.addDeliveries(deliveries);
      });
      const ours = deliveries.map((d) => d.id);
      const caps = { perEndpoint: 1, perOrganisation: 2 };
      const leased: OutboxDelivery[] = [];
      await tx(uow(), async (r) => {
        for (let i = 0; i < 1000; i++) {
          const d = await r.webhooks.claimNext(at(0), at(2e12), caps);
          if (!d) return;
          if (ours.includes(d.id)) leased.push(d);
          else await r.webhooks.saveDelivery({ ...d, status: 'delivered', lockedUntil: null });
        }
      });
      expect(leased).toHaveLength(2);
      expect(new Set(leased.map((d) => d.endpointId)).size).toBe(2);
      // Once one finishes, the organisation may take one more.
      await tx(uow(), (r) => r.webhooks.saveDelivery({ ...leased[0], status: 'delivered', lockedUntil: null }));
      const next = await tx(uow(), async (r) => {
        for (let i = 0; i < 1000; i++) {
          const d = await r.webhooks.claimNext(at(0), at(2e12), caps);
          if (!d || ours.includes(d.id)) return d;
          await r.webhooks.saveDelivery({ ...d, status: 'delivered', lockedUntil: null });
        }
        return undefined;
      });
      expect(next).toBeDefined();
      expect(next?.endpointId).not.toBe(leased[1].endpointId);
    });

    it('claims deliveries of one endpoint and key in order: a later one waits while an earlier one is pending', async () => {
      const org = await withOrg(uow());
      const t = aTenant(org);
      const endpoint = anEndpoint(t);
      const key = randomUUID();
      const [e1, e2, e3] = [anOutboxEvent(t, key), anOutboxEvent(t, key), anOutboxEvent(t, randomUUID())];
      const first = aDelivery(e1, endpoint.id, { nextAttemptAt: at(1e12), attempts: 1 });
      const second = aDelivery(e2, endpoint.id);
      const unrelated = aDelivery(e3, endpoint.id);
      await tx(uow(), async (r) => {
        await r.webhooks.saveEndpoint(endpoint);
        await r.outbox.append([e1, e2, e3]);
        await r.webhooks.addDeliveries([first, second, unrelated]);
      });
      const ours = [first.id, second.id, unrelated.id];
      expect(await claimOurs(ours)).toBe(unrelated.id);
      await tx(uow(), async (r) => r.webhooks.saveDelivery({ ...unrelated, status: 'delivered' }));
      expect(await claimOurs(ours)).toBeUndefined();
      await tx(uow(), async (r) => r.webhooks.saveDelivery({ ...first, status: 'failed' }));
      expect(await claimOurs(ours)).toBe(second.id);
      expect(await tx(uow(), (r) => r.webhooks.getDeliveryForUpdate(second.id))).toMatchObject({ status: 'pending', attempts: 0 });
      await tx(uow(), async (r) => r.webhooks.saveDelivery({ ...second, status: 'delivered' }));
    });

    it('purges old events no delivery waits for, with their deliveries and attempts', async () => {
      const org = await withOrg(uow());
      const t = aTenant(org);
      const endpoint = anEndpoint(t);
      const old = anOutboxEvent(t, randomUUID(), { createdAt: at(-9e11) });
      const waiting = anOutboxEvent(t, randomUUID(), { createdAt: at(-9e11) });
      const recent = anOutboxEvent(t, randomUUID(), { createdAt: at(-7e11) });
      const done = aDelivery(old, endpoint.id, { status: 'delivered' });
      await tx(uow(), async (r) => {
        await r.webhooks.saveEndpoint(endpoint);
        await r.outbox.append([old, waiting, recent]);
        await r.webhooks.addDeliveries([done, aDelivery(waiting, endpoint.id, { nextAttemptAt: at(1e12) })]);
        await r.webhooks.addAttempt({
          id: randomUUID(),
          deliveryId: done.id,
          endpointId: endpoint.id,
          eventId: old.id,
          responseStatus: 200,
          responseBody: 'ok',
          durationMs: 1,
          createdAt: T0,
        });
      });
      expect(await tx(uow(), (r) => r.outbox.purge(at(-8e11), 1000))).toBeGreaterThanOrEqual(1);
      expect(await tx(uow(), (r) => r.outbox.get(old.id))).toBeUndefined();
      expect(await tx(uow(), (r) => r.webhooks.getDeliveryForUpdate(done.id))).toBeUndefined();
      expect((await tx(uow(), (r) => r.webhooks.pageAttempts(endpoint.id, { limit: 10 }))).items).toEqual([]);
      expect(await tx(uow(), (r) => r.outbox.get(waiting.id))).toBeDefined();
      expect(await tx(uow(), (r) => r.outbox.get(recent.id))).toBeDefined();
    });

    it('never hands one delivery to two concurrent claimers, and records attempts', async () => {
      const org = await withOrg(uow());
      const t = aTenant(org);
      const endpoint = anEndpoint(t);
      const events = [anOutboxEvent(t, randomUUID()), anOutboxEvent(t, randomUUID())];
      const deliveries = events.map((e) => aDelivery(e, endpoint.id, { nextAttemptAt: at(-5e9) }));
      await tx(uow(), async (r) => {
        await r.webhooks.saveEndpoint(endpoint);
        await r.outbox.append(events);
        await r.webhooks.addDeliveries(deliveries);
      });
      const claim = () =>
        uow().run(async (r) => {
          const d = await r.webhooks.claimNext(at(0), at(2e12));
          await new Promise((res) => setTimeout(res, 50));
          if (d) await r.webhooks.saveDelivery({ ...d, status: 'delivered', lockedUntil: null });
          return d?.id;
        });
      const [a, b] = await Promise.all([claim(), claim()]);
      expect(a).toBeDefined();
      expect(a).not.toEqual(b);
      await tx(uow(), (r) =>
        r.webhooks.addAttempt({
          id: randomUUID(),
          deliveryId: deliveries[0].id,
          endpointId: endpoint.id,
          eventId: events[0].id,
          responseStatus: null,
          responseBody: 'could not be reached',
          durationMs: 12,
          createdAt: T0,
        }),
      );
      const attempts = await tx(uow(), (r) => r.webhooks.pageAttempts(endpoint.id, { limit: 10 }));
      expect(attempts.items).toHaveLength(1);
      expect(attempts.items[0]).toMatchObject({ responseStatus: null, responseBody: 'could not be reached', durationMs: 12 });
      expect(typeof (await tx(uow(), (r) => r.webhooks.countPending()))).toBe('number');
    });

    it("pages a tenant's deliveries (by event) and attempts (by delivery, numbered), never another mode's", async () => {
      const org = await withOrg(uow());
      const t = aTenant(org);
      const endpoint = anEndpoint(t);
      const testEndpoint = anEndpoint(aTenant(org, true));
      const [e1, e2] = [anOutboxEvent(t, randomUUID()), anOutboxEvent(t, randomUUID(), { createdAt: at(1) })];
      const d1 = aDelivery(e1, endpoint.id);
      const d2 = aDelivery(e2, endpoint.id, { createdAt: at(1) });
      const testEvent = anOutboxEvent(aTenant(org, true), randomUUID());
      const attempt = (d: OutboxDelivery, ms: number, endpointId = endpoint.id) => ({
        id: randomUUID(),
        deliveryId: d.id,
        endpointId,
        eventId: d.eventId,
        responseStatus: 500,
        responseBody: 'no',
        durationMs: 3,
        createdAt: at(ms),
      });
      const foreign = aDelivery(testEvent, testEndpoint.id);
      await tx(uow(), async (r) => {
        await r.webhooks.saveEndpoint(endpoint);
        await r.webhooks.saveEndpoint(testEndpoint);
        await r.outbox.append([e1, e2, testEvent]);
        await r.webhooks.addDeliveries([d1, d2, foreign]);
        for (const a of [attempt(d1, 5), attempt(d1, 9), attempt(d2, 7), attempt(foreign, 6, testEndpoint.id)])
          await r.webhooks.addAttempt(a);
      });
      expect(await tx(uow(), (r) => r.webhooks.getDelivery(d1.id))).toEqual(d1);
      expect((await tx(uow(), (r) => r.webhooks.pageDeliveries(t, { limit: 10 }))).items.map((d) => d.id)).toEqual([d1.id, d2.id]);
      expect((await tx(uow(), (r) => r.webhooks.pageDeliveries(t, { limit: 10, eventId: e2.id }))).items).toEqual([d2]);
      expect((await tx(uow(), (r) => r.webhooks.pageDeliveries(t, { limit: 10, endpointId: endpoint.id, eventId: e1.id }))).items).toEqual([
        d1,
      ]);
      expect((await tx(uow(), (r) => r.webhooks.pageDeliveries(t, { limit: 10, endpointId: testEndpoint.id }))).items).toEqual([]);
      const all = await tx(uow(), (r) => r.webhooks.pageTenantAttempts(t, { limit: 10 }));
      expect(all.items.map((a) => [a.deliveryId, a.number])).toEqual([
        [d1.id, 1],
        [d2.id, 1],
        [d1.id, 2],
      ]);
      const ofD1 = await tx(uow(), (r) => r.webhooks.pageTenantAttempts(t, { limit: 1, deliveryId: d1.id }));
      expect(ofD1).toMatchObject({ hasMore: true, items: [{ deliveryId: d1.id, number: 1 }] });
    });

    it('tells whether an attempt to an endpoint succeeded (2xx) since a time, and reads an event for a delivery', async () => {
      const org = await withOrg(uow());
      const t = aTenant(org);
      const [endpoint, other] = [anEndpoint(t), anEndpoint(t)];
      const event = anOutboxEvent(t, randomUUID());
      const d = aDelivery(event, endpoint.id);
      const dOther = aDelivery(event, other.id);
      const attempt = (status: number | null, ms: number, delivery = d) => ({
        id: randomUUID(),
        deliveryId: delivery.id,
        endpointId: delivery.endpointId,
        eventId: event.id,
        responseStatus: status,
        responseBody: '',
        durationMs: 1,
        createdAt: at(ms),
      });
      await tx(uow(), async (r) => {
        await r.webhooks.saveEndpoint(endpoint);
        await r.webhooks.saveEndpoint(other);
        await r.outbox.append([event]);
        await r.webhooks.addDeliveries([d, dOther]);
        for (const a of [attempt(204, 10), attempt(500, 20), attempt(null, 30), attempt(302, 40), attempt(299, 50, dOther)])
          await r.webhooks.addAttempt(a);
      });
      const since = (ms: number, id = endpoint.id) => tx(uow(), (r) => r.webhooks.succeededSince(id, at(ms)));
      expect(await since(0)).toBe(true);
      expect(await since(10)).toBe(true);
      expect(await since(11)).toBe(false);
      expect(await since(0, other.id)).toBe(true);
      expect(await since(51, other.id)).toBe(false);
      expect(await since(0, randomUUID())).toBe(false);
      expect(await tx(uow(), (r) => r.webhooks.getEventForDelivery(event.id))).toEqual(event);
      expect(await tx(uow(), (r) => r.webhooks.getEventForDelivery(randomUUID()))).toBeUndefined();
    });
  });
}

/** Every repository and unit-of-work contract, for one adapter. */
export function describeRepositoryContracts(name: string, uow: UnitOfWorkFactory): void {
  describeOrganisationAndKeyContracts(name, uow);
  describeCatalogRepositoryContracts(name, uow);
  describeSubscriptionRepositoryContracts(name, uow);
  describeWebhookRepositoryContracts(name, uow);
  describeUnitOfWorkContract(name, uow);
}
export * from './signature-scheme';
export * from './payment-provider';
export * from './cache-coherence';
export * from './webhook-sender';
export * from './usage';
export * from './signed-links';
export * from './key-cipher';
