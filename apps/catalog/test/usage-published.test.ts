import { ajv } from '@tollgate/http';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import { catalogApi } from './helpers';

// The published catalog shapes of usage (docs/reference/published-catalog-api.md, sections 2.7,
// 2.13 and 3.1), written here from that document, against what our routes take and answer.
let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createCatalogApp>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'usage-published');
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

const api = () => catalogApi(app, org.liveKey);
const s = { type: 'string' };
const ns = { type: ['string', 'null'] };
/** Every field of a published base object is required; nullable ones carry null. */
const base = (properties: Record<string, object>, strict = false) => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  ...(strict ? { additionalProperties: false } : {}),
});
const list = (item: object) =>
  base({ type: { const: 'list' }, data: { type: 'array', items: item }, nextCursor: ns, previousCursor: ns, hasMore: { type: 'boolean' } });
const obj = (data: object) => base({ type: { const: 'object' }, data });

const published = {
  RecordUsageRequestSchema: base(
    { owner: s, meterSlug: { type: 'string', pattern: '^[a-z0-9_]+$' }, increment: { type: 'number', minimum: 1 } },
    true,
  ),
  Meter: base({ id: s, slug: s, name: s, stripeMeterId: s, organisation: s, createdAt: s, updatedAt: s }),
  UsageRecord: base({
    id: s,
    organisation: s,
    ownerId: s,
    usageId: s,
    status: { enum: ['recorded', 'current', 'final'] },
    count: { type: 'integer' },
    recordedAt: ns,
    createdAt: s,
    updatedAt: s,
  }),
  CheckEntitlementsSchema: obj(
    base({
      entitlements: { type: 'array', items: base({ type: { enum: ['entitlement', 'meter'] }, value: s, expiryDate: ns }) },
      signature: s,
    }),
  ),
};
const expectValid = (schema: object, value: unknown) => {
  const validate = ajv.compile(schema);
  if (!validate(value)) throw new Error(`${ajv.errorsText(validate.errors)}\n${JSON.stringify(value).slice(0, 800)}`);
};

