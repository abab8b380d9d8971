import { randomUUID } from 'node:crypto';
import { addPlan, changeOwner, manageSeatGrantees, setLicenseEnd, withPeriodEnd, type License } from '../src';
import { aCustomer, aLicense, aPlan, aProduct, aSubscription, at, buyPlan, createTestCore, errorCodeOf, seedSample } from '../src/testing';

const tenant = { organisationId: randomUUID(), isTest: false };
const plan = aPlan(aProduct(tenant), { licenseType: 'perSeat', perSeatAmount: 1 });
const customer = aCustomer(tenant);
const now = at(1000);

const seats = (...holders: (string | null)[]): License[] =>
  holders.map((g, i) => aLicense(plan, { granteeId: g, createdAt: at(i), status: 'ACTIVE' }));

describe('seat grantees (manage-seats rules)', () => {
  it('assigns a free seat, unassigns and replaces in order, and returns only the seats that changed', () => {
    const ls = seats('alice', null, null);
    const out = manageSeatGrantees(
      ls,
      [
        { type: 'assign', granteeId: 'bob' },
        { type: 'replace', granteeId: 'alice', newGranteeId: 'carol' },
        { type: 'unassign', granteeId: 'bob' },
      ],
      now,
    );
    expect(out.map((l) => [l.id, l.granteeId])).toEqual([
      [ls[1].id, null],
      [ls[0].id, 'carol'],
    ]);
  });

  it('refuses a grantee with a seat already, a grantee without one, and an assign with no free seat: nothing changes', () => {
    expect(errorCodeOf(() => manageSeatGrantees(seats('alice', null), [{ type: 'assign', granteeId: 'alice' }], now))).toBe(
      'VALIDATION_FAILED',
    );
    expect(errorCodeOf(() => manageSeatGrantees(seats('alice'), [{ type: 'unassign', granteeId: 'bob' }], now))).toBe('VALIDATION_FAILED');
    expect(
      errorCodeOf(() => manageSeatGrantees(seats('alice', 'bob'), [{ type: 'replace', granteeId: 'alice', newGranteeId: 'bob' }], now)),
    ).toBe('VALIDATION_FAILED');
    expect(errorCodeOf(() => manageSeatGrantees(seats('alice'), [{ type: 'assign', granteeId: 'bob' }], now))).toBe(
      'SEATS_EXCEED_UNASSIGNED',
    );
    // A canceled seat is no seat.
    const canceled = seats(null).map((l) => ({ ...l, status: 'CANCELED' as const }));
    expect(errorCodeOf(() => manageSeatGrantees(canceled, [{ type: 'assign', granteeId: 'bob' }], now))).toBe('SEATS_EXCEED_UNASSIGNED');
  });

  it('keeps one seat per grantee and plan: a plan added to the subscription gives each holder a seat of it, which manage-seats moves and frees with the first', () => {
    const product = aProduct(tenant);
    const extra = aPlan(product, { licenseType: 'perSeat', perSeatAmount: 1 });
    const sub = aSubscription(plan, customer, { quantity: 2 });
    const first = [
      aLicense(plan, { subscriptionId: sub.id, granteeId: 'ann', status: 'ACTIVE', createdAt: at(0) }),
      aLicense(plan, { subscriptionId: sub.id, granteeId: null, status: 'ACTIVE', createdAt: at(1) }),
    ];
    let n = 0;
    const newId = () => `00000000-0000-4000-8000-${String(n++).padStart(12, '0')}`;
    const added = addPlan({
      subscription: sub,
      firstPlan: plan,
      plan: extra,
      product,
      licenses: first,
      at: 'items[0]',
      now,
      newId,
      quantity: 2,
    })
      .seats.all()
      .map((l) => ({ ...l, status: 'ACTIVE' as const, productId: extra.productId }));
    const all = [...first, ...added];
    expect(all.filter((l) => l.granteeId === 'ann').map((l) => l.planId)).toEqual([plan.id, extra.id]);
    const holders = (out: License[]) => {
      const byId = new Map(all.map((l) => [l.id, l]));
      for (const l of out) byId.set(l.id, l);
      return [...byId.values()].filter((l) => l.granteeId !== null).map((l) => [l.planId === plan.id ? 'first' : 'extra', l.granteeId]);
    };
    // replace moves ann's seat of each plan; unassign frees both.
    expect(holders(manageSeatGrantees(all, [{ type: 'replace', granteeId: 'ann', newGranteeId: 'bob' }], now))).toEqual([
      ['first', 'bob'],
      ['extra', 'bob'],
    ]);
    expect(holders(manageSeatGrantees(all, [{ type: 'unassign', granteeId: 'ann' }], now))).toEqual([]);
    // assign gives a seat of each plan; ann, holding one of each, is refused; with the add-on seat given back she gets it again.
    expect(holders(manageSeatGrantees(all, [{ type: 'assign', granteeId: 'cat' }], now))).toEqual([
      ['first', 'ann'],
      ['first', 'cat'],
      ['extra', 'ann'],
      ['extra', 'cat'],
    ]);
    expect(errorCodeOf(() => manageSeatGrantees(all, [{ type: 'assign', granteeId: 'ann' }], now))).toBe('VALIDATION_FAILED');
    const withoutExtra = all.map((l) => (l.planId === extra.id && l.granteeId === 'ann' ? { ...l, granteeId: null } : l));
    expect(holders(manageSeatGrantees(withoutExtra, [{ type: 'assign', granteeId: 'ann' }], now))).toEqual([
      ['first', 'ann'],
      ['extra', 'ann'],
    ]);
    // Two seats of the first plan written before the rule: replace gives bob one of them and frees the other, and moves the add-on seat.
    const twice = all.map((l) => (l.id === first[1].id ? { ...l, granteeId: 'ann' } : l));
    const out = manageSeatGrantees(twice, [{ type: 'replace', granteeId: 'ann', newGranteeId: 'bob' }], now);
    expect(out.map((l) => [l.id, l.granteeId])).toEqual([
      [first[0].id, 'bob'],
      [first[1].id, null],
      [added[0].id, 'bob'],
    ]);
  });

  it('passes a subscription to another owner with its seats, never a canceled one', () => {
    const s = aSubscription(plan, customer);
    const next = aCustomer(tenant, { value: 'new@example.com', emailAddress: 'new@example.com' });
    const out = changeOwner(s, seats('a', null), next, now);
    expect(out.subscription).toMatchObject({ customerId: next.id, email: 'new@example.com', updatedAt: now });
    expect(out.licenses.every((l) => l.purchaser === 'new@example.com')).toBe(true);
    expect(errorCodeOf(() => changeOwner({ ...s, status: 'CANCELED' }, [], next, now))).toBe('SUBSCRIPTION_CANCELED');
  });

  it("moves an ad hoc license's end (ahead only); a seat ends with its subscription", () => {
    const [adHoc] = seats('a');
    expect(setLicenseEnd(adHoc, at(2000), now)).toMatchObject({ endTime: at(2000), updatedAt: now });
    expect(errorCodeOf(() => setLicenseEnd(adHoc, at(10), now))).toBe('VALIDATION_FAILED');
    expect(errorCodeOf(() => setLicenseEnd({ ...adHoc, subscriptionId: randomUUID() }, at(2000), now))).toBe('CONFLICT');
    expect(errorCodeOf(() => setLicenseEnd({ ...adHoc, status: 'CANCELED' }, at(2000), now))).toBe('LICENSE_CANCELED');
  });

  it('sets a period end only in the future', () => {
    const s = aSubscription(plan, customer);
    expect(withPeriodEnd(s, at(2000), now).currentPeriodEnd).toEqual(at(2000));
    expect(errorCodeOf(() => withPeriodEnd(s, at(999), now))).toBe('VALIDATION_FAILED');
    expect(errorCodeOf(() => withPeriodEnd(s, new Date('nope'), now))).toBe('VALIDATION_FAILED');
  });
});

