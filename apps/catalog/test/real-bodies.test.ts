import request from 'supertest';
import YAML from 'yaml';
import { createTestWorld, purchase, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import { catalogApi } from './helpers';

// Request bodies of the real catalog API, every optional field set, each read back (issue 14).
let world: TestWorld;
let org: SeededOrg;
let other: SeededOrg;
let app: ReturnType<typeof createCatalogApp>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'bodies-org');
  other = await seedOrganisation(world, 'bodies-other');
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

const api = (key = org.liveKey) => catalogApi(app, key);
type Obj = Record<string, unknown> & { data: Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('products', () => {
  it('POST {name, isActive} and PUT {name, isActive, settings{every field}} are applied and read back', async () => {
    const created = (await api().post('/api/products', { name: 'Bodies', isActive: false }).expect(201)).body as Obj;
    expect(created.data).toMatchObject({ name: 'Bodies', isActive: false });
    expect(created.data.archivedAt).not.toBeNull();
    const id = created.data.id;
    const settings = {
      successUrl: 'https://vendor.example.com/thanks',
      cancelUrl: 'https://vendor.example.com/pricing',
      allowPromoCodes: true,
      automaticTax: true,
      collectBillingAddress: true,
      collectShippingAddress: true,
      cardPrefillPreference: 'always',
      pastDueEntitlements: true,
    };
    const updated = (await api().put(`/api/products/${id}`, { name: 'Bodies Pro', isActive: true, settings }).expect(200)).body as Obj;
    // The update answer is the product, exactly the seven fields (the contract).
    expect(Object.keys(updated.data).sort()).toEqual(['archivedAt', 'createdAt', 'id', 'isActive', 'name', 'organisation', 'updatedAt']);
    expect(updated.data).toMatchObject({ name: 'Bodies Pro', isActive: true, archivedAt: null });
    const read = (await api().get(`/api/products/${id}?expand=settings`).expect(200)).body as Obj;
    expect(read.data).toMatchObject({ name: 'Bodies Pro', isActive: true });
    expect(read.data.settings).toMatchObject({ ...settings, productId: id });
    // A partial settings change keeps the rest; null clears a URL.
    await api()
      .put(`/api/products/${id}`, { name: 'Bodies Pro', settings: { cardPrefillPreference: 'choice', successUrl: null } })
      .expect(200);
    const again = (await api().get(`/api/products/${id}?expand=settings`).expect(200)).body as Obj;
    expect(again.data.settings).toMatchObject({ ...settings, cardPrefillPreference: 'choice', successUrl: null });
    // Anything else stays 400.
    await api()
      .put(`/api/products/${id}`, { settings: { cardPrefillPreference: 'sometimes' } })
      .expect(400);
    await api()
      .put(`/api/products/${id}`, { settings: { successUrl: 'javascript:alert(1)' } })
      .expect(400);
    await api()
      .put(`/api/products/${id}`, { settings: { color: 'red' } })
      .expect(400);
    await api().post('/api/products', { name: 'x', isActive: 'yes' }).expect(400);
    await api().put(`/api/products/${id}`, { isActive: false }).expect(200);
    expect(((await api().get(`/api/products/${id}`).expect(200)).body as Obj).data.isActive).toBe(false);
  });
});

describe('product settings in checkout', () => {
  it('allowPromoCodes and automaticTax decide where a checkout request leaves them out', async () => {
    const seeded = await seedOrganisation(world, 'bodies-settings');
    const productId = seeded.keys['products.notes'];
    const put = (body: object) => catalogApi(app, seeded.liveKey).put(`/api/products/${productId}`, body);
    const optionsOf = async (extra: object = {}) => {
      const { url } = await world.core.checkout.checkoutLink(seeded.tenant, seeded.keys['plans.notes.team'], {
        successUrl: 'https://vendor.example.com/ok',
        cancelUrl: 'https://vendor.example.com/no',
        granteeId: 'g',
        member: 'm@example.com',
        ...extra,
      });
      return (await world.core.checkout.session(url.split('/').pop() as string)).session.options;
    };
    expect(await optionsOf()).toMatchObject({ allowPromoCode: false, automaticTax: false });
    await put({ settings: { allowPromoCodes: true, automaticTax: true } }).expect(200);
    expect(await optionsOf()).toMatchObject({ allowPromoCode: true, automaticTax: true });
    expect(await optionsOf({ allowPromoCode: false, automaticTax: false })).toMatchObject({ allowPromoCode: false, automaticTax: false });
    expect(await optionsOf({ promoCode: 'SPRING' })).toMatchObject({ allowPromoCode: false, promoCode: 'SPRING' });
  });
});

describe('plans and tier tags', () => {
  it('POST and PUT {name, productId, isActive, tierTag (a name, created when new), trialPeriodDays} are applied and read back', async () => {
    const productId = org.keys['products.notes'];
    const created = (
      await api().post('/api/plans', { name: 'Tagged', productId, isActive: false, tierTag: 'Gold', trialPeriodDays: 730 }).expect(201)
    ).body as Obj;
    expect(created.data).toMatchObject({ name: 'Tagged', productId, isActive: false, trialPeriodDays: 730 });
    const tags = ((await api().get('/api/tier-tags').expect(200)).body as { data: { id: string; name: string }[] }).data;
    const gold = tags.find((t) => t.name === 'Gold');
    expect(gold).toBeDefined();
    expect(created.data.tierTagId).toBe(gold?.id);
    const id = created.data.id;
    const updated = (
      await api().put(`/api/plans/${id}`, { name: 'Tagged 2', productId, isActive: true, tierTag: 'gold', trialPeriodDays: 1 }).expect(200)
    ).body as Obj;
    // The same tag by name (case-insensitive): no second one.
    expect(updated.data).toMatchObject({ name: 'Tagged 2', isActive: true, trialPeriodDays: 1, tierTagId: gold?.id });
    const detail = (await api().get(`/api/plans/${id}?expand=tierTag`).expect(200)).body as Obj;
    expect(detail.data.tierTag).toMatchObject({ id: gold?.id, name: 'Gold' });
    await api().put(`/api/plans/${id}`, { tierTag: null, trialPeriodDays: null }).expect(200);
    expect(((await api().get(`/api/plans/${id}`).expect(200)).body as Obj).data).toMatchObject({ tierTagId: null, trialPeriodDays: null });
    await api().post('/api/plans', { name: 'x', productId, trialPeriodDays: 0 }).expect(400);
    await api().post('/api/plans', { name: 'x', productId, trialPeriodDays: 731 }).expect(400);
    await api().put(`/api/plans/${id}`, { productId: other.keys['products.notes'] }).expect(400);
    // Without productId: this organisation has one product in this mode, so it is that one.
    const implicit = (await api().post('/api/plans', { name: 'Implicit' }).expect(201)).body as Obj;
    expect(implicit.data.productId).toBe(productId);
  });

  it('lists tier tags with the catalog envelope and cursors, creates one {name} (409 when taken), per organisation', async () => {
    for (const name of ['T1', 'T2', 'T3']) await api().post('/api/tier-tags', { name }).expect(200);
    await api().post('/api/tier-tags', { name: 't1' }).expect(409);
    await api().post('/api/tier-tags', { name: '' }).expect(400);
    await api().post('/api/tier-tags', { name: 'x', extra: 1 }).expect(400);
    const first = (await api().get('/api/tier-tags?limit=2').expect(200)).body;
    expect(first).toMatchObject({ type: 'list', hasMore: true, previousCursor: null });
    expect(first.data).toHaveLength(2);
    expect(Object.keys(first.data[0]).sort()).toEqual(['createdAt', 'id', 'name', 'organisation', 'updatedAt']);
    const next = (await api().get(`/api/tier-tags?limit=2&after=${first.nextCursor}`).expect(200)).body;
    expect(next.data.map((t: { id: string }) => t.id)).not.toContain(first.data[0].id);
    // `search` (published) keeps the names containing it, in any case.
    expect((await api().get('/api/tier-tags?search=t2').expect(200)).body.data.map((t: { name: string }) => t.name)).toEqual(['T2']);
    const others = (await api(other.liveKey).get('/api/tier-tags').expect(200)).body.data.map((t: { name: string }) => t.name);
    expect(others).not.toContain('T1');
    await api(org.readOnlyKey).post('/api/tier-tags', { name: 'RO' }).expect(403);
  });

  it('GET /api/plans accepts includeFilterOptions and always carries filterOptions', async () => {
    const res = (await api().get('/api/plans?includeFilterOptions=true').expect(200)).body;
    // Upper case, as the published schema's currencies (the catalog file saved them in lower case), each once.
    expect(res.filterOptions.currencies).toContain('USD');
    expect(res.filterOptions.currencies).toEqual([...new Set(res.filterOptions.currencies as string[])].map((c) => c.toUpperCase()));
    expect((await api().get('/api/plans?includeFilterOptions=false').expect(200)).body.filterOptions).toBeDefined();
    await api().get('/api/plans?includeFilterOptions=maybe').expect(400);
  });
});

describe('POST /api/plans/save', () => {
  const productId = () => org.keys['products.notes'];
  const fullBody = () => ({
    productId: productId(),
    name: 'Metered',
    entitlements: ['edit', 'api'],
    isActive: true,
    tierTag: 'Usage',
    archivedAt: null,
    trialPeriodDays: 14,
    lineItems: [
      {
        name: 'API calls',
        slug: 'api_calls',
        nickname: 'Calls',
        priceType: 'metered',
        intervalType: 'recurring',
        billingScheme: 'tiered',
        tiersMode: 'graduated',
        minQuantity: 0,
        maxQuantity: 0,
        allowChangingQuantity: false,
        isActive: true,
        meterSlug: 'api_calls_meter',
        unitLabel: 'call',
        archivedAt: null,
        prices: [
          {
            defaultCurrency: 'eur',
            interval: 'month',
            intervalCount: 1,
            archivedAt: null,
            currencyOptions: [
              {
                currency: 'usd',
                unitAmount: null,
                tiers: [
                  { upTo: '1000', flatAmount: 0, unitAmount: 0 },
                  { upTo: 'inf', flatAmount: null, unitAmount: 0.5 },
                ],
              },
              { currency: 'eur', unitAmount: null, tiers: [{ upTo: 'inf', flatAmount: 100, unitAmount: 0.4 }] },
            ],
          },
        ],
      },
      {
        name: 'Seats',
        slug: 'seats',
        nickname: 'Seats',
        priceType: 'per_seat',
        intervalType: 'recurring',
        billingScheme: 'per_unit',
        // Sent by real clients with every line item: ignored unless tiered.
        tiersMode: 'volume',
        minQuantity: 1,
        maxQuantity: 50,
        allowChangingQuantity: true,
        isActive: true,
        meterSlug: null,
        unitLabel: 'seat',
        archivedAt: null,
        // One billing interval per plan: every recurring price of it shares the metered one's.
        prices: [{ defaultCurrency: 'usd', interval: 'month', intervalCount: 1, currencyOptions: [{ currency: 'usd', unitAmount: 1200 }] }],
      },
    ],
  });

  it('creates a plan from every field and reads each back', async () => {
    const saved = (await api().post('/api/plans/save', fullBody()).expect(201)).body as Obj;
    const id = saved.data.id;
    const detail = (await api().get(`/api/plans/${id}?expand=entitlements,lineItems,tierTag`).expect(200)).body as Obj;
    const plan = detail.data;
    expect(plan).toMatchObject({ name: 'Metered', productId: productId(), isActive: true, trialPeriodDays: 14, archivedAt: null });
    expect(plan.tierTag.name).toBe('Usage');
    expect(plan.entitlements.data.map((e: { name: string }) => e.name)).toEqual(['edit', 'api']);
    const [metered, seats] = plan.lineItems.data;
    expect(metered).toMatchObject({
      name: 'API calls',
      slug: 'api_calls',
      nickname: 'Calls',
      priceType: 'metered',
      intervalType: 'recurring',
      billingScheme: 'tiered',
      tiersMode: 'graduated',
      minQuantity: 0,
      maxQuantity: 0,
      allowChangingQuantity: false,
      isActive: true,
      unitLabel: 'call',
      archivedAt: null,
      meter: { slug: 'api_calls_meter' },
    });
    const price = metered.prices.data[0];
    expect(price).toMatchObject({ interval: 'month', intervalCount: 1, archivedAt: null });
    const [usd, eur] = price.currencyOptions.data;
    expect(usd).toMatchObject({ currency: 'usd', isDefault: false, unitAmount: null });
    expect(eur).toMatchObject({ currency: 'eur', isDefault: true });
    expect(usd.tiers.data.map((t: object) => ({ ...t }))).toEqual([
      expect.objectContaining({ upTo: '1000', flatAmount: 0, unitAmount: 0 }),
      expect.objectContaining({ upTo: 'inf', flatAmount: null, unitAmount: 0.5 }),
    ]);
    expect(eur.tiers.data[0]).toMatchObject({ upTo: 'inf', flatAmount: 100, unitAmount: 0.4 });
    expect(seats).toMatchObject({
      slug: 'seats',
      priceType: 'per_seat',
      billingScheme: 'per_unit',
      tiersMode: null,
      minQuantity: 1,
      maxQuantity: 50,
      allowChangingQuantity: true,
      unitLabel: 'seat',
      meter: null,
    });
    expect(seats.prices.data[0]).toMatchObject({ interval: 'month', intervalCount: 1 });
    expect(seats.prices.data[0].currencyOptions.data[0]).toMatchObject({ currency: 'usd', unitAmount: 1200, isDefault: true });
  });

  it('updates given ids in place, creates the rest, and archives omitted children a subscription references', async () => {
    const saved = (await api().post('/api/plans/save', fullBody()).expect(201)).body as Obj;
    const id = saved.data.id;
    const before = ((await api().get(`/api/plans/${id}?expand=lineItems`).expect(200)).body as Obj).data.lineItems.data;
    const [metered, seats] = before;
    const meteredPrice = metered.prices.data[0];
    const usdTier = meteredPrice.currencyOptions.data[0].tiers.data[0];
    // A subscription holds the seats line item.
    const sub = await purchase(world, org.keys['plans.notes.business'], 'line-items');
    await world.db.uow.run(async (r) => {
      const s = await r.subscriptions.get(sub.subscription.id);
      if (s) await r.subscriptions.save({ ...s, planId: id, lineItemIds: [seats.id] });
    });
    const body = fullBody();
    const update = {
      ...body,
      id,
      name: 'Metered v2',
      archivedAt: '2030-01-01T00:00:00.000Z',
      lineItems: [
        {
          ...body.lineItems[0],
          id: metered.id,
          name: 'API requests',
          prices: [
            {
              ...body.lineItems[0].prices[0],
              id: meteredPrice.id,
              defaultCurrency: 'usd',
              currencyOptions: [
                { currency: 'usd', unitAmount: null, tiers: [{ id: usdTier.id, upTo: '2000', flatAmount: 0, unitAmount: 0 }] },
              ],
            },
          ],
        },
        { ...body.lineItems[1], name: 'Addon', slug: 'addon' },
      ],
    };
    const res = (await api().post('/api/plans/save', update).expect(200)).body as Obj;
    expect(res.data.id).toBe(id);
    const after = ((await api().get(`/api/plans/${id}?expand=lineItems`).expect(200)).body as Obj).data;
    expect(after).toMatchObject({ name: 'Metered v2', archivedAt: '2030-01-01T00:00:00.000Z', isActive: false });
    const items = after.lineItems.data as { id: string; name: string; archivedAt: string | null; isActive: boolean; prices: Obj }[];
    const byName = Object.fromEntries(items.map((i) => [i.name, i]));
    // In place: the same ids.
    expect(byName['API requests'].id).toBe(metered.id);
    const price = (byName['API requests'].prices.data as unknown as Obj['data'][]).at(0);
    expect(price?.id).toBe(meteredPrice.id);
    expect(price?.currencyOptions.data).toHaveLength(1);
    expect(price?.currencyOptions.data[0]).toMatchObject({ id: meteredPrice.currencyOptions.data[0].id, isDefault: true });
    expect(price?.currencyOptions.data[0].tiers.data).toEqual([expect.objectContaining({ id: usdTier.id, upTo: '2000' })]);
    // New: a new id.
    expect(byName.Addon.id).not.toBe(seats.id);
    // Omitted but referenced: kept, archived.
    expect(byName.Seats).toMatchObject({ id: seats.id, isActive: false });
    expect(byName.Seats.archivedAt).not.toBeNull();
    // Ids that are not this plan's are refused.
    await api()
      .post('/api/plans/save', { ...update, lineItems: [{ ...body.lineItems[1], id: '00000000-0000-4000-8000-000000000000' }] })
      .expect(400);
    await api()
      .post('/api/plans/save', { ...update, lineItems: [{ ...body.lineItems[1], slug: 'Not A Slug' }] })
      .expect(400);
    await api()
      .post('/api/plans/save', {
        ...update,
        lineItems: [{ ...body.lineItems[1], prices: [{ ...body.lineItems[1].prices[0], defaultCurrency: 'gbp' }] }],
      })
      .expect(400);
  });
});

describe('product export and import', () => {
  it('keeps the pricing tree of a plan made through the API when its export is imported back', async () => {
    const productId = org.keys['products.notes'];
    const saved = (
      await api()
        .post('/api/plans/save', {
          productId,
          name: 'Tree',
          lineItems: [
            {
              name: 'Seats',
              priceType: 'per_seat',
              minQuantity: 1,
              maxQuantity: 9,
              prices: [{ interval: 'month', currencyOptions: [{ currency: 'usd', unitAmount: 900 }] }],
            },
          ],
        })
        .expect(201)
    ).body as Obj;
    const lineItems = async () =>
      ((await api().get(`/api/plans/${saved.data.id}?expand=lineItems`).expect(200)).body as Obj).data.lineItems;
    const before = await lineItems();
    const exported = await api().get(`/api/products/export/${productId}`).expect(200);
    await api().post('/api/products/import', YAML.parse(exported.text)).expect(201);
    expect(await lineItems()).toEqual(before);
  });

  it('exports one product as YAML and imports it back, as a multipart file or a JSON body, into the key’s tenant only', async () => {
    // A catalog made from a file round-trips unchanged.
    const org = await seedOrganisation(world, 'bodies-io');
    const api = (key = org.liveKey) => catalogApi(app, key);
    const productId = org.keys['products.notes'];
    const exported = await api().get(`/api/products/export/${productId}`).expect(200);
    expect(exported.headers['content-type']).toMatch(/^application\/yaml/);
    const file = YAML.parse(exported.text);
    expect(file.organisation).toBe('bodies-io');
    expect(file.products).toHaveLength(1);
    expect(file.products[0].key).toBe('notes');
    await api(other.liveKey).get(`/api/products/export/${productId}`).expect(403);

    // Back unchanged, as a multipart upload of the YAML.
    const upload = await request(app)
      .post('/api/products/import')
      .set('authorization', `Bearer ${org.liveKey}`)
      .attach('file', Buffer.from(exported.text), { filename: 'notes.yaml', contentType: 'application/yaml' })
      .expect(201);
    expect(upload.body.data).toMatchObject({ created: 0, updated: 0 });
    // A changed copy as JSON: a new plan is created.
    file.products[0].plans.push({ key: 'imported', displayName: 'Imported', pricingType: 'free', capabilities: ['edit'] });
    const json = (await api().post('/api/products/import', file).expect(201)).body;
    expect(json.data.created).toBe(1);
    const plan = json.data.keys['plans.notes.imported'];
    expect(((await api().get(`/api/plans/${plan}`).expect(200)).body as Obj).data.name).toBeDefined();
    // Into the other organisation: refused; the other mode: refused; garbage: 400.
    await api(other.liveKey).post('/api/products/import', file).expect(403);
    await api(org.testKey)
      .post('/api/products/import', { ...file, test: false })
      .expect(400);
    await request(app)
      .post('/api/products/import')
      .set('authorization', `Bearer ${org.liveKey}`)
      .attach('file', Buffer.from('products: [unclosed'), 'bad.yaml')
      .expect(400);
    await request(app)
      .post('/api/products/import')
      .set('authorization', `Bearer ${org.liveKey}`)
      .attach('other', Buffer.from('{}'), 'x.json')
      .expect(400);
    await api(org.readOnlyKey).post('/api/products/import', file).expect(403);
    // A broken multipart body, and one without a boundary: 400, never a hang or a 500.
    for (const type of ['multipart/form-data; boundary=xyz', 'multipart/form-data'])
      await request(app)
        .post('/api/products/import')
        .set('authorization', `Bearer ${org.liveKey}`)
        .set('content-type', type)
        .send('--xyz\r\ncontent-disposition: form-data; name="file"; filename="a"\r\n\r\nunterminated')
        .expect(400);
    // A file without the organisation is the key's.
    const { organisation: _o, ...anonymous } = file;
    void _o;
    expect((await api().post('/api/products/import', anonymous).expect(201)).body.data.unchanged).toBeGreaterThan(0);
  });
});
