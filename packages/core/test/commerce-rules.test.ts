import { randomUUID } from 'node:crypto';
import {
  abandonCart,
  addCartItem,
  archiveLineItem,
  archivePrice,
  assertItemInterval,
  assertPlanInterval,
  canGrant,
  canonicalEventType,
  cartStatusOf,
  deleteLineItem,
  publishedEventType,
  isPerSeat,
  lineItemCurrencies,
  pricedIn,
  minimumSeats,
  quickCheckoutQuantity,
  resolveCheckoutOptions,
  unitAmount,
  unbilledLine,
  replaceCart,
  updateLineItem,
  type Cart,
  type CheckoutSession,
  type LineItem,
  type Plan,
  type Price,
} from '../src';
import { aPlan, aProduct, at, T0, errorCodeOf } from '../src/testing';

// The pure rules of the published catalog API's commerce resources (#20 part B): no fakes needed.
const tenant = { organisationId: randomUUID(), isTest: false };
const product = aProduct(tenant);

const price = (over: Partial<Price> = {}): Price => ({
  id: randomUUID(),
  paymentPriceId: 'price_x',
  interval: 'month',
  intervalCount: 1,
  currencyOptions: [],
  archivedAt: null,
  createdAt: T0,
  updatedAt: T0,
  ...over,
});
const lineItem = (over: Partial<LineItem> = {}): LineItem => ({
  id: randomUUID(),
  name: 'Seats',
  slug: 'seats',
  paymentProductId: 'prod_x',
  nickname: '',
  priceType: 'per_seat',
  intervalType: 'recurring',
  billingScheme: 'per_unit',
  tiersMode: null,
  minQuantity: 1,
  maxQuantity: 10,
  isActive: true,
  allowChangingQuantity: false,
  unitLabel: null,
  meter: null,
  prices: [price()],
  archivedAt: null,
  createdAt: T0,
  updatedAt: T0,
  ...over,
});
const planWith = (items: LineItem[], over: Partial<Plan> = {}): Plan => ({ ...aPlan(product), lineItems: items, ...over });

describe('event types', () => {
  it('reads both spellings, and no unknown one', () => {
    expect(canonicalEventType('subscription_created')).toBe('subscription.created');
    expect(canonicalEventType('subscription.created')).toBe('subscription.created');
    expect(canonicalEventType('subscription_canceled')).toBe('subscription.cancelled');
    expect(canonicalEventType('usage_finalised')).toBe('usage.finalised');
    expect(canonicalEventType('subscription_exploded')).toBeUndefined();
    expect(canonicalEventType('subscription')).toBeUndefined();
    expect(publishedEventType('seats.changed')).toBe('seats_changed');
  });
});

describe('API key grants', () => {
  it('never hands out more than the creator holds', () => {
    expect(canGrant({ scopes: ['*'] }, '*')).toBe(true);
    expect(canGrant({ scopes: ['products:write'] }, '*')).toBe(false);
    expect(canGrant({ scopes: ['products:write'] }, 'products:read')).toBe(true);
    expect(canGrant({ scopes: ['products:read'] }, 'products:write')).toBe(false);
    expect(canGrant({ scopes: ['products:write'] }, 'plans:read')).toBe(false);
  });
});

