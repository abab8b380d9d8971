import { addPlan, changePlan, matchProviderItems, removePlan, setAddedPlanSeats, syncAddedPlanSeats } from '../src';
import { aCustomer, aLicense, aPlan, aProduct, aSubscription, aTenant, anOrganisation, at, errorCodeOf } from '../src/testing';

/* The pure rules of a subscription of several plans (issue #20): plans added and removed. */
const tenant = aTenant(anOrganisation());
const product = aProduct(tenant);
const team = aPlan(product, { licenseType: 'perSeat', perSeatAmount: 2 });
const extra = aPlan(product, { licenseType: 'perSeat', perSeatAmount: 1 });
const flat = aPlan(product);
const customer = aCustomer(tenant);
let n = 0;
const newId = () => `00000000-0000-4000-8000-${String(n++).padStart(12, '0')}`;
const base = aSubscription(team, customer, { quantity: 2 });
const seats = [
  aLicense(team, { subscriptionId: base.id, granteeId: 'ann' }),
  aLicense(team, { subscriptionId: base.id, granteeId: 'bob' }),
];
const add = (plan = extra, over: object = {}) =>
  addPlan({ subscription: base, firstPlan: team, plan, product, licenses: seats, at: 'items[0]', now: at(1), newId, ...over });
const propertyOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return (e as { details?: { property: string }[] }).details?.[0]?.property;
  }
  return undefined;
};

describe('adding a plan to a subscription', () => {
  it('holds it with an id of its own; its seats go to the members (grown to them), its seats are of that plan', () => {
    const { subscription, added, seats: made } = add();
    expect(subscription.addedPlans).toEqual([added]);
    expect(added).toMatchObject({ planId: extra.id, quantity: 2 });
    expect(added.id).not.toBe(base.id);
    const licenses = made.all();
    expect(licenses.map((l) => [l.planId, l.subscriptionId, l.granteeId])).toEqual([
      [extra.id, base.id, 'ann'],
      [extra.id, base.id, 'bob'],
    ]);
    expect(subscription.planId).toBe(team.id);
    expect(subscription.quantity).toBe(2);
  });

  it('takes the seats asked and a named grantee; a plan with one seat gives it to the first member', () => {
    expect(
      add(extra, { quantity: 4, granteeId: 'cat' })
        .seats.all()
        .map((l) => l.granteeId),
    ).toEqual(['cat', null, null, null]);
    expect(
      add(flat)
        .seats.all()
        .map((l) => l.granteeId),
    ).toEqual(['ann']);
  });

  it('refuses a plan held already, of another interval, usage-based, archived, or on a canceled subscription, naming the item', () => {
    expect(propertyOf(() => add(team))).toBe('items[0].planId');
    expect(propertyOf(() => add(aPlan(product, { interval: 'year' })))).toBe('items[0].planId');
    expect(propertyOf(() => add(aPlan(product, { length: 3 })))).toBe('items[0].planId');
    expect(propertyOf(() => add(aPlan(product, { usageBased: true })))).toBe('items[0].planId');
    expect(errorCodeOf(() => add(aPlan(product, { archivedAt: at(0) })))).toBe('PLAN_ARCHIVED');
    expect(propertyOf(() => add(extra, { subscription: { ...base, status: 'CANCELED' } }))).toBe('items[0].action');
    expect(propertyOf(() => add(extra, { quantity: 0 }))).toBe('items[0].metadata');
  });
});

describe('removing a plan from a subscription', () => {
  const two = add().subscription;
  const extraSeats = [aLicense(extra, { subscriptionId: base.id, granteeId: 'ann' })];
  const all = [...seats, ...extraSeats];

  it('ends an added plan and its seats only', () => {
    const { subscription, ended } = removePlan({ subscription: two, planId: extra.id, licenses: all, at: 'items[0]', now: at(2) });
    expect(subscription.addedPlans).toEqual([]);
    expect(ended.map((l) => [l.id, l.status])).toEqual([[extraSeats[0].id, 'CANCELED']]);
  });

  it('makes the first added plan the first when the first is removed', () => {
    const { subscription, ended } = removePlan({
      subscription: two,
      planId: team.id,
      licenses: all,
      next: extra,
      at: 'items[0]',
      now: at(2),
    });
    expect(subscription).toMatchObject({ id: base.id, planId: extra.id, quantity: 2, addedPlans: [] });
    expect(ended.map((l) => l.id).sort()).toEqual(seats.map((l) => l.id).sort());
  });

  it('refuses the only plan (cancel instead) and a plan not held', () => {
    expect(propertyOf(() => removePlan({ subscription: base, planId: team.id, licenses: seats, at: 'items[0]', now: at(2) }))).toBe(
      'items[0].action',
    );
    expect(propertyOf(() => removePlan({ subscription: two, planId: flat.id, licenses: all, at: 'items[1]', now: at(2) }))).toBe(
      'items[1].planId',
    );
  });
});

