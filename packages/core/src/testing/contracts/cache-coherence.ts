/* The per-instance caches stay exact across instances (DESIGN section 11): a change committed
   through instance A is seen by instance B's next check; while B cannot hear changes it answers from
   the database; expiry and grace stay exact from cached snapshots. Run on every change feed: the
   in-memory one, PGlite's, and a PostgreSQL server's. */
import { randomUUID } from 'node:crypto';
import type { Tenant } from '../../model';
import { seedSample, sampleCatalog, type TestCore } from '../harness';

export interface CoherenceWorld {
  /** Two instances on one database, each hearing the change feed through its own listener. */
  a: TestCore;
  b: TestCore;
  /** B's listener is lost (the connection dropped); resolves once B knows it. */
  dropB(): Promise<void>;
  /** B listens again; resolves once it does. */
  restoreB(): Promise<void>;
  /** Waits until a change committed through A has reached B's listener (a feed delivers shortly after commit). */
  settle(): Promise<void>;
  close(): Promise<void>;
}

export function describeCacheCoherenceContract(name: string, world: () => Promise<CoherenceWorld>): void {
  describe(`${name}: cache coherence across instances`, () => {
    let w: CoherenceWorld;
    let tenant: Tenant;
    let keys: Record<string, string>;
    let org: string;
    beforeAll(async () => {
      w = await world();
      org = `coherence-${randomUUID().slice(0, 8)}`;
      ({ tenant, keys } = await seedSample(w.a, org));
    });
    afterAll(() => w?.close());

    const check = (core: TestCore, granteeIds: string[], graceDays = 0) =>
      core.checks.check(tenant, { productId: keys['products.notes'], granteeIds, graceDays, encoding: 'der' });
    /**
     * The capabilities of one grantee, asked three times: the first may load, the second answers
     * from memory and keeps its answer, the third is answered with the kept answer. All must agree.
     */
    const caps = async (core: TestCore, grantee: string, graceDays = 0) => {
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push((await check(core, [grantee], graceDays))?.capabilities ?? []);
      expect(answers[1]).toEqual(answers[0]);
      expect(answers[2]).toEqual(answers[0]);
      return answers[0];
    };
    const buy = (grantee: string, plan = 'plans.notes.team', quantity = 2) =>
      w.a.checkout.completePurchase({
        planId: keys[plan],
        member: 'buyer@example.com',
        email: null,
        granteeId: grantee,
        quantity,
        currency: 'USD',
        paymentProvider: 'fake',
        paymentSubscriptionId: null,
        paymentCustomerId: null,
      });

    it("sees a license created, reassigned and canceled through A at B's next check", async () => {
      expect(await caps(w.b, 'ann')).toEqual([]);
      expect(w.b.checkCache.stats().live).toBe(true);
      const { subscription } = await buy('ann');
      await w.settle();
      expect(await caps(w.b, 'ann')).toEqual(['edit', 'export']);
      // Reassigned: ann loses it, bob gains it.
      const [license] = (await w.a.licenses.list(tenant, { subscriptionId: subscription.id })).filter((l) => l.granteeId === 'ann');
      expect(await caps(w.b, 'bob')).toEqual([]);
      await w.a.licenses.batchUpdate(tenant, [{ uuid: license.id, granteeId: 'bob' }]);
      await w.settle();
      expect(await caps(w.b, 'ann')).toEqual([]);
      expect(await caps(w.b, 'bob')).toEqual(['edit', 'export']);
      // The subscription canceled now: its licenses end.
      await w.a.subscriptions.cancel(tenant, subscription.id, 'now');
      await w.settle();
      expect(await caps(w.b, 'bob')).toEqual([]);
    });

    it("sees a plan's capabilities changed through A", async () => {
      await buy('cat', 'plans.notes.free', 1);
      await w.settle();
      expect(await caps(w.b, 'cat')).toEqual(['edit']);
      const file = sampleCatalog(org);
      const product = file.products?.[0];
      const free = product?.plans?.find((p) => p.key === 'free');
      if (!free) throw new Error('the sample catalog has a free plan');
      free.capabilities = ['edit', 'export'];
      await w.a.importer.apply(file);
      await w.settle();
      expect(await caps(w.b, 'cat')).toEqual(['edit', 'export']);
    });

    it('refuses a key revoked through A at once on B, and signs with a key rotated through A', async () => {
      const { plaintext, record } = await w.a.apiKeys.create({ organisation: org, scopes: ['*'], isTest: false });
      expect((await w.b.apiKeys.authenticate(plaintext)).id).toBe(record.id);
      expect((await w.b.apiKeys.authenticate(plaintext)).id).toBe(record.id);
      await w.a.apiKeys.revoke(record.id);
      await w.settle();
      await expect(w.b.apiKeys.authenticate(plaintext)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });

      await buy('dot');
      await w.settle();
      await check(w.b, ['dot']);
      await check(w.b, ['dot']);
      const before = await check(w.b, ['dot']);
      // Asked again with nothing changed: the kept answer itself.
      expect(await check(w.b, ['dot'])).toBe(before);
      const rotated = await w.a.signing.rotate(tenant);
      await w.settle();
      const after = await check(w.b, ['dot']);
      expect(after?.publicHash).not.toBe(before?.publicHash);
      expect(after?.publicHash).toBe((await check(w.a, ['dot']))?.publicHash);
      expect((await w.b.signing.current(tenant)).id).toBe(rotated.id);
    });

    it('answers from the database while B cannot hear changes, and fills its cache again once it does', async () => {
      await buy('eve');
      await w.settle();
      expect(await caps(w.b, 'eve')).toEqual(['edit', 'export']);
      await w.dropB();
      // What B held stays in memory for a database outage's grace, but is not used.
      expect(w.b.checkCache.stats().live).toBe(false);
      const held = w.b.checkCache.stats().entries;
      const { subscription } = await buy('fay');
      const eve = (await w.a.licenses.list(tenant, {})).find((l) => l.granteeId === 'eve');
      await w.a.licenses.batchUpdate(tenant, [{ uuid: eve?.id as string, granteeId: null }]);
      // Unheard changes, yet B is exact: it reads the database.
      expect(await caps(w.b, 'fay')).toEqual(['edit', 'export']);
      expect(await caps(w.b, 'eve')).toEqual([]);
      // Nothing was kept meanwhile (unless B's feed, which reconnects by itself, is back already).
      if (!w.b.checkCache.stats().live) expect(w.b.checkCache.stats().entries).toBe(held);
      await w.restoreB();
      expect(w.b.checkCache.stats().live).toBe(true);
      expect(await caps(w.b, 'fay')).toEqual(['edit', 'export']);
      expect(w.b.checkCache.stats().entries).toBeGreaterThan(0);
      await w.a.subscriptions.cancel(tenant, subscription.id, 'now');
      await w.settle();
      expect(await caps(w.b, 'fay')).toEqual([]);
    });

    it('keeps expiry and grace exact from a cached snapshot (the clock, no invalidation)', async () => {
      const { subscription } = await buy('gus');
      await w.settle();
      const end = (await w.a.subscriptions.get(tenant, subscription.id)).subscription.currentPeriodEnd;
      w.b.clock.set(new Date(end.getTime() - 1000));
      expect(await caps(w.b, 'gus')).toEqual(['edit', 'export']);
      const entries = w.b.checkCache.stats().entries;
      w.b.clock.set(new Date(end.getTime() + 1000));
      expect(await caps(w.b, 'gus')).toEqual([]);
      expect(await caps(w.b, 'gus', 2)).toEqual(['edit', 'export']);
      w.b.clock.set(new Date(end.getTime() + 3 * 86_400_000));
      expect(await caps(w.b, 'gus', 2)).toEqual([]);
      // All of it from the cached snapshot.
      expect(w.b.checkCache.stats().entries).toBe(entries);
      w.b.clock.set(w.a.clock.now());
    });

    it('keeps an answer only while its snapshots, signing key and capability ends hold', async () => {
      await buy('hal');
      await w.settle();
      await check(w.b, ['hal', 'ivy']);
      const first = await check(w.b, ['hal', 'ivy']);
      expect(await check(w.b, ['hal', 'ivy'])).toBe(first);
      // Another question (the grantees in another order, another encoding) is answered on its own.
      expect(await check(w.b, ['ivy', 'hal'])).not.toBe(first);
      // A license of one of the grantees changes (ivy gets one that does not end): a new answer.
      await w.a.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'ivy@example.com', granteeId: 'ivy' }]);
      await w.settle();
      const reloaded = await check(w.b, ['hal', 'ivy']);
      expect(reloaded).not.toBe(first);
      const second = await check(w.b, ['hal', 'ivy']);
      expect(await check(w.b, ['hal', 'ivy'])).toBe(second);
      // A rotated signing key: a new answer, signed under it.
      await w.a.signing.rotate(tenant);
      await w.settle();
      const resigned = await check(w.b, ['hal', 'ivy']);
      expect(resigned).not.toBe(second);
      expect(resigned?.publicHash).not.toBe(second?.publicHash);
      // (A capability's end passing is the expiry test's case: `caps` asks three times, so its
      // answers before the clock moves are kept ones.)
    });

    it('agrees with A after a product is archived through A (last: archiving is final)', async () => {
      expect(await caps(w.b, 'cat')).toEqual(['edit', 'export']);
      await w.a.products.archiveProduct(tenant, keys['products.notes']);
      await w.settle();
      // Archiving a product ends no license (paying customers keep their access): B agrees with A.
      expect(await caps(w.b, 'cat')).toEqual(await caps(w.a, 'cat'));
      expect((await check(w.b, ['cat']))?.capabilities).toEqual((await check(w.a, ['cat']))?.capabilities);
    });
  });
}