describe('pricing parts', () => {
  it('updates a line item but never its price type, nor across its bounds', () => {
    const li = lineItem();
    const plan = planWith([li, lineItem({ slug: 'other' })]);
    const change = {
      name: 'Team seats',
      slug: 'team_seats',
      priceType: 'per_seat' as const,
      intervalType: 'recurring' as const,
      billingScheme: 'tiered' as const,
      tiersMode: 'volume' as const,
      minQuantity: 2,
      maxQuantity: 5,
    };
    const next = updateLineItem(plan, product, li.id, change, at(1));
    expect(next.lineItems[0]).toMatchObject({
      name: 'Team seats',
      slug: 'team_seats',
      tiersMode: 'volume',
      minQuantity: 2,
      updatedAt: at(1),
    });
    expect(updateLineItem(plan, product, li.id, { ...change, billingScheme: 'per_unit' }, at(1)).lineItems[0].tiersMode).toBeNull();
    expect(errorCodeOf(() => updateLineItem(plan, product, li.id, { ...change, priceType: 'flat_rate' }, at(1)))).toBe('VALIDATION_FAILED');
    expect(errorCodeOf(() => updateLineItem(plan, product, li.id, { ...change, slug: 'other' }, at(1)))).toBe('VALIDATION_FAILED');
    expect(errorCodeOf(() => updateLineItem(plan, product, li.id, { ...change, minQuantity: 9 }, at(1)))).toBe('VALIDATION_FAILED');
    expect(errorCodeOf(() => updateLineItem({ ...plan, archivedAt: at(0) }, product, li.id, change, at(1)))).toBe('PLAN_ARCHIVED');
  });

  it('archives once, never the last active price, and deletes only what was not sold', () => {
    const [monthly, yearly] = [price(), price({ interval: 'year' })];
    const li = lineItem({ prices: [monthly, yearly] });
    const plan = planWith([li]);
    const one = archivePrice(plan, product, li.id, monthly.id, at(1));
    expect(one.lineItems[0].prices[0].archivedAt).toEqual(at(1));
    expect(errorCodeOf(() => archivePrice(one, product, li.id, monthly.id, at(2)))).toBe('PLAN_ARCHIVED');
    expect(errorCodeOf(() => archivePrice(one, product, li.id, yearly.id, at(2)))).toBe('VALIDATION_FAILED');
    const archived = archiveLineItem(plan, product, li.id, at(1));
    expect(archived.lineItems[0]).toMatchObject({ archivedAt: at(1), isActive: false });
    expect(errorCodeOf(() => archiveLineItem(archived, product, li.id, at(2)))).toBe('PLAN_ARCHIVED');
    expect(errorCodeOf(() => deleteLineItem(plan, product, li.id, new Set([li.id]), at(1)))).toBe('CONFLICT');
    expect(deleteLineItem(plan, product, li.id, new Set(), at(1)).lineItems).toEqual([]);
  });
});

describe('quick checkout', () => {
  it('asks for the plan’s own interval and reads the seats from the per-seat line item', () => {
    const plan = planWith([lineItem(), lineItem({ slug: 'base', priceType: 'flat_rate' })], { interval: 'month', length: 1 });
    expect(() => assertPlanInterval(plan, 'month', 1)).not.toThrow();
    expect(errorCodeOf(() => assertPlanInterval(plan, 'year', 1))).toBe('VALIDATION_FAILED');
    expect(errorCodeOf(() => assertPlanInterval(plan, 'month', 3))).toBe('VALIDATION_FAILED');
    expect(errorCodeOf(() => assertPlanInterval(plan, null, null))).toBe('VALIDATION_FAILED');
    expect(quickCheckoutQuantity(plan, { seats: { quantity: 4 }, base: { quantity: 1 } })).toBe(4);
    expect(quickCheckoutQuantity(plan, undefined)).toBeUndefined();
    expect(errorCodeOf(() => quickCheckoutQuantity(plan, { nope: { quantity: 1 } }))).toBe('VALIDATION_FAILED');
    expect(errorCodeOf(() => quickCheckoutQuantity(plan, { seats: { quantity: 1.5 } }))).toBe('VALIDATION_FAILED');
  });
});