describe('subscription admin, grantee usage and coupons (use cases over the in-memory ports)', () => {
  async function world() {
    const core = createTestCore();
    const { tenant: t, keys } = await seedSample(core, `org-${randomUUID()}`);
    return { core, t, keys };
  }

  it('creates without payment (seats, owner, period end, cancel at period end) and refuses a status the plan does not start in', async () => {
    const { core, t, keys } = await world();
    const end = new Date(core.clock.now().getTime() + 40 * 86400_000);
    const {
      subscription: s,
      customer,
      plan,
    } = await core.subscriptionAdmin.create(t, {
      planId: keys['plans.notes.team'],
      granteeId: 'alice',
      owner: 'owner@example.com',
      quantity: 3,
      expiryDate: end,
      cancelAtPeriodEnd: true,
    });
    // The view the routes answer with, read in the same transaction.
    expect([customer?.value, plan.id]).toEqual(['owner@example.com', keys['plans.notes.team']]);
    expect(s).toMatchObject({ paymentProvider: 'none', quantity: 3, cancelAtPeriodEnd: true, currentPeriodEnd: end, status: 'ACTIVE' });
    const ls = await core.licenses.list(t, { subscriptionId: s.id });
    expect(ls.map((l) => l.granteeId).sort()).toEqual(['alice', null, null]);
    expect(ls.every((l) => l.endTime?.getTime() === end.getTime() && l.cancelAtPeriodEnd && l.purchaser === 'owner@example.com')).toBe(
      true,
    );
    await expect(
      core.subscriptionAdmin.create(t, { planId: keys['plans.notes.free'], granteeId: 'b', owner: 'o', status: 'TRIALING' }),
    ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(
      core.subscriptionAdmin.create({ ...t, isTest: true }, { planId: keys['plans.notes.free'], granteeId: 'b', owner: 'o' }),
    ).rejects.toMatchObject({ code: expect.stringMatching(/NOT_FOUND|FORBIDDEN/) });
  });

  it('lists a page oldest or newest first from a cursor, by owner and status, with each owner', async () => {
    const { core, t, keys } = await world();
    const made = [];
    for (const owner of ['o1', 'o2', 'o1']) {
      made.push((await core.subscriptionAdmin.create(t, { planId: keys['plans.notes.free'], granteeId: 'g', owner })).subscription);
      core.clock.advanceDays(1);
    }
    const asc = await core.subscriptionAdmin.page(t, { take: 2, sort: 'asc' });
    expect(asc.subscriptions.map((s) => s.id)).toEqual([made[0].id, made[1].id]);
    const next = await core.subscriptionAdmin.page(t, { take: 2, sort: 'asc', cursor: made[1].id });
    expect(next.subscriptions.map((s) => s.id)).toEqual([made[2].id]);
    const desc = await core.subscriptionAdmin.page(t, { take: 2, sort: 'desc' });
    expect(desc.subscriptions.map((s) => s.id)).toEqual([made[2].id, made[1].id]);
    expect((await core.subscriptionAdmin.page(t, { take: 5, sort: 'desc', cursor: made[1].id })).subscriptions.map((s) => s.id)).toEqual([
      made[0].id,
    ]);
    const o1 = await core.subscriptionAdmin.page(t, { take: 10, sort: 'asc', owner: 'o1' });
    expect(o1.subscriptions.map((s) => s.id)).toEqual([made[0].id, made[2].id]);
    expect([...new Set(o1.subscriptions.map((s) => o1.owners.get(s.customerId)))]).toEqual(['o1']);
    expect((await core.subscriptionAdmin.page(t, { take: 10, sort: 'asc', owner: 'nobody' })).subscriptions).toEqual([]);
    expect((await core.subscriptionAdmin.page(t, { take: 10, sort: 'asc', status: 'CANCELED' })).subscriptions).toEqual([]);
    await expect(core.subscriptionAdmin.page(t, { take: 1, sort: 'asc', cursor: randomUUID() })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
    });
    expect((await core.subscriptionAdmin.page({ ...t, isTest: true }, { take: 10, sort: 'asc' })).subscriptions).toEqual([]);
  });

  it('changes the owner and who holds the seats, all or none', async () => {
    const { core, t, keys } = await world();
    const { subscription } = await buyPlan(core, keys['plans.notes.team'], 3, 'alice');
    const moved = await core.subscriptionAdmin.updateOwner(t, subscription.id, 'next@example.com');
    expect(moved.customer?.value).toBe('next@example.com');
    expect((await core.subscriptions.get(t, moved.subscription.id)).customer?.value).toBe('next@example.com');
    await core.subscriptionAdmin.manageSeats(t, subscription.id, [{ type: 'assign', granteeId: 'bob' }]);
    await expect(
      core.subscriptionAdmin.manageSeats(t, subscription.id, [
        { type: 'assign', granteeId: 'carol' },
        { type: 'assign', granteeId: 'dave' },
      ]),
    ).rejects.toMatchObject({ code: 'SEATS_EXCEED_UNASSIGNED' });
    expect(await core.licenses.count(t, { subscriptionId: subscription.id })).toEqual({ count: 3, assigned: 2, unassigned: 1 });
  });

  it("license updates keep one seat per grantee and plan, on the end state of a batch: an added plan's seat given back, a swap and a move pass", async () => {
    const { core, t, keys } = await world();
    const { subscription: s } = await core.subscriptionAdmin.create(t, {
      planId: keys['plans.notes.team'],
      granteeId: 'ann',
      owner: 'o@example.com',
      quantity: 3,
    });
    const first = await core.licenses.list(t, { subscriptionId: s.id });
    const business = (await core.uow.read((r) => r.plans.get(keys['plans.notes.business'])))!;
    // A plan added to the subscription: a seat of it for each holder, under the same subscription id.
    const added = [
      aLicense(business, { subscriptionId: s.id, granteeId: 'ann', status: 'ACTIVE' }),
      aLicense(business, { subscriptionId: s.id, status: 'ACTIVE' }),
    ];
    await core.uow.run((r) => r.licenses.saveMany(added));
    const [s0, s1, s2] = [first.find((l) => l.granteeId === 'ann')!, ...first.filter((l) => l.granteeId === null)];
    const refused = (property: string) => ({ code: 'VALIDATION_FAILED', details: [expect.objectContaining({ property })] });
    // ann's add-on seat taken back and given again (she holds a seat of the first plan all along).
    await core.licenses.update(t, added[0].id, { granteeId: null });
    expect((await core.licenses.update(t, added[0].id, { granteeId: 'ann' })).licenses[0].granteeId).toBe('ann');
    await expect(core.licenses.update(t, added[1].id, { granteeId: 'ann' })).rejects.toMatchObject(refused('granteeId'));
    // A swap and a move written in natural order: every item applies, then the end state is checked.
    await core.licenses.update(t, s1.id, { granteeId: 'bob' });
    const swap = await core.licenses.batchUpdate(t, [
      { uuid: s0.id, granteeId: 'bob' },
      { uuid: s1.id, granteeId: 'ann' },
    ]);
    expect(swap.licenses.map((l) => l.granteeId)).toEqual(['bob', 'ann']);
    const move = await core.licenses.batchUpdate(t, [
      { uuid: s2.id, granteeId: 'ann' },
      { uuid: s1.id, granteeId: null },
    ]);
    expect(move.licenses.map((l) => l.granteeId)).toEqual(['ann', null]);
    // Two seats of one plan for one grantee: refused at the last item giving one, nothing written.
    await expect(
      core.licenses.batchUpdate(t, [
        { uuid: s1.id, granteeId: 'bob' },
        { uuid: added[1].id, granteeId: 'dan' },
      ]),
    ).rejects.toMatchObject(refused('[0].granteeId'));
    await expect(
      core.licenses.batchUpdate(t, [
        { uuid: added[1].id, granteeId: 'dan' },
        { uuid: s1.id, granteeId: 'dan' },
        { uuid: added[0].id, granteeId: 'dan' },
      ]),
    ).rejects.toMatchObject(refused('[2].granteeId'));
    expect(
      (await core.licenses.list(t, { subscriptionId: s.id }))
        .filter((l) => l.granteeId !== null)
        .map((l) => l.granteeId)
        .sort(),
    ).toEqual(['ann', 'ann', 'bob']);
  });

  it('finds the plans a customer subscribes to or a grantee holds, running ones only', async () => {
    const { core, t, keys } = await world();
    const product = keys['products.notes'];
    const { subscription } = await buyPlan(core, keys['plans.notes.team'], 2, 'alice');
    await core.subscriptionAdmin.create(t, { planId: keys['plans.notes.free'], granteeId: 'bob', owner: 'buyer@example.com' });
    expect([...(await core.subscriptionAdmin.plansHeld(t, product, { owner: 'buyer@example.com' }))].sort()).toEqual(
      [keys['plans.notes.team'], keys['plans.notes.free']].sort(),
    );
    expect([...(await core.subscriptionAdmin.plansHeld(t, product, { granteeId: 'alice' }))]).toEqual([keys['plans.notes.team']]);
    await core.subscriptions.cancel(t, subscription.id, 'now');
    expect([...(await core.subscriptionAdmin.plansHeld(t, product, { granteeId: 'alice' }))]).toEqual([]);
    expect([...(await core.subscriptionAdmin.plansHeld(t, product, { owner: 'nobody' }))]).toEqual([]);
  });

  it('counts usage by grantee and plan once per key, and lists and totals it', async () => {
    const { core, t, keys } = await world();
    await buyPlan(core, keys['plans.notes.team'], 2, 'alice');
    const plan = keys['plans.notes.team'];
    expect(await core.granteeUsage.record(t, { granteeId: 'alice', planId: plan, increment: 2 }, 'k1')).toBe(2);
    expect(await core.granteeUsage.record(t, { granteeId: 'alice', planId: plan, increment: 2 }, 'k1')).toBe(2);
    core.clock.set(new Date(core.clock.now().getTime() + 1000));
    expect(await core.granteeUsage.record(t, { granteeId: 'alice', planId: plan, increment: 5 })).toBe(7);
    // When the units last changed (the balance's last change), not when asked.
    const recordedAt = core.clock.now();
    core.clock.set(new Date(recordedAt.getTime() + 60_000));
    expect(await core.granteeUsage.current(t, 'alice', plan)).toEqual({ unitCount: 7, updatedAt: recordedAt });
    const all = await core.granteeUsage.records(t, { granteeId: 'alice', take: 10 });
    expect(all.map((r) => r.unitCount)).toEqual([2, 5]);
    expect(await core.granteeUsage.records(t, { granteeId: 'alice', take: 10, cursor: all[0].id })).toEqual([all[1]]);
    await expect(core.granteeUsage.record(t, { granteeId: 'nobody', planId: plan, increment: 1 })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
    });
  });

  it("labels a subscription's usage with the grantee's running seat, not an older canceled one", async () => {
    const { core, t, keys } = await world();
    const plan = keys['plans.notes.team'];
    const { subscription } = await buyPlan(core, plan, 2, 'alice');
    await core.granteeUsage.record(t, { granteeId: 'alice', planId: plan, increment: 3 });
    const seat = (await core.uow.read((r) => r.licenses.list(t, { granteeId: 'alice', subscriptionId: subscription.id })))[0];
    // An older seat of the same subscription that ended (as a removed added plan's seat does).
    const ended: License = { ...seat, id: randomUUID(), status: 'CANCELED', createdAt: new Date(seat.createdAt.getTime() - 1000) };
    await core.uow.run((r) => r.licenses.saveMany([ended]));
    const [record] = await core.granteeUsage.records(t, { granteeId: 'alice', take: 10 });
    expect(record).toMatchObject({ unitCount: 3, licenseId: seat.id });
  });

  it('applies and removes coupons through the payment provider', async () => {
    const { core, t, keys } = await world();
    const { subscription } = await buyPlan(core, keys['plans.notes.team'], 2, 'alice');
    await core.coupons.apply(t, subscription.id, 'WELCOME');
    await core.coupons.remove(t, subscription.id, 'WELCOME');
    expect(core.payments.calls.filter((c) => c.op === 'applyCoupon' || c.op === 'removeCoupon')).toEqual([
      { op: 'applyCoupon', subscriptionId: subscription.id, code: 'WELCOME' },
      { op: 'removeCoupon', subscriptionId: subscription.id, code: 'WELCOME' },
    ]);
    // Another mode's key: the subscription is not its to change.
    await expect(core.coupons.apply({ ...t, isTest: true }, subscription.id, 'X')).rejects.toMatchObject({
      code: expect.stringMatching(/NOT_FOUND|FORBIDDEN/),
    });
  });
});
