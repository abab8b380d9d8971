/* Generated from the route tables (the served OpenAPI documents): for every authenticated route, no
   key, a revoked key, a key without the scope, another organisation's key and the other mode's key
   are refused, and no list shows another tenant's records. The contract's statuses, each asserted
   on its own: another organisation's record 403, the other mode's record 404, an unknown id 404. */
import { startWebhookReceiver, type WebhookReceiver } from '@tollgate/runtime/testing';
import { buySeats, call, createDatabase, seedOrg, startInstance, type Instance, type Org } from './harness';

let db: Awaited<ReturnType<typeof createDatabase>>;
let server: Instance;
let a: Org;
let b: Org;
let ids: Record<string, string>;
let receiver: WebhookReceiver;

beforeAll(async () => {
  db = await createDatabase();
  // A's destination is delivered to a receiver on the loopback interface.
  server = await startInstance(db.url, { WEBHOOK_ALLOW_PRIVATE: 'true' });
  receiver = await startWebhookReceiver();
  a = await seedOrg(db.url, 'tenant-a');
  b = await seedOrg(db.url, 'tenant-b');
  const subscription = await buySeats(server.url, db.url, a, 3, 'isolated');
  const event = (await call(server.url, 'POST', `/subscriptions/${subscription}/seats`, { key: a.live, body: { increment: 1 } })).body as {
    eventUuid: string;
  };
  const license = (
    (await call(server.url, 'GET', `/licenses?subscriptionUuid=${subscription}&take=1`, { key: a.live })).body as { uuid: string }[]
  )[0].uuid;
  // A's webhook endpoint (disabled: nothing is POSTed anywhere) and one of its events.
  const webhook = (
    (
      await call(server.url, 'POST', '/api/webhooks', {
        bearer: a.live,
        body: { url: 'https://hooks.vendor.example.com/a', enabled: false },
      })
    ).body as { data: { id: string } }
  ).data.id;
  const outboxEvent = ((await call(server.url, 'GET', '/api/events?limit=1', { bearer: a.live })).body as { data: { id: string }[] })
    .data[0].id;
  // Usage: the meter exists in every tenant the test calls with (a list or a create answers its own),
  // and tenant A holds a reservation.
  for (const key of [a.live, a.test, b.live])
    await call(server.url, 'POST', '/api/meters', { bearer: key, body: { slug: 'tokens', name: 'Tokens' } });
  await call(server.url, 'POST', '/api/credits/grants', { bearer: a.live, body: { owner: 'isolated', meterSlug: 'tokens', amount: 100 } });
  const hold = (
    (
      await call(server.url, 'POST', '/api/usage/reservations', {
        bearer: a.live,
        body: { owner: 'isolated', meterSlug: 'tokens', quantity: 5, ttlSeconds: 3600 },
      })
    ).body as { data: { id: string } }
  ).data.id;
  // The owner (the paying customer) of A's subscription.
  const owner = (
    (await call(server.url, 'GET', `/api/subscriptions/${subscription}`, { bearer: a.live })).body as { data: { ownerId: string } }
  ).data.ownerId;
  const grantee = (
    (await call(server.url, 'POST', '/api/grantees', { bearer: a.live, body: { granteeId: 'isolated-grantee' } })).body as {
      data: { id: string };
    }
  ).data.id;
  const entitlement = ((await call(server.url, 'GET', '/api/entitlements?limit=1', { bearer: a.live })).body as { data: { id: string }[] })
    .data[0].id;
  const lineItem = (
    (await call(server.url, 'GET', `/api/subscription-plans/${subscription}?expand=subscriptionPlanLineItems`, { bearer: a.live }))
      .body as {
      data: { subscriptionPlanLineItems: { data: { id: string }[] } };
    }
  ).data.subscriptionPlanLineItems.data[0].id;
  // The commerce resources of tenant A (#20 part B): a destination of its event, an API key, a
  // pricing part of each kind, a receipt, its integration, a cart with an item.
  const get = async (path: string) => (await call(server.url, 'GET', path, { bearer: a.live })).body as { data: { id: string }[] };
  const post = async (path: string, body?: object) =>
    (await call(server.url, 'POST', path, { bearer: a.live, body })).body as { data: { id: string } };
  const receiving = (await post('/api/webhooks', { url: receiver.url })).data.id;
  await post(`/api/events/${outboxEvent}/resend`, { endpointId: receiving });
  const destination = (await get(`/api/destinations?eventId=${outboxEvent}`)).data[0].id;
  const tiered = (
    await post('/api/plans/save', {
      productId: a.keys['products.notes'],
      name: 'tiered',
      entitlements: [],
      lineItems: [
        {
          name: 'Calls',
          slug: 'calls',
          priceType: 'per_seat',
          intervalType: 'recurring',
          billingScheme: 'tiered',
          tiersMode: 'volume',
          minQuantity: 1,
          maxQuantity: 10,
          prices: [
            {
              defaultCurrency: 'USD',
              interval: 'month',
              intervalCount: 1,
              currencyOptions: [{ currency: 'USD', unitAmount: null, tiers: [{ upTo: 'inf', flatAmount: null, unitAmount: 1 }] }],
            },
          ],
        },
      ],
    })
  ).data.id;
  const option = (await get(`/api/currency-options?expand=tiers&priceId=${(await get(`/api/prices?planId=${tiered}`)).data[0].id}`))
    .data[0] as unknown as { id: string; priceId: string; tiers: { data: { id: string }[] } };
  const cart = (await post('/api/carts', { owner: 'isolated', interval: 'month', intervalCount: 1 })).data.id;
  const cartItem = (
    await post('/api/cart-items', { cartId: cart, planId: a.keys['plans.notes.team'], interval: 'month', intervalCount: 1 })
  ).data.id;
  ids = {
    lineItem,
    entitlement,
    grantee,
    owner,
    destination,
    apiKey: (await get('/api/api-keys')).data[0].id,
    catalogLineItem: (await get(`/api/line-items?planId=${tiered}`)).data[0].id,
    price: option.priceId,
    currencyOption: option.id,
    tier: option.tiers.data[0].id,
    receipt: (await get('/api/receipts')).data[0].id,
    integration: (await get('/api/payment-integrations')).data[0].id,
    cart,
    cartItem,
    hold,
    webhook,
    outboxEvent,
    product: a.keys['products.notes'],
    plan: a.keys['plans.notes.team'],
    freePlan: a.keys['plans.notes.free'],
    table: a.keys['pricingTables.notes.main'],
    subscription,
    event: event.eventUuid,
    license,
  };
});
afterAll(async () => {
  await receiver?.close();
  await server?.stop();
  await db?.drop();
});

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

