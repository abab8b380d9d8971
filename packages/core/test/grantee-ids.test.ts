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