describe("an added plan's seats", () => {
  const two = add().subscription;
  const extraSeats = [
    aLicense(extra, { subscriptionId: base.id, granteeId: 'ann' }),
    aLicense(extra, { subscriptionId: base.id, granteeId: null }),
  ];
  const set = (quantity: number) =>
    setAddedPlanSeats({ subscription: two, plan: extra, licenses: extraSeats, quantity, now: at(3), newId });

  it('grows with unassigned seats and shrinks by unassigned ones only, never below the minimum', () => {
    const more = set(4);
    expect(more.delta).toBe(2);
    expect(more.subscription.addedPlans[0].quantity).toBe(4);
    expect(more.added?.all().map((l) => [l.planId, l.granteeId])).toEqual([
      [extra.id, null],
      [extra.id, null],
    ]);
    expect(set(1).removed.map((l) => l.id)).toEqual([extraSeats[1].id]);
    expect(set(2).delta).toBe(0);
    expect(errorCodeOf(() => set(0))).toBe('SEATS_BELOW_MINIMUM');
    // Seats held by grantees are never removed.
    expect(
      errorCodeOf(() => setAddedPlanSeats({ subscription: two, plan: extra, licenses: [extraSeats[0]], quantity: 1, now: at(3), newId })),
    ).toBe('SEATS_EXCEED_UNASSIGNED');
  });
});

describe("a plan change of a subscription of several plans (v1's, or the items' replace)", () => {
  it("moves the first plan's seats only, and refuses a plan the subscription holds already", () => {
    const two = add().subscription;
    const extraSeat = aLicense(extra, { subscriptionId: base.id, granteeId: 'ann' });
    const target = aPlan(product, { licenseType: 'perSeat' });
    const change = changePlan({
      subscription: two,
      licenses: [...seats, extraSeat],
      currentPlan: team,
      target,
      targetProduct: product,
      proration: 'none',
      now: at(2),
      newId,
      billed: true,
    });
    if (change.kind !== 'moved') throw new Error('expected a move');
    expect(change.licenses.map((l) => l.planId)).toEqual([target.id, target.id, extra.id]);
    expect(change.subscription.addedPlans).toEqual(two.addedPlans);
    expect(
      errorCodeOf(() =>
        changePlan({
          subscription: two,
          licenses: seats,
          currentPlan: team,
          target: extra,
          targetProduct: product,
          proration: 'none',
          now: at(2),
          newId,
          billed: true,
        }),
      ),
    ).toBe('SUBSCRIPTION_ALREADY_ON_PLAN');
  });
});

describe("a provider's items told apart by plan (Stripe's re-sync)", () => {
  const priced = aPlan(product, { providerPlanId: 'price_priced' });
  const inline = aPlan(product);
  const held = (planId: string, paymentItemId?: string) => ({
    id: newId(),
    planId,
    quantity: 1,
    lineItemIds: [],
    ...(paymentItemId ? { paymentItemId } : {}),
    createdAt: at(1),
    updatedAt: at(1),
  });
  const plans = new Map([team, extra, priced, inline].map((p) => [p.id, p]));
  const item = (id: string, priceId: string, quantity = 1) => ({ id, priceId, quantity });

  it('by the recorded item, else the price; the first plan takes the first item left; the rest is unknown', () => {
    const s = { ...base, addedPlans: [held(extra.id, 'si_extra'), held(priced.id), held(inline.id)] };
    const m = matchProviderItems(s, plans, [
      item('si_extra', 'p_x', 4),
      item('si_team', 'p_t', 2),
      item('si_p', 'price_priced', 3),
      item('si_u', 'p_u'),
    ]);
    expect(m.first?.id).toBe('si_team');
    expect([...m.added].map(([p, i]) => [p, i.id])).toEqual([
      [extra.id, 'si_extra'],
      [priced.id, 'si_p'],
    ]);
    expect([...m.learnt]).toEqual([[priced.id, 'si_p']]);
    expect(m.gone).toEqual([]);
    expect(m.unknown.map((i) => i.id)).toEqual(['si_u']);
  });

  it('a recorded item missing is a plan removed at the provider, unless the provider gave only part of its items', () => {
    const s = { ...base, addedPlans: [held(extra.id, 'si_extra')] };
    expect(matchProviderItems(s, plans, [item('si_team', 'p_t', 2)]).gone).toEqual([extra.id]);
    expect(matchProviderItems(s, plans, [item('si_team', 'p_t', 2)], false).gone).toEqual([]);
    // Without several plans, the first item is the first plan's, as before.
    expect(matchProviderItems(base, plans, [item('si_team', 'p_t', 5)]).first?.quantity).toBe(5);
  });

  it("an added plan's seats follow its item: unassigned ones added, or removed newest first, never an assigned one", () => {
    const s = { ...base, addedPlans: [held(extra.id, 'si_extra')] };
    const mine = [aLicense(extra, { subscriptionId: base.id, granteeId: 'ann' })];
    const up = syncAddedPlanSeats({ subscription: s, plan: extra, licenses: mine, quantity: 3, now: at(2), newId });
    expect(up.subscription.addedPlans[0].quantity).toBe(3);
    expect(up.added?.all().map((l) => [l.planId, l.granteeId])).toEqual([
      [extra.id, null],
      [extra.id, null],
    ]);
    const three = [...mine, ...(up.added?.all() ?? [])];
    const down = syncAddedPlanSeats({ subscription: up.subscription, plan: extra, licenses: three, quantity: 0, now: at(3), newId });
    expect(down.removed.map((l) => l.granteeId)).toEqual([null, null]);
    expect(down.subscription.addedPlans[0].quantity).toBe(0);
  });
});