/** The id of tenant A's record of each commerce resource, by path (#20 part B). */
const COMMERCE_IDS: [string, (i: Record<string, string>) => string][] = [
  ['/api/destinations', (i) => i.destination],
  ['/api/api-keys', (i) => i.apiKey],
  ['/api/line-items', (i) => i.catalogLineItem],
  ['/api/prices', (i) => i.price],
  ['/api/currency-options', (i) => i.currencyOption],
  ['/api/tiers', (i) => i.tier],
  ['/api/receipts', (i) => i.receipt],
  ['/api/payment-integrations', (i) => i.integration],
  ['/api/carts', (i) => i.cart],
  ['/api/cart-items', (i) => i.cartItem],
];

type Op = { generation: 'legacy' | 'v1' | 'v2' | 'v3' | 'catalog'; method: string; path: string; scope?: string };

/** The route's path with tenant A's ids; its query; a body that passes validation. */
function request(op: Op): { path: string; body?: unknown } {
  const idFor = (name: string) => {
    if (name === 'productUuid') return ids.product;
    if (name === 'planUuid') return ids.plan;
    if (name === 'pricingTableUuid') return ids.table;
    if (name === 'subscriptionUuid') return ids.subscription;
    if (name === 'eventUuid') return ids.event;
    if (name === 'licenseUuid') return ids.license;
    // Not an id but a filter value (a grantee of tenant A's): another tenant's list of it is empty.
    if (name === 'granteeId') return 'isolated';
    if (name === 'uuid') return op.path.startsWith('/products') ? ids.product : ids.plan;
    if (name === 'id')
      return op.path.startsWith('/api/products')
        ? ids.product
        : op.path.startsWith('/api/webhooks')
          ? ids.webhook
          : op.path.startsWith('/api/events')
            ? ids.outboxEvent
            : op.path.startsWith('/api/usage/reservations')
              ? ids.hold
              : op.path.startsWith('/api/subscription-plan-line-items')
                ? ids.lineItem
                : op.path.startsWith('/api/subscription')
                  ? ids.subscription
                  : op.path.startsWith('/api/owners')
                    ? ids.owner
                    : op.path.startsWith('/api/grantees')
                      ? ids.grantee
                      : op.path.startsWith('/api/entitlements')
                        ? ids.entitlement
                        : // A subscription's group has the subscription's id.
                          op.path.startsWith('/api/groups')
                          ? ids.subscription
                          : (COMMERCE_IDS.find(([prefix]) => op.path.startsWith(prefix))?.[1](ids) ?? ids.plan);
    throw new Error(`no id for ${name} in ${op.path}`);
  };
  let path = op.path.replace(/\{(\w+)\}/g, (_m, name) => idFor(name));
  const q: Record<string, string> = {
    '/licenses/check': `productUuid=${ids.product}&granteeIds=isolated`,
    '/plans/{planUuid}/checkoutlink': 'successUrl=https://x.io/ok&cancelUrl=https://x.io/no&granteeId=g&member=m',
    '/products/{productUuid}/pricingtable': 'globalSuccessUrl=https://x.io/ok&globalCancelUrl=https://x.io/no&globalGranteeId=g',
    '/pricing-tables/{pricingTableUuid}': 'globalSuccessUrl=https://x.io/ok&globalCancelUrl=https://x.io/no&globalGranteeId=g&member=m',
    '/pricing-tables/{pricingTableUuid}/page-link':
      'globalSuccessUrl=https://x.io/ok&globalCancelUrl=https://x.io/no&globalGranteeId=g&member=m',
    '/subscriptions/{subscriptionUuid}/cancel': 'when=end',
    '/licenses/purchaser': 'purchaser=buyer@example.com',
    '/api/balances': 'owner=isolated',
    '/api/entitlements/check': 'granteeId=isolated',
    '/api/subscriptions/{id}/auto-renew': 'status=disable',
  };
  // v2 and v3 spellings (the real SDK's): v3 names the customer `owner`; its lists by product name tenant A's product.
  const versioned: Record<string, string> = {
    'v3 /plans/{planUuid}/checkout-link': 'successUrl=https://x.io/ok&cancelUrl=https://x.io/no&granteeId=g&owner=m',
    'v3 /products/{productUuid}/pricing-table': 'owner=m',
    'v3 /pricing-tables/{pricingTableUuid}': 'owner=m',
    'v3 /features': `productUuid=${ids.product}`,
    'v3 /entitlements/check': `granteeIds=isolated&productUuid=${ids.product}`,
    'v2 /usage': 'granteeId=isolated',
    'v3 /usage': 'granteeId=isolated',
    'v2 /usage/current': `granteeId=isolated&planUuid=${ids.plan}`,
    'v3 /usage/current': `granteeId=isolated&planUuid=${ids.plan}`,
  };
  const query = versioned[`${op.generation} ${op.path}`] ?? q[op.path];
  if (query) path += `?${query}`;
  const bodies: Record<string, unknown> = {
    'post /licenses': { planUuid: ids.freePlan, member: 'm@example.com', granteeId: 'intruder' },
    'put /licenses': [{ uuid: ids.license, granteeId: 'intruder' }],
    'put /licenses/{licenseUuid}': { granteeId: 'intruder' },
    'post /licenses/cancel': { uuids: [ids.license] },
    'put /subscriptions/{subscriptionUuid}/change-plan': { planUuid: a.keys['plans.notes.business'] },
    // SDK 3's move: the ids in the body.
    'put /subscriptions': { newPlanId: a.keys['plans.notes.business'], subscriptionId: ids.subscription },
    'post /subscriptions/{subscriptionUuid}/seats': { increment: 1 },
    'put /subscriptions/{subscriptionUuid}/seats': { decrement: 1 },
    'post /api/products': { name: 'intruder' },
    'put /api/products/{id}': { name: 'intruder' },
    'post /api/plans': { productId: ids.product, name: 'intruder' },
    'put /api/plans/{id}': { name: 'intruder' },
    'post /api/plans/save': { productId: ids.product, name: 'intruder' },
    'post /api/tier-tags': { name: 'intruder' },
    'post /api/products/import': { products: [] },
    'post /api/webhooks': { url: 'https://hooks.vendor.example.com/intruder', enabled: false },
    'patch /api/webhooks/{id}': { description: 'intruder' },
    'post /api/events/{id}/resend': {},
    'put /usage': { licenseUuid: ids.license, featureVariableName: 'projects', countOptions: { increment: 1 } },
    'post /api/meters': { slug: 'intruder', name: 'intruder' },
    'post /api/credits/grants': { owner: 'intruder', meterSlug: 'tokens', amount: 1 },
    'post /api/usage/record': { owner: 'intruder', meterSlug: 'tokens', increment: 1 },
    'post /api/usage/consume': { owner: 'intruder', meterSlug: 'tokens', quantity: 1 },
    'post /api/usage/reservations': { owner: 'intruder', meterSlug: 'tokens', quantity: 1, ttlSeconds: 60 },
    'post /api/usage/reservations/{id}/commit': { quantity: 1 },
    'put /api/subscriptions/{id}/items': { items: [{ planId: ids.plan, action: 'replace', newPlanId: a.keys['plans.notes.business'] }] },
    'post /api/subscriptions/{id}/portal': { features: { paymentMethodUpdate: { enabled: true } } },
    'post /api/subscriptions': { plans: [{ planId: ids.plan }], owner: 'intruder', interval: 'month', intervalCount: 1 },
    'post /api/subscriptions/batch': { action: 'cancel', subscriptionIds: [ids.subscription] },
    'put /api/subscription-plans/{id}/seats': { quantity: 5 },
    'put /api/subscription-plan-line-items/{id}': { quantity: 5 },
    'put /api/owners/{id}': { owner: 'intruder' },
    'post /api/grantees': { granteeId: 'intruder' },
    'post /api/entitlements': { name: 'intruder', productId: ids.product },
    'put /api/entitlements/{id}': { name: 'intruder' },
    'put /api/grantees/{id}': { granteeId: 'intruder' },
    'post /api/groups': { owner: 'intruder' },
    'put /api/groups/{id}': { id: ids.subscription, grantees: [] },
    'post /api/groups/{id}/grantees': [{ type: 'add', granteeId: 'intruder' }],
    'post /api/event-attempts': { destinationId: ids.destination },
    'put /api/line-items/{id}': {
      name: 'intruder',
      slug: 'intruder',
      priceType: 'per_seat',
      intervalType: 'recurring',
      billingScheme: 'tiered',
      tiersMode: 'volume',
      minQuantity: 1,
      maxQuantity: 10,
    },
    'post /api/checkout': { planId: ids.plan, owner: 'intruder', interval: 'month', intervalCount: 1 },
    'post /api/payment-integrations': { emailAddress: 'intruder@example.com' },
    'post /api/products/copy-to-live-mode': { id: ids.product },
    'post /api/carts': { owner: 'intruder', interval: 'month', intervalCount: 1 },
    'post /api/carts/batch': { action: 'abandon', cartIds: [ids.cart] },
    'put /api/carts/{id}': { currency: null, owner: 'intruder', cartItems: [] },
    'post /api/carts/{id}/checkout': { successUrl: 'https://x.io/ok', cancelUrl: 'https://x.io/no' },
    'post /api/cart-items': { cartId: ids.cart, planId: ids.plan, interval: 'month', intervalCount: 1 },
  };
  const versionedBodies: Record<string, unknown> = {
    'put /usage': { granteeId: 'isolated', planUuid: ids.plan, countOptions: { increment: 1 } },
    'post /subscriptions': { planUuid: ids.freePlan, granteeId: 'intruder', owner: 'intruder' },
    'put /subscriptions/{subscriptionUuid}': { owner: 'intruder' },
    'put /subscriptions/{subscriptionUuid}/manage-seats': [{ type: 'assign', granteeId: 'intruder' }],
    'post /subscriptions/{subscriptionUuid}/coupons': { couponUuid: 'INTRUDER' },
    'put /subscriptions/{subscriptionUuid}/coupons': { couponUuid: 'INTRUDER' },
    'post /sessions': { scope: 'web-components:invoices', metadata: { subscriptionUuid: ids.subscription } },
  };
  const key = `${op.method} ${op.path}`;
  const versions = op.generation === 'v2' || op.generation === 'v3';
  return { path, body: versions && key in versionedBodies ? versionedBodies[key] : bodies[key] };
}

