import {
  decimalText,
  exactDecimal,
  pricedIn,
  usageCharge,
  usageInvoiceLines,
  type BilledPeriod,
  type CatalogFile,
  type LineItem,
  type PaymentProvider,
  type PlanEntry,
  type UsageInvoiceLine,
} from '../src';
import { createTestCore, rejectionOf, type TestCore } from '../src/testing';

// Usage billing's money (an audit): the currency a period is billed in, prices exact to the places
// the API takes, what a free trial owes, an amount an invoice line cannot carry.

const DAY = 86_400_000;

const plan = (over: Partial<PlanEntry>): PlanEntry => ({
  key: 'api',
  displayName: 'API',
  pricingType: 'paid',
  interval: 'month',
  length: 1,
  capabilities: ['edit'],
  ...over,
});

const catalog = (plans: PlanEntry[]): CatalogFile => ({
  organisation: 'acme',
  products: [{ key: 'notes', name: 'Notes', currencies: ['USD', 'JPY'], capabilities: ['edit'], plans }],
});

describe('usage billing money', () => {
  let core: TestCore;
  let organisationId: string;
  let renewals: UsageInvoiceLine[][];
  const tenant = () => ({ organisationId, isTest: false });

  beforeEach(async () => {
    core = createTestCore();
    organisationId = (await core.apiKeys.ensureOrganisation('acme')).id;
    renewals = [];
    (core.payments as PaymentProvider).renewedBySweep = (_s, _p, _u, usage) => {
      renewals.push(usage ?? []);
      return {};
    };
  });

  const buy = (planId: string, currency: string) =>
    core.checkout.completePurchase({
      planId,
      member: 'buyer@example.com',
      email: 'buyer@example.com',
      granteeId: `g-${currency}`,
      quantity: 1,
      currency,
      paymentProvider: 'fake',
      paymentSubscriptionId: null,
      paymentCustomerId: null,
    });

  describe('a plan whose usage is priced in some of its currencies', () => {
    const tiered = plan({
      prices: { USD: 10, JPY: 1500 },
      usage: [
        {
          meter: 'api_calls',
          tiers: {
            USD: [
              { upTo: 100, unitAmount: 0 },
              { upTo: 'inf', unitAmount: 0.37 },
            ],
          },
        },
      ],
    });

    it('is not sold in a currency a meter has no price in: pricedIn, a checkout link, a plan change', async () => {
      const { keys } = await core.importer.apply(
        catalog([tiered, plan({ key: 'flat', displayName: 'Flat', prices: { USD: 5, JPY: 700 } })]),
      );
      const planId = keys['plans.notes.api'];
      const { p, currencies } = await core.uow.read(async (r) => ({
        p: (await r.plans.get(planId))!,
        currencies: new Map((await r.currencies.list()).map((c) => [c.id, c])),
      }));
      expect(pricedIn(p, 'USD', currencies)).toBe(true);
      expect(pricedIn(p, 'JPY', currencies)).toBe(false);
      const req = {
        successUrl: 'https://app.example.com/ok',
        cancelUrl: 'https://app.example.com/no',
        granteeId: 'paula',
        member: 'paula@example.com',
      };
      await expect(core.checkout.sessionLink(tenant(), planId, { ...req, currency: 'JPY' })).rejects.toMatchObject({
        code: 'CHECKOUT_CURRENCY_NOT_SUPPORTED',
      });
      await expect(core.checkout.sessionLink(tenant(), planId, { ...req, currency: 'USD' })).resolves.toBeDefined();
      // A subscription of the flat plan in yen does not move to it.
      const { subscription } = await buy(keys['plans.notes.flat'], 'JPY');
      await expect(core.subscriptions.changePlan(tenant(), subscription.id, planId, 'none')).rejects.toMatchObject({
        code: 'CHECKOUT_CURRENCY_NOT_SUPPORTED',
      });
    });

    it('a meter priced at 0 sells in every currency; a free plan whose meter charges sells only in its currencies (review)', async () => {
      const freeMeter = plan({ prices: { USD: 10, JPY: 1500 }, usage: [{ meter: 'api_calls', unitPrices: { USD: 0 } }] });
      const freePlan = plan({
        key: 'free',
        displayName: 'Free',
        pricingType: 'free',
        prices: { USD: 0, JPY: 0 },
        usage: [{ meter: 'api_calls', unitPrices: { USD: 0.01 } }],
      });
      const { keys } = await core.importer.apply(catalog([freeMeter, freePlan]));
      const { paid, free, currencies } = await core.uow.read(async (r) => ({
        paid: (await r.plans.get(keys['plans.notes.api']))!,
        free: (await r.plans.get(keys['plans.notes.free']))!,
        currencies: new Map((await r.currencies.list()).map((c) => [c.id, c])),
      }));
      expect([pricedIn(paid, 'USD', currencies), pricedIn(paid, 'JPY', currencies)]).toEqual([true, true]);
      expect([pricedIn(free, 'USD', currencies), pricedIn(free, 'JPY', currencies)]).toEqual([true, false]);
      // A yen subscription of the free-metered plan renews.
      const { subscription: s } = await buy(keys['plans.notes.api'], 'JPY');
      core.clock.set(new Date(s.currentPeriodEnd.getTime() + 1000));
      expect(await core.sweeps.renewals()).toBe(1);
    });

    it('a catalog write may not drop the usage price of a currency a running subscription is billed in (409)', async () => {
      const both = { ...tiered, usage: [{ meter: 'api_calls', unitPrices: { USD: 0.01, JPY: 1 } }] };
      const { keys } = await core.importer.apply(catalog([both]));
      await buy(keys['plans.notes.api'], 'JPY');
      await expect(core.importer.apply(catalog([tiered]))).rejects.toMatchObject({ code: 'CONFLICT' });
    });

    it('never bills a meter in another currency: a yen subscription (sold before) is not renewed, and its close bills nothing', async () => {
      const { keys } = await core.importer.apply(catalog([tiered]));
      const { subscription: s } = await buy(keys['plans.notes.api'], 'JPY');
      await core.usage.record(tenant(), { owner: s.id, meterSlug: 'api_calls', quantity: 150 });
      core.clock.set(new Date(s.currentPeriodEnd.getTime() + 1000));
      // The renewal sweep passes it over (logged) rather than bill its usage in the wrong money.
      expect(await core.sweeps.renewals()).toBe(0);
      expect(renewals).toEqual([]);
      // Canceled now: the close bills nothing for the meter (the dollars' 1850 are never yen).
      const billed: UsageInvoiceLine[][] = [];
      (core.payments as PaymentProvider).usageBilled = (_s, _p, usage) => {
        billed.push(usage);
        return {};
      };
      await core.subscriptions.cancel(tenant(), s.id, 'now');
      expect(billed.flat()).toEqual([]);
      const closes = await core.uow.read((r) => r.usage.pageCloses(tenant(), { limit: 10, owner: s.id }));
      expect(closes.items.map((c) => [c.finalUsage, c.currency, c.amountMinor])).toEqual([[150n, 'jpy', 0n]]);
      // In dollars the same usage bills as priced: 50 units past the free 100 at 0.37 dollars.
      const { subscription: usd } = await buy(keys['plans.notes.api'], 'USD');
      await core.usage.record(tenant(), { owner: usd.id, meterSlug: 'api_calls', quantity: 150 });
      core.clock.set(new Date(usd.currentPeriodEnd.getTime() + 1000));
      expect(await core.sweeps.renewals()).toBe(1);
      expect(renewals.flat().map((l) => l.amount)).toEqual([0, 1850]);
    });
  });

  describe('fractional unit prices', () => {
    it('are billed exactly to the 12 places the API takes: $0.075 per million tokens, 10^12 tokens, is $75,000.00', async () => {
      const product = await core.products.createProduct(tenant(), { name: 'Tokens' });
      const save = (unitAmount: number) =>
        core.plans.savePlan(tenant(), {
          productId: product.id,
          name: 'Tokens',
          lineItems: [
            {
              name: 'Tokens',
              priceType: 'metered',
              meterSlug: 'tokens',
              prices: [{ interval: 'month', currencyOptions: [{ currency: 'USD', unitAmount }] }],
            },
          ],
        });
      const { plan: saved } = await save(0.0000075);
      const li = saved.lineItems[0];
      const option = li.prices[0].currencyOptions[0];
      expect(option.unitAmount).toBe(0.0000075);
      expect(usageCharge(li, option, 10n ** 12n).amountMinor).toBe(7_500_000n);
      // Past 12 places, or past the 15 significant digits a JSON number carries as sent, it is refused.
      for (const bad of [0.0000000000001, 1234.567890123456])
        expect((await rejectionOf(save(bad))).details).toEqual([
          {
            property: 'lineItems[0].prices[0].currencyOptions[0].unitAmount',
            error: expect.stringMatching(/decimal places|significant digits/),
          },
        ]);
    });

    it('every amount the API accepts is billed as the text that was sent (its decimal text round-trips)', () => {
      const li = {
        name: 'Tokens',
        unitLabel: null,
        billingScheme: 'per_unit',
        tiersMode: null,
        meter: null,
        prices: [],
      } as unknown as LineItem;
      let seed = 7;
      const next = () => (seed = (seed * 48271) % 2147483647);
      for (let i = 0; i < 2000; i++) {
        // At most 12 places and 15 significant digits, up to 99,999,999,999 minor units.
        const places = next() % 13;
        const digits = String(next() * 2147483647 + next()).slice(0, 1 + (next() % Math.min(15, places + 11)));
        const text =
          digits.length > places
            ? `${digits.slice(0, digits.length - places)}.${digits.slice(digits.length - places)}`
            : `0.${digits.padStart(places, '0')}`;
        const sent = Number(text);
        // Its shortest text is the text sent (trailing zeros aside): the exact value billing prices.
        const [whole, fraction = ''] = text.split('.');
        const normal = `${whole.replace(/^0+(?=.)/, '')}${fraction.replace(/0+$/, '') ? `.${fraction.replace(/0+$/, '')}` : ''}`;
        expect(decimalText(sent)).toBe(normal);
        const d = exactDecimal(sent);
        expect(d.digits * 10n ** BigInt(places - d.places)).toBe(BigInt(digits));
        // 10^6 units bill the price in millionths, rounded once half up.
        const charged = usageCharge(li, { currency: 'usd', unitAmount: sent, isDefault: true, tiers: [] } as never, 10n ** 6n).amountMinor;
        const divisor = 10n ** BigInt(places);
        expect(charged).toBe((BigInt(digits) * 10n ** 6n + divisor / 2n) / divisor);
      }
    });

    it('a catalog file converts major units exactly (0.000000075 dollars are 0.0000075 cents) and exports them back', async () => {
      const file = catalog([plan({ prices: { USD: 10 }, usage: [{ meter: 'tokens', unitPrices: { USD: 0.000000075 } }] })]);
      const { keys } = await core.importer.apply(file);
      const li = (await core.uow.read((r) => r.plans.get(keys['plans.notes.api'])))!.lineItems.find((l) => l.priceType === 'metered')!;
      const option = li.prices[0].currencyOptions[0];
      expect(option.unitAmount).toBe(0.0000075);
      expect(usageCharge(li, option, 10n ** 12n).amountMinor).toBe(7_500_000n);
      const exported = (await core.exporter.export('acme', false)).products?.[0].plans?.find((p) => p.key === 'api');
      expect(exported?.usage?.[0].unitPrices).toEqual({ USD: 0.000000075 });
      expect((await core.importer.apply(file)).updated).toBe(0);
      // More than 12 places below the cent is refused, not rounded.
      file.products![0].plans![0].usage![0].unitPrices = { USD: 0.0000000000000075 };
      await expect(core.importer.apply(file)).rejects.toMatchObject({
        details: [
          expect.objectContaining({ property: 'plans.api.usage[0].unitPrices.USD', error: expect.stringContaining('14 decimal places') }),
        ],
      });
    });
  });

  it('a free trial owes nothing for its usage, nor a minimum (Stripe: trial usage is not charged); the paid period after it does', async () => {
    const { keys } = await core.importer.apply(
      catalog([plan({ trialDays: 14, prices: { USD: 10 }, usage: [{ meter: 'api_calls', minUsage: 1000, unitPrices: { USD: 0.01 } }] })]),
    );
    const { subscription: s } = await buy(keys['plans.notes.api'], 'USD');
    expect(s.status).toBe('TRIALING');
    expect(s.currentPeriodEnd.getTime() - s.currentPeriodStart.getTime()).toBe(14 * DAY);
    core.clock.set(new Date(s.currentPeriodEnd.getTime() + 1000));
    expect(await core.sweeps.renewals()).toBe(1);
    expect(renewals).toEqual([[]]);
    // Used in the trial, still nothing billed.
    const { subscription: used } = await buy(keys['plans.notes.api'], 'USD');
    await core.usage.record(tenant(), { owner: used.id, meterSlug: 'api_calls', quantity: 5000 });
    core.clock.set(new Date(used.currentPeriodEnd.getTime() + 1000));
    expect(await core.sweeps.renewals()).toBe(1);
    expect(renewals[1]).toEqual([]);
    const closes = await core.uow.read((r) => r.usage.pageCloses(tenant(), { limit: 10, owner: used.id }));
    expect(closes.items.map((c) => [c.finalUsage, c.billedUnits, c.amountMinor])).toEqual([[5000n, 0n, 0n]]);
    // The first paid period bills its minimum: 1000 calls at a cent.
    const renewed = (await core.subscriptions.get(tenant(), s.id)).subscription;
    expect(renewed.status).toBe('ACTIVE');
    core.clock.set(new Date(renewed.currentPeriodEnd.getTime() + 1000));
    renewals = [];
    await core.sweeps.renewals();
    expect(renewals.flat().map((l) => l.amount)).toContain(1000);
  });

  it('a trial that ends by its cancellation at period end, or by a usage-based plan change, owes nothing either (review)', async () => {
    const terms = { trialDays: 14, prices: { USD: 10 }, usage: [{ meter: 'api_calls', minUsage: 1000, unitPrices: { USD: 0.01 } }] };
    const { keys } = await core.importer.apply(catalog([plan(terms), plan({ ...terms, key: 'api2', displayName: 'API 2' })]));
    const closesOf = async (owner: string) =>
      (await core.uow.read((r) => r.usage.pageCloses(tenant(), { limit: 10, owner }))).items.map((c) => [
        c.finalUsage,
        c.billedUnits,
        c.amountMinor,
      ]);
    // Canceled at the trial's end: the cancellation sweep closes the trial's period, billing nothing.
    const { subscription: ending } = await buy(keys['plans.notes.api'], 'USD');
    expect(ending.status).toBe('TRIALING');
    await core.usage.record(tenant(), { owner: ending.id, meterSlug: 'api_calls', quantity: 50 });
    await core.subscriptions.cancel(tenant(), ending.id, 'end');
    core.clock.set(new Date(ending.currentPeriodEnd.getTime() + 1000));
    expect(await core.sweeps.cancellations()).toBe(1);
    expect(await closesOf(ending.id)).toEqual([[50n, 0n, 0n]]);
    // Moved to another usage-based plan during the trial: the old subscription's close bills nothing.
    const { subscription: moving } = await buy(keys['plans.notes.api'], 'USD');
    expect(moving.status).toBe('TRIALING');
    await core.usage.record(tenant(), { owner: moving.id, meterSlug: 'api_calls', quantity: 70 });
    await core.subscriptions.changePlan(tenant(), moving.id, keys['plans.notes.api2'], 'create_prorations');
    expect(await closesOf(moving.id)).toEqual([[70n, 0n, 0n]]);
  });

  it('an amount an invoice line cannot carry exactly is refused naming the meter, never billed as another', () => {
    const at = new Date('2030-01-01T00:00:00Z');
    const billed = {
      close: { subscriptionId: 'sub-1', owner: 'sub-1', periodStart: at, periodEnd: at },
      meterSlug: 'api_calls',
      scale: 0,
      lines: [{ description: 'calls', quantity: 10n ** 15n, unitAmount: 99_999_999_999, amount: 10n ** 15n * 99_999_999_999n }],
    } as unknown as BilledPeriod;
    expect(() => usageInvoiceLines([billed])).toThrow(
      /meter api_calls \(subscription sub-1\) bills 99999999999000000000000000 minor units/,
    );
  });
});
