/* A catalog write and an archive at once, on a PostgreSQL server (collected only with
   TEST_DATABASE_URL). Catalog writes read the product (and plan) they save under its row lock
   (getForUpdate), in the transaction of the write: an archive committed meanwhile is never written
   over (un-archived) from an older read, and nothing is written into a record archived meanwhile.
   Each test stops the writer just after its read, starts the archive, and checks who waited. */
import type { Repositories, UnitOfWork } from '@tollgate/core';
import { createTestCore, seedSample, type TestCore } from '@tollgate/core/testing';
import { createTestDatabase, type TestDatabase } from '../src';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('postgres', { poolSize: 6 });
});
afterAll(() => db?.drop());

type Read = 'product' | 'plan';
/**
 * The database's unit of work; `hook` runs after a read of a product or plan (`locked`: under its row
 * lock), once: it is disarmed when it returns true.
 */
class Hooked implements UnitOfWork {
  hook: ((read: Read, locked: boolean) => Promise<boolean>) | undefined;
  constructor(private readonly inner: UnitOfWork) {}
  read<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    return this.inner.read(work);
  }
  run<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    return this.inner.run((r) => {
      const after = async <X>(read: Read, locked: boolean, x: X) => {
        const hook = this.hook;
        this.hook = undefined;
        if (hook && !(await hook(read, locked))) this.hook ??= hook;
        return x;
      };
      const products = {
        ...r.products,
        get: async (id: string) => after('product', false, await r.products.get(id)),
        getForUpdate: async (id: string) => after('product', true, await r.products.getForUpdate(id)),
      };
      const plans = {
        ...r.plans,
        get: async (id: string) => after('plan', false, await r.plans.get(id)),
        getForUpdate: async (id: string) => after('plan', true, await r.plans.getForUpdate(id)),
      };
      return work(new Proxy(r, { get: (t, k) => (k === 'products' ? products : k === 'plans' ? plans : Reflect.get(t, k)) }));
    });
  }
}

/** The promise's outcome once settled, and whether it had settled `ms` after it started. */
async function settledWithin<T>(p: Promise<T>, ms: number) {
  let settled = false;
  const outcome = p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  void outcome.then(() => (settled = true));
  await new Promise((resolve) => setTimeout(resolve, ms));
  return { settledBefore: settled, outcome };
}

async function setUp(name: string) {
  const uow = new Hooked(db.uow);
  const core: TestCore = createTestCore({ uow });
  const { tenant, keys } = await seedSample(core, name);
  return { uow, core, tenant, productId: keys['products.notes'], planId: keys['plans.notes.team'] };
}

it('an entitlement created while the product is archived never un-archives it (the archive waits for it)', async () => {
  const { uow, core, tenant, productId } = await setUp('archive-locks-entitlement');
  let archive: Awaited<ReturnType<typeof settledWithin<unknown>>> | undefined;
  uow.hook = async (read) => {
    if (read !== 'product') return false;
    archive = await settledWithin(core.products.archiveProduct(tenant, productId), 300);
    return true;
  };
  await core.entitlementAdmin.create(tenant, { name: 'raced_one', productId });
  expect(archive?.settledBefore).toBe(false);
  expect((await archive!.outcome).ok).toBe(true);
  const product = await core.products.getProduct(tenant, productId);
  expect(product.archivedAt).not.toBeNull();
  expect(product.capabilities.map((c) => c.name)).toContain('raced_one');
});