/** Operations whose query names one of tenant A's records: another tenant is refused, as for an id in the path. */
const ID_IN_QUERY = ['/licenses/check', '/features', '/entitlements/check', '/usage/current'];

it('refuses every authenticated route without a key, with a revoked key, without the scope, and across tenants', async () => {
  const ops: Op[] = [];
  for (const generation of ['legacy', 'v1', 'v2', 'v3', 'catalog'] as const) {
    const doc = (await call(server.url, 'GET', `/openapi/${generation}.json`)).body as {
      paths: Record<string, Record<string, { 'x-scope'?: string }>>;
    };
    for (const [path, methods] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(methods)) ops.push({ generation, method, path, scope: op['x-scope'] });
  }
  const secured = ops.filter((o) => o.scope);
  expect(secured.length).toBeGreaterThan(45);
  for (const g of ['v2', 'v3']) expect(secured.filter((o) => o.generation === g).length).toBeGreaterThan(25);
  const failures: string[] = [];
  const naming: Op[] = [];
  const expectStatus = async (op: Op, key: string | undefined, want: number[], why: string, unknownIds = false) => {
    const asked = request(op);
    // Every id of tenant A replaced by one that names no record.
    const unknown = (text: string) => text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}/g, UNKNOWN);
    const path = unknownIds ? unknown(asked.path) : asked.path;
    const body = unknownIds && asked.body !== undefined ? JSON.parse(unknown(JSON.stringify(asked.body))) : asked.body;
    const auth = key === undefined ? {} : op.generation === 'catalog' ? { bearer: key } : { key };
    const res = await call(server.url, op.method.toUpperCase(), path, {
      ...auth,
      body,
      headers: op.generation === 'legacy' || op.generation === 'catalog' ? {} : { version: op.generation },
    });
    if (!want.includes(res.status))
      failures.push(
        `${op.generation} ${op.method.toUpperCase()} ${op.path} ${why}: ${res.status} (wanted ${want.join('/')}) ${res.text.slice(0, 200)}`,
      );
    return res;
  };
  for (const op of secured) {
    await expectStatus(op, undefined, [401], 'without a key');
    await expectStatus(op, a.revoked, [401], 'with a revoked key');
    // licenses:read holds checks:read (the check routes), so those are asked of a products-only key.
    const lacking = op.scope === 'licenses:read' || op.scope === 'checks:read' ? a.productsOnly : a.licensesOnly;
    await expectStatus(op, lacking, [403], `without the scope ${op.scope}`);
    const hasIds =
      /\{(\w*Uuid|uuid|id)\}/.test(op.path) ||
      (request(op).body !== undefined && JSON.stringify(request(op).body).match(/[0-9a-f]{8}-[0-9a-f]{4}-/));
    if (hasIds || ID_IN_QUERY.includes(op.path)) {
      naming.push(op);
      await expectStatus(op, b.live, [403], "with another organisation's key");
      await expectStatus(op, a.test, [404], "with the other mode's key");
      await expectStatus(op, a.live, [404], 'naming an unknown id', true);
      continue;
    }
    for (const [who, key] of [
      ['another organisation', b.live],
      ['the other mode', a.test],
    ] as const) {
      // A list or a create without ids: it answers the caller's own records, never tenant A's.
      const res = await expectStatus(op, key, [200, 201, 202, 204], `with ${who}'s key`);
      for (const id of Object.values(ids))
        if (res.text.includes(id)) failures.push(`${op.generation} ${op.method} ${op.path} shows tenant A's ${id} to ${who}`);
    }
  }
  // Each generation had routes naming ids, so each of the three statuses was asked of each.
  for (const generation of ['legacy', 'v1', 'v2', 'v3', 'catalog'] as const)
    expect(naming.filter((o) => o.generation === generation).length).toBeGreaterThan(0);
  expect(failures).toEqual([]);
});

