import { isCheckableGranteeId, type DomainError } from '../src';
import { buyPlan, createTestCore, rejectionOf, seedSample } from '../src/testing';

/* A grantee id the license check's `granteeIds` (`a,b` / `[a,b]`, items trimmed and unquoted) cannot
   read back is refused wherever a grantee id is written, naming the field (the bad-input audit:
   `team,user-7` was sold but never checked). */
const UNREADABLE = ['a,b', ' a', 'a ', '\ta', 'a\n', '[a', 'a]', '[a]', '"a', "a'", "'a'", '', ','];
const READABLE = ['a', 'user-7', "o'neil", 'a b', 'a[1]x', 'grp_x', 'é', 'x"y', 'user@example.com'];

const refusal = (e: DomainError) => ({
  code: e.code,
  property: e.details?.[0]?.property,
  readBack: /could not read it back/.test(e.message),
});
const refusedAs = (property: string) => ({ code: 'VALIDATION_FAILED', property, readBack: true });

async function world() {
  const core = createTestCore();
  const { tenant, keys } = await seedSample(core, `gid-${Math.random()}`);
  return { core, tenant, keys };
}

describe('grantee ids the check cannot read back', () => {
  it('the rule: a comma, a blank at either end, a leading [ or quote, a trailing ] or quote', () => {
    for (const id of UNREADABLE) expect([id, isCheckableGranteeId(id)]).toEqual([id, false]);
    for (const id of READABLE) expect([id, isCheckableGranteeId(id)]).toEqual([id, true]);
  });

  it('an id longer than the check reads (GRANTEE_ID_MAX_LENGTH) is refused where written: a checkout link, a subscription', async () => {
    const { core, tenant, keys } = await world();
    const long = 'g'.repeat(321);
    const link = { successUrl: 'https://x.example/ok', cancelUrl: 'https://x.example/no', member: 'm@example.com' };
    const refused = async (p: Promise<unknown>) => {
      const e = await rejectionOf(p);
      return { code: e.code, property: e.details?.[0]?.property, long: /at most 320 characters/.test(e.message) };
    };
    expect(await refused(core.checkout.checkoutLink(tenant, keys['plans.notes.business'], { ...link, granteeId: long }))).toEqual({
      code: 'VALIDATION_FAILED',
      property: 'granteeId',
      long: true,
    });
    const team = keys['plans.notes.team'];
    expect(await refused(core.subscriptionAdmin.create(tenant, { planId: team, owner: 'o', granteeId: long, quantity: 2 }))).toEqual({
      code: 'VALIDATION_FAILED',
      property: 'granteeId',
      long: true,
    });
    // 320 characters are still sold.
    await expect(
      core.checkout.checkoutLink(tenant, keys['plans.notes.business'], { ...link, granteeId: 'g'.repeat(320) }),
    ).resolves.toBeDefined();
  });

  it('licenses: created ad hoc, batch-updated and updated', async () => {
    const { core, tenant, keys } = await world();
    const planUuid = keys['plans.notes.free'];
    expect(refusal(await rejectionOf(core.licenses.createAdHoc(tenant, [{ planUuid, member: 'm', granteeId: 'a,b' }])))).toEqual(
      refusedAs('granteeId'),
    );
    const two = [
      { planUuid, member: 'm', granteeId: 'ok' },
      { planUuid, member: 'm', granteeId: '[x]' },
    ];
    expect(refusal(await rejectionOf(core.licenses.createAdHoc(tenant, two)))).toEqual(refusedAs('[1].granteeId'));
    const { licenses } = await core.licenses.createAdHoc(tenant, [{ planUuid, member: 'm', granteeId: 'ok' }]);
    const uuid = licenses[0].id;
    expect(refusal(await rejectionOf(core.licenses.batchUpdate(tenant, [{ uuid, granteeId: 'b,c' }])))).toEqual(refusedAs('[0].granteeId'));
    expect(refusal(await rejectionOf(core.licenses.update(tenant, uuid, { granteeId: ' b' })))).toEqual(refusedAs('granteeId'));
    expect((await core.licenses.get(tenant, uuid)).granteeId).toBe('ok');
  });

  it('checkout links, direct and service-only subscriptions, seats and plan items', async () => {
    const { core, tenant, keys } = await world();
    const link = { successUrl: 'https://x.example/ok', cancelUrl: 'https://x.example/no', member: 'm@example.com' };
    expect(
      refusal(await rejectionOf(core.checkout.checkoutLink(tenant, keys['plans.notes.business'], { ...link, granteeId: 'a,b' }))),
    ).toEqual(refusedAs('granteeId'));
    const team = keys['plans.notes.team'];
    expect(
      refusal(await rejectionOf(core.subscriptionAdmin.create(tenant, { planId: team, owner: 'o', granteeId: 'a,b', quantity: 2 }))),
    ).toEqual(refusedAs('granteeId'));
    expect(
      refusal(
        await rejectionOf(
          core.subscriptionDirectory.createServiceOnly(tenant, {
            plans: [{ planId: team }],
            owner: 'o',
            grantee: '"a"',
            interval: 'month',
            intervalCount: 1,
          }),
        ),
      ),
    ).toEqual(refusedAs('grantee'));
    const { subscription } = await buyPlan(core, team, 3, 'ann');
    expect(
      refusal(await rejectionOf(core.subscriptionAdmin.manageSeats(tenant, subscription.id, [{ type: 'assign', granteeId: 'b,c' }]))),
    ).toEqual(refusedAs('[0].granteeId'));
    expect(
      refusal(
        await rejectionOf(
          core.subscriptionAdmin.manageSeats(tenant, subscription.id, [
            { type: 'assign', granteeId: 'bob' },
            { type: 'replace', granteeId: 'ann', newGranteeId: 'ann ' },
          ]),
        ),
      ),
    ).toEqual(refusedAs('[1].newGranteeId'));
    expect(
      refusal(
        await rejectionOf(
          core.subscriptionItems.change(
            tenant,
            subscription.id,
            [{ kind: 'add', planId: keys['plans.notes.free'], at: 'items[0]', granteeId: 'a,b' }],
            'none' as never,
          ),
        ),
      ),
    ).toEqual(refusedAs('items[0].grantee'));
    // A session made before the rule (its grantee stored as it was): paid at the provider, it completes.
    const { sessionId } = await core.checkout.sessionLink(tenant, team, { ...link, granteeId: 'ok', quantity: 2 });
    await core.uow.run(async (r) => {
      const stored = await r.checkoutSessions.get(sessionId);
      if (stored) await r.checkoutSessions.save({ ...stored, granteeId: 'legacy,id' });
    });
    const done = await core.checkout.completeCheckout(sessionId, { paymentSubscriptionId: 'sub_legacy' });
    expect(done.status).toBe('completed');
    // ...and so does one completed on the provider's own pages (the sandbox, the free checkout: no provider subscription).
    const unpaid = await core.checkout.sessionLink(tenant, team, { ...link, granteeId: 'ok', quantity: 2 });
    await core.uow.run(async (r) => {
      const stored = await r.checkoutSessions.get(unpaid.sessionId);
      if (stored) await r.checkoutSessions.save({ ...stored, granteeId: 'legacy,id' });
    });
    expect((await core.checkout.completeCheckout(unpaid.sessionId, {})).status).toBe('completed');
  });

  it('grantees, groups and their members; catalog checkouts and carts (a missing grantee is the owner)', async () => {
    const { core, tenant, keys } = await world();
    expect(refusal(await rejectionOf(core.grantees.create(tenant, { granteeId: 'a,b' })))).toEqual(refusedAs('granteeId'));
    const ann = await core.grantees.create(tenant, { granteeId: 'ann' });
    expect(refusal(await rejectionOf(core.grantees.update(tenant, ann.id, { granteeId: '[ann]' })))).toEqual(refusedAs('granteeId'));
    expect(
      refusal(await rejectionOf(core.groups.create(tenant, { owner: 'o', grantees: [{ granteeId: 'x' }, { granteeId: 'y,z' }] }))),
    ).toEqual(refusedAs('grantees[1].granteeId'));
    const group = await core.groups.create(tenant, { owner: 'o', grantees: [{ granteeId: 'ann' }] });
    expect(refusal(await rejectionOf(core.groups.update(tenant, group.id, { grantees: [{ id: ann.id, granteeId: 'ann,' }] })))).toEqual(
      refusedAs('grantees[0].granteeId'),
    );
    expect(refusal(await rejectionOf(core.groups.manage(tenant, group.id, [{ type: 'add', granteeId: "'bo'" }])))).toEqual(
      refusedAs('[0].granteeId'),
    );
    const business = keys['plans.notes.business'];
    const quick = {
      planId: business,
      interval: 'month',
      intervalCount: 1,
      successUrl: 'https://x.example/ok',
      cancelUrl: 'https://x.example/no',
    };
    expect(refusal(await rejectionOf(core.quickCheckout.link(tenant, { ...quick, owner: 'o', grantee: 'a,b' } as never)))).toEqual(
      refusedAs('grantee'),
    );
    expect(refusal(await rejectionOf(core.quickCheckout.link(tenant, { ...quick, owner: 'Doe, Jo' } as never)))).toEqual(
      refusedAs('owner'),
    );
    const cart = await core.carts.create(tenant, { owner: 'Doe, Jo', interval: 'month', intervalCount: 1 });
    expect(
      refusal(
        await rejectionOf(
          core.carts.addItem(tenant, { cartId: cart.id, planId: business, grantee: 'a,b', interval: 'month', intervalCount: 1 }),
        ),
      ),
    ).toEqual(refusedAs('grantee'));
    const { item } = await core.carts.addItem(tenant, { cartId: cart.id, planId: business, interval: 'month', intervalCount: 1 });
    expect(
      refusal(
        await rejectionOf(
          core.carts.replace(tenant, cart.id, { currency: null, owner: 'Doe, Jo', cartItems: [{ id: item.id, granteeId: ' x' }] }),
        ),
      ),
    ).toEqual(refusedAs('cartItems[0].granteeId'));
    expect(
      refusal(
        await rejectionOf(
          core.carts.checkoutLink(tenant, cart.id, { successUrl: 'https://x.example/ok', cancelUrl: 'https://x.example/no' }),
        ),
      ),
    ).toEqual(refusedAs('owner'));
  });
});