describe('plans priced by their line items (saved through plans/save)', () => {
  it('are sold in their prices’ currencies, per seat when a line item is, at their line items’ amounts', () => {
    const option = (currency: string, unitAmount: number) => ({
      id: randomUUID(),
      currency,
      unitAmount,
      isDefault: true,
      tiers: [],
      createdAt: T0,
      updatedAt: T0,
    });
    const seats = lineItem({ minQuantity: 3, prices: [price({ currencyOptions: [option('usd', 1500), option('EUR', 1400)] })] });
    const base = lineItem({ slug: 'base', priceType: 'flat_rate', prices: [price({ currencyOptions: [option('USD', 900)] })] });
    const baseBoth = lineItem({
      slug: 'base',
      priceType: 'flat_rate',
      prices: [price({ currencyOptions: [option('USD', 900), option('eur', 800)] })],
    });
    const perSeat = planWith([seats, baseBoth], { currencies: [] });
    expect(lineItemCurrencies(perSeat).sort()).toEqual(['EUR', 'USD']);
    expect(isPerSeat(perSeat)).toBe(true);
    expect(minimumSeats(perSeat)).toBe(3);
    expect(unitAmount(perSeat, 'usd', new Map())).toBe(1500);
    const flat = planWith(
      [base, lineItem({ slug: 'extra', priceType: 'flat_rate', prices: [price({ currencyOptions: [option('USD', 100)] })] })],
      {
        currencies: [],
      },
    );
    expect(isPerSeat(flat)).toBe(false);
    expect(unitAmount(flat, 'USD', new Map())).toBe(1000);
    const noLegacy = { ...product, currencies: [] };
    expect(resolveCheckoutOptions({ currency: 'eur', quantity: 4 }, perSeat, noLegacy, new Map())).toMatchObject({
      currency: 'EUR',
      quantity: 4,
    });
    expect(resolveCheckoutOptions({}, perSeat, noLegacy, new Map()).quantity).toBe(3);
    // A line item without a price in the currency (its base fee here) makes the plan not sold in it: it would go unbilled.
    const baseInUsdOnly = planWith([seats, base], { currencies: [] });
    expect(pricedIn(baseInUsdOnly, 'EUR', new Map())).toBe(false);
    expect(pricedIn(perSeat, 'EUR', new Map())).toBe(true);
    expect(resolveCheckoutOptions({}, baseInUsdOnly, noLegacy, new Map()).currency).toBe('USD');
    expect(errorCodeOf(() => resolveCheckoutOptions({ currency: 'GBP' }, perSeat, noLegacy, new Map()))).toBe(
      'CHECKOUT_CURRENCY_NOT_SUPPORTED',
    );
    expect(errorCodeOf(() => resolveCheckoutOptions({ quantity: 2 }, flat, noLegacy, new Map()))).toBe('CHECKOUT_QUANTITY_NOT_PER_SEAT');
    // A plan with legacy currencies keeps its own rules (its line items mirror them).
    expect(isPerSeat(planWith([seats], { licenseType: 'user', currencies: [{ currencyId: 'c', amountMinor: 1 } as never] }))).toBe(false);
  });

  it('names the line item billing would drop or repeat, so such a plan is not sold (unbilledLine)', () => {
    const option = (currency: string, unitAmount: number | null, tiers: Price['currencyOptions'][number]['tiers'] = []) => ({
      id: randomUUID(),
      currency,
      unitAmount,
      isDefault: true,
      tiers,
      createdAt: T0,
      updatedAt: T0,
    });
    const priced = (amount: number) => [price({ currencyOptions: [option('USD', amount)] })];
    const seats = lineItem({ prices: priced(1500) });
    const flat = (slug: string, amount: number, over: Partial<LineItem> = {}) =>
      lineItem({ slug, priceType: 'flat_rate', prices: priced(amount), ...over });
    const metered = lineItem({ slug: 'calls', priceType: 'metered', prices: priced(5) });
    const plan = (...items: LineItem[]) => planWith(items, { currencies: [] });
    const why = (p: Plan, currency = 'USD') => unbilledLine(p, currency);

    // Billed as priced: seats alone, flat fees together, either beside metered usage, a free line beside seats.
    expect(why(plan(seats))).toBeUndefined();
    expect(why(plan(flat('base', 900), flat('extra', 100)))).toBeUndefined();
    expect(why(plan(seats, metered))).toBeUndefined();
    expect(why(plan(seats, flat('included', 0)))).toBeUndefined();
    expect(why(plan(seats, flat('old-base', 900, { archivedAt: T0 })))).toBeUndefined();
    // A base fee beside the seats was never charged; a second seat price neither.
    expect(why(plan(seats, flat('base', 900)))).toMatch(/line item base would not be charged: beside a per-seat line item \(seats\)/);
    expect(why(plan(seats, lineItem({ slug: 'admins', prices: priced(3000) })))).toMatch(/line item admins would not be charged/);
    // A one-off fee was charged every period, beside a recurring fee or alone (a lifetime price).
    expect(why(plan(flat('monthly', 2000), flat('setup', 10_000, { intervalType: 'one_off' })))).toMatch(
      /line item setup is a one-off fee, which Tollgate would charge every period/,
    );
    expect(why(plan(flat('lifetime', 19_900, { intervalType: 'one_off' })))).toMatch(/lifetime is a one-off fee/);
    // A seat price by tiers was charged its plain amount (none here).
    const tiered = lineItem({
      billingScheme: 'tiered',
      tiersMode: 'volume',
      prices: [
        price({
          currencyOptions: [
            option('USD', null, [{ id: 't', upTo: 'inf', flatAmount: null, unitAmount: 700, createdAt: T0, updatedAt: T0 }]),
          ],
        }),
      ],
    });
    expect(why(plan(tiered))).toMatch(/seats is priced by tiers, which Tollgate bills on metered line items only/);
    // Only what the line items charge in the currency sold counts: a base fee charged in euros only.
    const eurBase = flat('base', 0, { prices: [price({ currencyOptions: [option('USD', 0), option('EUR', 900)] })] });
    expect(why(plan(seats, eurBase), 'usd')).toBeUndefined();
    expect(why(plan(seats, eurBase), 'EUR')).toMatch(/line item base would not be charged/);
    // Free plans and plans with legacy currencies bill by their own rules.
    expect(why(planWith([seats, flat('base', 900)], { currencies: [], pricingType: 'free' }))).toBeUndefined();
    expect(why(planWith([seats, flat('base', 900)], { currencies: [{ currencyId: 'c', amountMinor: 1 } as never] }))).toBeUndefined();
  });
});

