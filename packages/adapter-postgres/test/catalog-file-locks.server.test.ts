/* A catalog-file import and other writes at once, on a PostgreSQL server (collected only with
   TEST_DATABASE_URL). The import reads the products it writes under their row locks (getForUpdate,
   in id order) before any plan, in its one transaction; every write of a plan locks its product
   first, so the import reads the plans without their locks: an archive committed meanwhile is never
   written over (un-archived) from an older read, nothing is written into a record archived
   meanwhile, two imports naming the same products in any order wait for each other instead of
   deadlocking, and one that waited sees the products the other made. Each test stops the import
   just after a read, starts the other write, and checks who waited (model:
   catalog-archive-locks.server.test.ts). */
import type { CatalogFile, Repositories, UnitOfWork } from '@tollgate/core';
import { createTestCore, sampleCatalog, seedSample, type TestCore } from '@tollgate/core/testing';
import { createTestDatabase, type TestDatabase } from '../src';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('postgres', { poolSize: 6 });
});
afterAll(() => db?.drop());

type Read = 'product' | 'plan' | 'currency';
/**
 * The database's unit of work; `hook` runs after a lookup of a product or plan (`locked`: under its
 * row lock), or a currency's insert (`locked`: its key is held until the transaction ends), once: it
 * is disarmed when it returns true.
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
      const products: Repositories['products'] = {
        ...r.products,
        get: async (id) => after('product', false, await r.products.get(id)),
        findByKey: async (t, key) => after('product', false, await r.products.findByKey(t, key)),
        getForUpdate: async (id) => after('product', true, await r.products.getForUpdate(id)),
      };
      const plans: Repositories['plans'] = {
        ...r.plans,
        get: async (id) => after('plan', false, await r.plans.get(id)),
        findByKey: async (productId, key) => after('plan', false, await r.plans.findByKey(productId, key)),
        getForUpdate: async (id) => after('plan', true, await r.plans.getForUpdate(id)),
      };
      const currencies: Repositories['currencies'] = {
        ...r.currencies,
        save: async (c) => after('currency', true, await r.currencies.save(c)),
      };
      const swapped: Partial<Record<PropertyKey, unknown>> = { products, plans, currencies };
      return work(new Proxy(r, { get: (t, k) => swapped[k] ?? Reflect.get(t, k) }));
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

/** The sample catalog with the product, or its `team` plan, renamed. */
function renamed(name: string, what: 'product' | 'team'): CatalogFile {
  const file = sampleCatalog(name);
  const [product] = file.products ?? [];
  return {
    ...file,
    products: [
      what === 'product'
        ? { ...product, displayName: 'Renamed notes' }
        : { ...product, plans: (product.plans ?? []).map((p) => (p.key === 'team' ? { ...p, displayName: 'Renamed team' } : p)) },
    ],
  };
}

// The import reads plans without their row locks: its product's lock, which every write of a plan
// takes first (catalog/locks.ts), keeps them as read until it commits.
it('an archive of a plan the import has looked up waits for the import (it holds the product), and the plan ends archived', async () => {
  const { uow, core, tenant, planId } = await setUp('file-locks-plan');
  let archive: Awaited<ReturnType<typeof settledWithin<unknown>>> | undefined;
  // The import has found the plan by its key (not yet under the plan's lock).
  uow.hook = async (read, locked) => {
    if (read !== 'plan' || locked) return false;
    archive = await settledWithin(core.plans.archivePlan(tenant, planId), 300);
    return true;
  };
  await core.importer.apply(renamed('file-locks-plan', 'team'));
  expect(archive?.settledBefore).toBe(false);
  expect((await archive!.outcome).ok).toBe(true);
  const plan = (await core.plans.getPlan(tenant, planId)).plan;
  expect(plan.displayName).toBe('Renamed team');
  expect(plan.archivedAt).not.toBeNull();
});

it('a product archived after the import looked it up is seen under the lock: the import is refused (PRODUCT_ARCHIVED), the product stays archived', async () => {
  const { uow, core, tenant, productId } = await setUp('file-locks-product');
  // The import has found the product by its key, no lock yet: the product is archived now, at once.
  uow.hook = async (read, locked) => {
    if (read !== 'product' || locked) return false;
    await core.products.archiveProduct(tenant, productId);
    return true;
  };
  await expect(core.importer.apply(renamed('file-locks-product', 'product'))).rejects.toMatchObject({ code: 'PRODUCT_ARCHIVED' });
  const product = await core.products.getProduct(tenant, productId);
  expect(product.archivedAt).not.toBeNull();
  expect(product.displayName).not.toBe('Renamed notes');
});