/* Review follow-ups: an id stored before the rule (`a,b`) may be sent back unchanged (v2's update
   requires granteeId; v1's batch re-sends it; a group's member added again); a new one is refused,
   named where it stands; the owner's refusal says why the owner is asked. */
describe('grantee ids stored before the rule', () => {
  /** A license of the tenant whose grantee id was written before the rule (as the store holds it). */
  async function storedAs(core: Awaited<ReturnType<typeof world>>['core'], licenseId: string, granteeId: string) {
    await core.uow.run(async (r) => {
      const l = await r.licenses.get(licenseId);
      if (l) await r.licenses.saveMany([{ ...l, granteeId }]);
    });
  }

  it("a license's own id is sent back unchanged: its end moves (v2 update), a batch keeps it; a new unreadable one is refused", async () => {
    const { core, tenant, keys } = await world();
    const planUuid = keys['plans.notes.free'];
    const { licenses } = await core.licenses.createAdHoc(tenant, [
      { planUuid, member: 'm', granteeId: 'ok' },
      { planUuid, member: 'm', granteeId: 'other' },
    ]);
    const [legacy, plain] = licenses.map((l) => l.id);
    await storedAs(core, legacy, 'a,b');
    const endTime = new Date(Date.now() + 30 * 86_400_000);
    const moved = await core.licenses.update(tenant, legacy, { granteeId: 'a,b', endTime });
    expect([moved.licenses[0].granteeId, moved.licenses[0].endTime?.getTime()]).toEqual(['a,b', endTime.getTime()]);
    const batch = await core.licenses.batchUpdate(tenant, [
      { uuid: plain, granteeId: 'plain' },
      { uuid: legacy, granteeId: 'a,b' },
    ]);
    expect(batch.licenses.map((l) => l.granteeId)).toEqual(['plain', 'a,b']);
    // Another unreadable id is still refused, named where it stands; nothing of the batch is written.
    expect(
      refusal(
        await rejectionOf(
          core.licenses.batchUpdate(tenant, [
            { uuid: legacy, granteeId: 'a,b' },
            { uuid: plain, granteeId: 'c,d' },
          ]),
        ),
      ),
    ).toEqual(refusedAs('[1].granteeId'));
    expect(refusal(await rejectionOf(core.licenses.update(tenant, legacy, { granteeId: 'b,a' })))).toEqual(refusedAs('granteeId'));
    expect((await core.licenses.get(tenant, plain)).granteeId).toBe('plain');
  });

  it('ad hoc licenses: an array names [i].granteeId even with one item; one object names granteeId', async () => {
    const { core, tenant, keys } = await world();
    const one = [{ planUuid: keys['plans.notes.free'], member: 'm', granteeId: 'a,b' }];
    expect(refusal(await rejectionOf(core.licenses.createAdHoc(tenant, one, { many: true })))).toEqual(refusedAs('[0].granteeId'));
    expect(refusal(await rejectionOf(core.licenses.createAdHoc(tenant, one, { many: false })))).toEqual(refusedAs('granteeId'));
  });

  it("a group's member added again is no change, however its id was stored; a new unreadable member is refused", async () => {
    const { core, tenant, keys } = await world();
    const { subscription } = await buyPlan(core, keys['plans.notes.team'], 3, 'ann');
    const [seat] = (await core.licenses.list(tenant, { subscriptionId: subscription.id })).filter((l) => l.granteeId === 'ann');
    await storedAs(core, seat.id, 'x,y');
    await core.groups.manage(tenant, subscription.id, [{ type: 'add', granteeId: 'x,y' }]);
    await core.groups.manage(tenant, subscription.id, [{ type: 'replace', granteeId: 'x,y', newGranteeId: 'x,y' }]);
    const holders = async () => (await core.licenses.list(tenant, { subscriptionId: subscription.id })).flatMap((l) => l.granteeId ?? []);
    expect(await holders()).toEqual(['x,y']);
    expect(refusal(await rejectionOf(core.groups.manage(tenant, subscription.id, [{ type: 'add', granteeId: 'p,q' }])))).toEqual(
      refusedAs('[0].granteeId'),
    );
    // Removed, then added anew: a new seat for it is written, so it is refused.
    expect(
      refusal(
        await rejectionOf(
          core.groups.manage(tenant, subscription.id, [
            { type: 'remove', granteeId: 'x,y' },
            { type: 'add', granteeId: 'x,y' },
          ]),
        ),
      ),
    ).toEqual(refusedAs('[1].granteeId'));
    // A group without a subscription: a member whose grantee record was stored before the rule.
    const group = await core.groups.create(tenant, { owner: 'o', grantees: [{ granteeId: 'bo' }] });
    const bo = (await core.groups.get(tenant, group.id)).members[0].grantee;
    await core.uow.run((r) => r.people.saveGrantee({ ...bo, granteeId: 'b,o' }));
    await core.groups.manage(tenant, group.id, [{ type: 'add', granteeId: 'b,o' }]);
    expect((await core.groups.get(tenant, group.id)).members.map((m) => m.grantee.granteeId)).toEqual(['b,o']);
  });

  it('the owner refused as the seat holder says why and what to do', async () => {
    const { core, tenant, keys } = await world();
    const business = keys['plans.notes.business'];
    const urls = { successUrl: 'https://x.example/ok', cancelUrl: 'https://x.example/no' };
    const quick = await rejectionOf(
      core.quickCheckout.link(tenant, { ...urls, planId: business, interval: 'month', intervalCount: 1, owner: 'Doe, Jo' } as never),
    );
    expect(quick.details).toEqual([
      { property: 'owner', error: expect.stringMatching(/^gets the seat when no grantee is named; .*: name a grantee$/) },
    ]);
    const cart = await core.carts.create(tenant, { owner: 'Doe, Jo', interval: 'month', intervalCount: 1 });
    await core.carts.addItem(tenant, { cartId: cart.id, planId: business, interval: 'month', intervalCount: 1 });
    const carted = await rejectionOf(core.carts.checkoutLink(tenant, cart.id, urls));
    expect(carted.details).toEqual([
      {
        property: 'owner',
        error: expect.stringMatching(/^gets the seat of an item without a grantee; .*could not read it back.*: name a grantee/),
      },
    ]);
  });
});