it("a group named as a purchase's grantee stays in its tenant: another organisation's 403, the other mode's and an unknown one 404", async () => {
  const group = (
    (await call(server.url, 'POST', '/api/groups', { bearer: a.live, body: { owner: 'group-owner', grantees: [{ granteeId: 'member' }] } }))
      .body as { data: { id: string } }
  ).data.id;
  const quick = (key: string, plan: string, grantee: string) =>
    call(server.url, 'POST', '/api/checkout', {
      bearer: key,
      body: {
        planId: plan,
        owner: 'intruder',
        grantee,
        interval: 'month',
        intervalCount: 1,
        successUrl: 'https://x.io/ok',
        cancelUrl: 'https://x.io/no',
      },
    });
  expect((await quick(b.live, b.keys['plans.notes.team'], `grp_${group}`)).status).toBe(403);
  expect((await quick(a.test, a.testKeys['plans.notes.team'], `grp_${group}`)).status).toBe(404);
  expect((await quick(a.live, a.keys['plans.notes.team'], 'grp_6a1f1d8e-0000-4000-8000-00000000dead')).status).toBe(404);
  // A bare id of another tenant's group names no group there: an ordinary grantee, so nothing of A's is read.
  expect((await quick(b.live, b.keys['plans.notes.team'], group)).status).toBe(200);
  const cart = (
    (await call(server.url, 'POST', '/api/carts', { bearer: b.live, body: { owner: 'intruder', interval: 'month', intervalCount: 1 } }))
      .body as {
      data: { id: string };
    }
  ).data.id;
  const item = await call(server.url, 'POST', '/api/cart-items', {
    bearer: b.live,
    body: { cartId: cart, planId: b.keys['plans.notes.team'], grantee: `grp_${group}`, interval: 'month', intervalCount: 1 },
  });
  expect(item.status).toBe(403);
  expect(item.text).not.toContain('member');
});