it('an archive of a product the import holds waits for it, and the product ends archived with the import’s change', async () => {
  const { uow, core, tenant, productId } = await setUp('file-locks-product-held');
  let archive: Awaited<ReturnType<typeof settledWithin<unknown>>> | undefined;
  uow.hook = async (read, locked) => {
    if (read !== 'product' || !locked) return false;
    archive = await settledWithin(core.products.archiveProduct(tenant, productId), 300);
    return true;
  };
  await core.importer.apply(renamed('file-locks-product-held', 'product'));
  expect(archive?.settledBefore).toBe(false);
  expect((await archive!.outcome).ok).toBe(true);
  const product = await core.products.getProduct(tenant, productId);
  expect(product.displayName).toBe('Renamed notes');
  expect(product.archivedAt).not.toBeNull();
});

/** The sample catalog with a second product (`other`), the products in the order given. */
function twoProducts(name: string, order: ('notes' | 'other')[]): CatalogFile {
  const file = sampleCatalog(name);
  const [notes] = file.products ?? [];
  const byKey = { notes: { ...notes, displayName: `Notes (${order.join(', ')})` }, other: { key: 'other', name: 'Other' } };
  return { ...file, products: order.map((k) => byKey[k] as NonNullable<CatalogFile['products']>[number]) };
}

it('two imports naming the same products in other orders wait for each other, without a deadlock, and both succeed', async () => {
  const { uow, core, tenant } = await setUp('file-locks-orders');
  await core.importer.apply(twoProducts('file-locks-orders', ['notes', 'other']));
  let second: Awaited<ReturnType<typeof settledWithin<unknown>>> | undefined;
  // The first holds its first product's lock; the second starts then, naming the products the other way round.
  uow.hook = async (read, locked) => {
    if (read !== 'product' || !locked) return false;
    second = await settledWithin(core.importer.apply(twoProducts('file-locks-orders', ['other', 'notes'])), 300);
    return true;
  };
  await core.importer.apply(twoProducts('file-locks-orders', ['notes', 'other']));
  expect(second?.settledBefore).toBe(false);
  const outcome = await second!.outcome;
  expect(outcome).toMatchObject({ ok: true });
  expect((await core.products.getProduct(tenant, (await core.importer.lookUp(tenant, 'notes')).productId!)).displayName).toBe(
    'Notes (other, notes)',
  );
});

it('an import that waited for another of the same file sees the product the other made (no 409 on its key)', async () => {
  const { uow, core, tenant } = await setUp('file-locks-made');
  const file = twoProducts('file-locks-made', ['notes', 'other']);
  let second: Awaited<ReturnType<typeof settledWithin<Awaited<ReturnType<TestCore['importer']['apply']>>>>> | undefined;
  // The first holds `notes` and has not made `other` yet; the second looks both up, waits for `notes`.
  uow.hook = async (read, locked) => {
    if (read !== 'product' || !locked) return false;
    second = await settledWithin(core.importer.apply(file), 300);
    return true;
  };
  const first = await core.importer.apply(file);
  expect(first.changes).toContainEqual({ key: 'products.other', change: 'created' });
  expect(second?.settledBefore).toBe(false);
  const outcome = await second!.outcome;
  expect(outcome).toMatchObject({ ok: true, value: { created: 0, updated: 0 } });
  expect(outcome.ok && outcome.value.keys['products.other']).toBe(first.keys['products.other']);
  expect((await core.importer.lookUp(tenant, 'other')).productId).toBe(first.keys['products.other']);
});

it('two imports adding the same new currencies in other orders insert them in one order: no deadlock', async () => {
  const { uow, core } = await setUp('file-locks-currencies');
  const file = (key: string, currencies: string[]): CatalogFile => ({
    organisation: 'file-locks-currencies',
    products: [{ key, name: key, currencies } as NonNullable<CatalogFile['products']>[number]],
  });
  let second: Awaited<ReturnType<typeof settledWithin<unknown>>> | undefined;
  // The first has inserted its first new code (uncommitted); the second starts then, naming them the other way round.
  uow.hook = async (read) => {
    if (read !== 'currency') return false;
    second = await settledWithin(core.importer.apply(file('southern', ['SEK', 'NOK'])), 300);
    return true;
  };
  const started = Date.now();
  await core.importer.apply(file('northern', ['NOK', 'SEK']));
  // Not a deadlock PostgreSQL breaks after deadlock_timeout (1 s): the first never waited for the second.
  expect(Date.now() - started).toBeLessThan(1000);
  expect(second?.settledBefore).toBe(false);
  // The second waited on the first's insert of the same code: refused at once as a key written
  // meanwhile (the currency's unique code), and taken when tried again.
  const outcome = await second!.outcome;
  expect(outcome).toMatchObject({ ok: false, error: { code: 'CONFLICT', message: expect.stringMatching(/same identity/) } });
  await core.importer.apply(file('southern', ['SEK', 'NOK']));
});