describe('usage as published', () => {
  it('POST /api/usage/record takes RecordUsageRequestSchema bodies and answers 204; others are 400 naming the member', async () => {
    await api().post('/api/meters', { slug: 'api_calls', name: 'API calls' }).expect(201);
    const body = { owner: 'cus_1', meterSlug: 'api_calls', increment: 5 };
    expectValid(published.RecordUsageRequestSchema, body);
    const res = await api().post('/api/usage/record', body, 'pub-1').expect(204);
    expect(res.text).toBe('');
    for (const [bad, member] of [
      [{ ...body, extra: 1 }, 'extra'],
      [{ owner: 'cus_1', meterSlug: 'api_calls' }, 'increment'],
      [{ ...body, increment: 0 }, 'increment'],
      [{ ...body, meterSlug: 'Not-A-Slug' }, 'meterSlug'],
    ] as const) {
      const refused = await api().post('/api/usage/record', bad).expect(400);
      expect(JSON.stringify(refused.body.errors)).toContain(member);
    }
  });

  it('GET /api/meters answers GetMetersListSchema, with search', async () => {
    await api().post('/api/meters', { slug: 'tokens_in', name: 'Input tokens' }).expect(201);
    const all = (await api().get('/api/meters?limit=100').expect(200)).body;
    expectValid(list(published.Meter), all);
    const found = (await api().get('/api/meters?search=TOKENS').expect(200)).body;
    expectValid(list(published.Meter), found);
    expect(found.data.map((m: { slug: string }) => m.slug)).toEqual(['tokens_in']);
    expect(found.data[0].stripeMeterId).toBe(found.data[0].paymentMeterId);
  });

  it('GET /api/usage-records answers GetUsageListSchema for recorded, current and final records, page by page', async () => {
    const owner = 'cus_records';
    for (let i = 1; i <= 3; i++) {
      world.clock.set(new Date(world.clock.now().getTime() + 1000));
      await api().post('/api/usage/record', { owner, meterSlug: 'api_calls', increment: i }, `rec-${i}`).expect(204);
    }
    world.clock.set(new Date(world.clock.now().getTime() + 1000));
    await world.core.usage.closePeriod(org.tenant, { owner, meterSlug: 'api_calls' }, { periodEnd: null });
    world.clock.set(new Date(world.clock.now().getTime() + 1000));
    await api().post('/api/usage/record', { owner, meterSlug: 'api_calls', increment: 10 }, 'rec-4').expect(204);
    const q = `owner=${owner}&meterSlug=api_calls&sort=asc`;

    const recorded = (await api().get(`/api/usage-records?${q}&status=recorded`).expect(200)).body;
    expectValid(list(published.UsageRecord), recorded);
    expect(recorded.data.map((r: { count: number; status: string }) => [r.status, r.count])).toEqual([
      ['recorded', 1],
      ['recorded', 2],
      ['recorded', 3],
      ['recorded', 10],
    ]);
    const current = (await api().get(`/api/usage-records?${q}&status=current`).expect(200)).body;
    expectValid(list(published.UsageRecord), current);
    expect(current.data).toEqual([expect.objectContaining({ status: 'current', count: 10, ownerId: owner, recordedAt: null })]);

    // Every status at once, two a page, oldest first, each page valid.
    const seen: [string, number][] = [];
    let after: string | null = null;
    do {
      const page: { data: { status: string; count: number }[]; nextCursor: string | null } = (
        await api()
          .get(`/api/usage-records?${q}&status=recorded,current,final&limit=2${after ? `&after=${after}` : ''}`)
          .expect(200)
      ).body;
      expectValid(list(published.UsageRecord), page);
      seen.push(...page.data.map((r): [string, number] => [r.status, r.count]));
      after = page.nextCursor;
    } while (after);
    expect(seen.slice(0, 3)).toEqual([
      ['recorded', 1],
      ['recorded', 2],
      ['recorded', 3],
    ]);
    // The close writes the final record and opens the next period at one instant: either comes first (by id).
    expect(seen.slice(3, 5).sort()).toEqual([
      ['current', 10],
      ['final', 6],
    ]);
    expect(seen[5]).toEqual(['recorded', 10]);
    expect(seen).toHaveLength(6);
    expect((await api().get(`/api/usage-records?status=current`).expect(400)).body.errors).toEqual([
      expect.objectContaining({ property: 'owner' }),
    ]);
    await api().get(`/api/usage-records?${q}&status=pending`).expect(400);
  });

  it('GET /api/usage-records?sort=desc pages newest first, forwards with nextCursor and back with previousCursor', async () => {
    const q = 'owner=cus_records&meterSlug=api_calls&status=recorded,current,final';
    type Page = { data: { id: string }[]; nextCursor: string | null; previousCursor: string | null; hasMore: boolean };
    const get = async (params: string): Promise<Page> => {
      const body = (await api().get(`/api/usage-records?${q}&${params}`).expect(200)).body;
      expectValid(list(published.UsageRecord), body);
      return body;
    };
    const ascending = (await get('sort=asc&limit=100')).data.map((r) => r.id);
    expect(ascending).toHaveLength(6);

    // Newest first, two a page: the exact reverse, every record once; the first page has nothing before it.
    const pages: Page[] = [];
    let after: string | null = null;
    do {
      const page = await get(`sort=desc&limit=2${after ? `&after=${after}` : ''}`);
      pages.push(page);
      after = page.nextCursor;
    } while (after);
    expect(pages.flatMap((p) => p.data.map((r) => r.id))).toEqual([...ascending].reverse());
    expect(pages.map((p) => p.data.length)).toEqual([2, 2, 2]);
    expect(pages[0].previousCursor).toBeNull();
    expect(pages[2].hasMore).toBe(false);

    // Back from the last page: previousCursor as `before` gives the page before it, in the same order.
    const back = await get(`sort=desc&limit=2&before=${pages[2].previousCursor}`);
    expect(back.data.map((r) => r.id)).toEqual(pages[1].data.map((r) => r.id));
    expect(back.nextCursor).not.toBeNull();
    // Oldest first, `before` a record gives the ones just before it.
    const lastAsc = await get(`sort=asc&limit=4`);
    const prevAsc = await get(`sort=asc&limit=2&before=${lastAsc.nextCursor}`);
    expect(prevAsc.data.map((r) => r.id)).toEqual(ascending.slice(1, 3));
    expect(prevAsc.previousCursor).not.toBeNull();
    expect((await api().get(`/api/usage-records?${q}&sort=sideways`).expect(400)).body.errors).toEqual([
      expect.objectContaining({ property: expect.stringContaining('sort') }),
    ]);
  });

  it('GET /api/entitlements/check answers CheckEntitlementsSchema and takes the published owner parameter', async () => {
    await api().post('/api/credits/grants', { owner: 'cus_9', meterSlug: 'api_calls', amount: 50 }).expect(201);
    const res = (await api().get('/api/entitlements/check?granteeId=nobody&owner=cus_9').expect(200)).body;
    expectValid(published.CheckEntitlementsSchema, res);
    expect(res.data.entitlements).toEqual([expect.objectContaining({ type: 'meter', value: 'api_calls', remaining: 50 })]);
    const without = (await api().get('/api/entitlements/check?granteeId=nobody').expect(200)).body;
    expect(without.data.entitlements).toEqual([]);
  });
});