it("a subscription's added plans stay in its tenant: another organisation's plan 403 to add; an added subscription plan 403 / 404 to others", async () => {
  const mine = await buySeats(server.url, db.url, b, 1, 'b-multi');
  const items = (key: string, subscription: string, planId: string) =>
    call(server.url, 'PUT', `/api/subscriptions/${subscription}/items`, {
      bearer: key,
      body: { items: [{ planId, action: 'add' }], proration: 'none' },
    });
  // B adds A's plan to B's subscription: A's plan is not B's to sell.
  expect((await items(b.live, mine, a.keys['plans.notes.team'])).status).toBe(403);
  expect((await items(b.live, mine, '6a1f1d8e-0000-4000-8000-00000000beef')).status).toBe(404);
  // B adds its own plan; its subscription plan has an id of its own, which is B's alone.
  expect((await items(b.live, mine, b.keys['plans.notes.team'])).status).toBe(204);
  const plans = (
    (await call(server.url, 'GET', `/api/subscription-plans?subscriptionId=${mine}`, { bearer: b.live })).body as {
      data: { id: string; planId: string }[];
    }
  ).data;
  const added = plans.find((p) => p.planId === b.keys['plans.notes.team']);
  expect(added && added.id !== mine).toBe(true);
  expect((await call(server.url, 'GET', `/api/subscription-plans/${added?.id}`, { bearer: a.live })).status).toBe(403);
  expect((await call(server.url, 'GET', `/api/subscription-plans/${added?.id}`, { bearer: b.test })).status).toBe(404);
  expect(
    (await call(server.url, 'PUT', `/api/subscription-plans/${added?.id}/seats`, { bearer: a.live, body: { quantity: 5 } })).status,
  ).toBe(403);
  const aList = (await call(server.url, 'GET', `/api/subscription-plans`, { bearer: a.live })).text;
  expect(aList).not.toContain(added?.id as string);
});