it('an entitlement asked for while the archive holds the product is refused (PRODUCT_ARCHIVED), and the archive keeps what it read', async () => {
  const { uow, core, tenant, productId } = await setUp('archive-locks-entitlement-after');
  let create: Awaited<ReturnType<typeof settledWithin<unknown>>> | undefined;
  uow.hook = async (read) => {
    if (read !== 'product') return false;
    create = await settledWithin(core.entitlementAdmin.create(tenant, { name: 'late_one', productId }), 300);
    return true;
  };
  await core.products.archiveProduct(tenant, productId);
  expect(create?.settledBefore).toBe(false);
  expect(await create!.outcome).toMatchObject({ ok: false, error: { code: 'PRODUCT_ARCHIVED' } });
  const product = await core.products.getProduct(tenant, productId);
  expect(product.archivedAt).not.toBeNull();
  expect(product.capabilities.map((c) => c.name)).not.toContain('late_one');
});

it('a plans/save of a plan archived after its first read is refused (PLAN_ARCHIVED): the plan stays archived', async () => {
  const { uow, core, tenant, planId } = await setUp('archive-locks-plan-save');
  // The save has looked the plan up (no lock yet): the plan is archived now, at once.
  uow.hook = async (read) => {
    if (read !== 'plan') return false;
    await core.plans.archivePlan(tenant, planId);
    return true;
  };
  await expect(core.plans.savePlan(tenant, { id: planId, name: 'Renamed' })).rejects.toMatchObject({ code: 'PLAN_ARCHIVED' });
  const after = (await core.plans.getPlan(tenant, planId)).plan;
  expect(after.archivedAt).not.toBeNull();
  expect(after.name).not.toBe('Renamed');
});

it('an archive of a plan a plans/save holds waits for it, and the plan ends archived', async () => {
  const { uow, core, tenant, planId } = await setUp('archive-locks-plan-save-held');
  let archive: Awaited<ReturnType<typeof settledWithin<unknown>>> | undefined;
  uow.hook = async (read, locked) => {
    if (read !== 'plan' || !locked) return false;
    archive = await settledWithin(core.plans.archivePlan(tenant, planId), 300);
    return true;
  };
  await core.plans.savePlan(tenant, { id: planId, name: 'Renamed first' });
  expect(archive?.settledBefore).toBe(false);
  expect((await archive!.outcome).ok).toBe(true);
  const after = (await core.plans.getPlan(tenant, planId)).plan;
  expect(after).toMatchObject({ name: 'Renamed first' });
  expect(after.archivedAt).not.toBeNull();
});

it('a line item change racing the archive of its plan never un-archives it (refused after, or the archive waits)', async () => {
  const { uow, core, tenant, planId } = await setUp('archive-locks-parts');
  const li = (await core.plans.getPlan(tenant, planId)).plan.lineItems[0];
  const change = { ...li, isActive: true, meterSlug: undefined, unitLabel: li.unitLabel, nickname: 'raced' };
  // Archived just after the change's first read of the plan.
  uow.hook = async (read) => {
    if (read !== 'plan') return false;
    await core.plans.archivePlan(tenant, planId);
    return true;
  };
  await expect(core.pricingParts.updateLineItem(tenant, li.id, change)).rejects.toMatchObject({ code: 'PLAN_ARCHIVED' });
  expect((await core.plans.getPlan(tenant, planId)).plan.archivedAt).not.toBeNull();

  const other = await setUp('archive-locks-parts-held');
  const li2 = (await other.core.plans.getPlan(other.tenant, other.planId)).plan.lineItems[0];
  let archive: Awaited<ReturnType<typeof settledWithin<unknown>>> | undefined;
  other.uow.hook = async (read, locked) => {
    if (read !== 'plan' || !locked) return false;
    archive = await settledWithin(other.core.plans.archivePlan(other.tenant, other.planId), 300);
    return true;
  };
  await other.core.pricingParts.updateLineItem(other.tenant, li2.id, { ...change, name: li2.name, slug: li2.slug });
  expect(archive?.settledBefore).toBe(false);
  expect((await archive!.outcome).ok).toBe(true);
  const plan = (await other.core.plans.getPlan(other.tenant, other.planId)).plan;
  expect(plan.archivedAt).not.toBeNull();
  expect(plan.lineItems[0].nickname).toBe('raced');
});