describe('carts', () => {
  const cart = (over: Partial<Cart> = {}): Cart => ({
    id: randomUUID(),
    ...tenant,
    customerId: randomUUID(),
    currency: 'USD',
    interval: 'month',
    intervalCount: 1,
    status: 'active',
    items: [],
    createdAt: T0,
    updatedAt: T0,
    ...over,
  });
  const item = (sessionId: string | null = null) => ({
    id: randomUUID(),
    planId: randomUUID(),
    granteeId: null,
    groupId: null,
    metadata: null,
    checkoutSessionId: sessionId,
    createdAt: T0,
    updatedAt: T0,
  });

  it('changes while active only: add, replace (unknown items refused), abandon', () => {
    const c = addCartItem(cart(), item(), at(1));
    expect(c.items).toHaveLength(1);
    const replaced = replaceCart(
      c,
      { currency: null, customerId: 'o2', items: [{ id: c.items[0].id, who: { granteeId: 'g', groupId: null } }] },
      at(2),
    );
    expect(replaced).toMatchObject({ currency: null, customerId: 'o2', items: [{ granteeId: 'g', groupId: null }] });
    // Naming a group moves the item to it; naming nobody keeps who it was for.
    const group = randomUUID();
    const forGroup = replaceCart(
      c,
      { currency: null, customerId: 'o2', items: [{ id: c.items[0].id, who: { granteeId: null, groupId: group } }] },
      at(2),
    );
    expect(forGroup.items[0]).toMatchObject({ granteeId: null, groupId: group });
    expect(replaceCart(forGroup, { currency: null, customerId: 'o2', items: [{ id: c.items[0].id }] }, at(3)).items[0].groupId).toBe(group);
    expect(errorCodeOf(() => replaceCart(c, { currency: null, customerId: 'o', items: [{ id: randomUUID() }] }, at(2)))).toBe(
      'VALIDATION_FAILED',
    );
    const gone = abandonCart(c, at(3));
    expect(gone.status).toBe('abandoned');
    expect(errorCodeOf(() => addCartItem(gone, item(), at(4)))).toBe('CART_NOT_ACTIVE');
    expect(errorCodeOf(() => abandonCart(gone, at(4)))).toBe('CART_NOT_ACTIVE');
    expect(errorCodeOf(() => assertItemInterval(c, 'year', 1))).toBe('VALIDATION_FAILED');
    expect(() => assertItemInterval(c, 'month', 1)).not.toThrow();
  });

  it('is complete when every item’s checkout was paid', () => {
    const paid = { id: randomUUID(), status: 'completed' } as CheckoutSession;
    const open = { id: randomUUID(), status: 'open' } as CheckoutSession;
    const sessions = new Map([paid, open].map((s) => [s.id, s]));
    expect(cartStatusOf(cart({ items: [item(paid.id)] }), sessions)).toBe('complete');
    expect(cartStatusOf(cart({ items: [item(paid.id), item(open.id)] }), sessions)).toBe('active');
    expect(cartStatusOf(cart({ items: [item(paid.id), item()] }), sessions)).toBe('active');
    expect(cartStatusOf(cart(), sessions)).toBe('active');
    expect(cartStatusOf(cart({ status: 'abandoned', items: [item(paid.id)] }), sessions)).toBe('abandoned');
  });
});
