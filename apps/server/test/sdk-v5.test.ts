/**
 * The real `@salable/node-sdk` 5.0.0 (from the npm registry) against the combined server, with only
 * its base address changed: `globalThis.fetch` rewrites `https://api.salable.app` to this server.
 * Every method of both versions is called with realistic arguments (subscriptions bought through
 * the sandbox checkout first); each result is checked for the members the SDK declares. The test
 * output lists the methods called per version. docs/reference/node-sdk-v5.md has the SDK's facts.
 */
import type { AddressInfo } from 'node:net';
import { randomUUID, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Server } from 'node:http';
import request from 'supertest';
import { initSalable, type VersionedMethodsReturn } from '@salable/node-sdk';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp, createServerHttp } from '../src';

const SALABLE = 'https://api.salable.app';
/** SDK 5's `CheckLicensesCapabilitiesResponse` (its answer to `licenses.check` but the `void` of a 204). */
type CheckLicensesCapabilitiesResponse = Exclude<Awaited<ReturnType<VersionedMethodsReturn<'v2'>['licenses']['check']>>, void>;

let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createServerApp>;
let server: Server;
let realFetch: typeof fetch;
const seen: { method: string; url: string; version: string | null }[] = [];

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'sdk-org');
  app = createServerApp(world);
  server = createServerHttp(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  realFetch = globalThis.fetch;
  globalThis.fetch = ((input: string | URL | Request, init?: RequestInit) => {
    const url = String(input);
    if (!url.startsWith(SALABLE)) throw new Error(`the SDK called ${url}`);
    const headers = new Headers(init?.headers);
    seen.push({ method: init?.method ?? 'GET', url: url.slice(SALABLE.length), version: headers.get('version') });
    return realFetch(base + url.slice(SALABLE.length), init);
  }) as typeof fetch;
});
afterAll(async () => {
  globalThis.fetch = realFetch;
  await new Promise((resolve) => server?.close(resolve));
  await world?.close();
});

const called: Record<string, Set<string>> = { v2: new Set(), v3: new Set() };

/** The SDK with every method call recorded as `namespace.method`. */
function recorded<V extends 'v2' | 'v3'>(version: V): VersionedMethodsReturn<V> {
  const sdk = initSalable(org.liveKey, version) as unknown as Record<string, Record<string, (...a: unknown[]) => unknown>>;
  const out: Record<string, unknown> = {};
  for (const [ns, methods] of Object.entries(sdk)) {
    if (typeof methods !== 'object' || methods === null) continue;
    out[ns] = Object.fromEntries(
      Object.entries(methods).map(([name, fn]) => [
        name,
        (...args: unknown[]) => {
          called[version].add(`${ns}.${name}`);
          return fn(...args);
        },
      ]),
    );
  }
  return out as unknown as VersionedMethodsReturn<V>;
}

/** Every method the SDK offers for the version. */
function methodsOf(version: 'v2' | 'v3'): string[] {
  const sdk = initSalable(org.liveKey, version) as unknown as Record<string, unknown>;
  return Object.entries(sdk).flatMap(([ns, m]) =>
    typeof m === 'object' && m !== null
      ? Object.keys(m)
          .filter((k) => typeof (m as Record<string, unknown>)[k] === 'function')
          .map((k) => `${ns}.${k}`)
      : [],
  );
}

/** The members the SDK's type declarations name are all there. */
const has = (value: unknown, ...keys: string[]) => {
  expect(value).toEqual(expect.objectContaining(Object.fromEntries(keys.map((k) => [k, expect.anything()]))));
};
/** The members are present (their value may be null). */
const hasMembers = (value: unknown, ...keys: string[]) => {
  for (const k of keys) expect(Object.keys(value as object)).toContain(k);
};
const isPage = (p: { first: unknown; last: unknown; data: { uuid: string }[] }) => {
  hasMembers(p, 'first', 'last', 'data');
  expect(Array.isArray(p.data)).toBe(true);
  if (p.data.length) {
    expect(p.first).toBe(p.data[0].uuid);
    expect(p.last).toBe(p.data[p.data.length - 1].uuid);
  } else expect([p.first, p.last]).toEqual([null, null]);
};

const SUBSCRIPTION = [
  'uuid',
  'productUuid',
  'type',
  'quantity',
  'organisation',
  'status',
  'createdAt',
  'updatedAt',
  'expiryDate',
  'planUuid',
  'isTest',
  'cancelAtPeriodEnd',
];
const LICENSE = [
  'uuid',
  'status',
  'paymentService',
  'purchaser',
  'type',
  'productUuid',
  'planUuid',
  'capabilities',
  'startTime',
  'updatedAt',
  'isTest',
  'cancelAtPeriodEnd',
];
const SEAT_V3 = [
  'uuid',
  'subscriptionUuid',
  'status',
  'paymentService',
  'purchaser',
  'type',
  'productUuid',
  'planUuid',
  'startTime',
  'endTime',
  'updatedAt',
  'isTest',
];
const PLAN_V2 = [
  'uuid',
  'name',
  'slug',
  'perSeatAmount',
  'maxSeatAmount',
  'displayName',
  'hasAcceptedTransaction',
  'status',
  'evaluation',
  'evalDays',
  'organisation',
  'visibility',
  'licenseType',
  'interval',
  'length',
  'active',
  'planType',
  'pricingType',
  'environment',
  'productUuid',
  'updatedAt',
  'isTest',
  'salablePlan',
];
const PLAN_V3 = [
  'uuid',
  'slug',
  'perSeatAmount',
  'maxSeatAmount',
  'displayName',
  'hasAcceptedTransaction',
  'status',
  'evalDays',
  'organisation',
  'visibility',
  'licenseType',
  'interval',
  'length',
  'pricingType',
  'productUuid',
  'updatedAt',
  'isTest',
];
const PRODUCT_V2 = ['uuid', 'name', 'slug', 'displayName', 'organisation', 'status', 'paid', 'updatedAt', 'appType', 'isTest'];
const PRODUCT_V3 = ['uuid', 'slug', 'displayName', 'organisation', 'status', 'paid', 'updatedAt', 'isTest'];
const LINKS = { successUrl: 'https://vendor.example.com/thanks', cancelUrl: 'https://vendor.example.com/pricing' };

/** Pays a sandbox checkout page as the customer's browser would. */
async function pay(checkoutUrl: string, quantity: number) {
  const path = new URL(checkoutUrl).pathname;
  await request(app)
    .post(`${path}/pay`)
    .type('form')
    .send({ quantity: String(quantity) })
    .expect(303);
}

describe('@salable/node-sdk 5.0.0, unchanged, against Tollgate', () => {
  const product = () => org.keys['products.notes'];
  const plan = (k: string) => org.keys[`plans.notes.${k}`];

  it('v2: every method', async () => {
    const sdk = recorded('v2');

    // Catalog reads.
    const products = await sdk.products.getAll();
    has(
      products.find((p) => p.uuid === product()),
      ...PRODUCT_V2,
    );
    has(await sdk.products.getOne(product(), { expand: ['plans'] }), ...PRODUCT_V2, 'plans');
    const table = await sdk.products.getPricingTable(product(), { granteeId: 'alice', currency: 'USD' });
    has(table, ...PRODUCT_V2, 'features', 'currencies', 'plans');
    has(table.plans[0], ...PLAN_V2, 'features', 'currencies');
    for (const p of await sdk.products.getPlans(product())) has(p, ...PLAN_V2);
    const features = (await sdk.products.getFeatures(product())) as unknown as { featureEnumOptions: unknown[] }[];
    has(features[0], 'uuid', 'name', 'displayName', 'variableName', 'valueType', 'defaultValue', 'sortOrder', 'featureEnumOptions');
    has((await sdk.products.getCapabilities(product()))[0], 'uuid', 'name', 'status', 'productUuid', 'updatedAt');
    has((await sdk.products.getCurrencies(product()))[0], 'productUuid', 'currencyUuid', 'defaultCurrency', 'currency');
    const teamPlan = await sdk.plans.getOne(plan('team'));
    has(teamPlan, ...PLAN_V2, 'features', 'currencies');
    // SDK 5's Plan requires `salablePlan` and `paddlePlanId` (v1's `servicePlan`, `providerPlanId` kept beside them).
    expect(teamPlan).toMatchObject({ salablePlan: true, paddlePlanId: null, servicePlan: false });
    has((await sdk.plans.getFeatures(plan('team')))[0], 'planUuid', 'featureUuid', 'value', 'isUnlimited', 'isUsage', 'feature');
    has((await sdk.plans.getCapabilities(plan('team')))[0], 'planUuid', 'capabilityUuid', 'updatedAt', 'capability');
    has((await sdk.plans.getCurrencies(plan('team')))[0], 'planUuid', 'currencyUuid', 'price', 'paymentIntegrationPlanId', 'currency');
    const pt = await sdk.pricingTables.getOne(org.keys['pricingTables.notes.main'], { granteeId: 'alice', currency: 'USD' });
    has(pt, 'uuid', 'name', 'status', 'featureOrder', 'productUuid', 'updatedAt', 'features', 'product', 'plans');
    has(pt.plans[0], 'planUuid', 'pricingTableUuid', 'sortOrder', 'plan');

    // Buy three seats of the team plan through the sandbox checkout.
    const { checkoutUrl } = await sdk.plans.getCheckoutLink(plan('team'), {
      ...LINKS,
      granteeId: 'alice',
      member: 'buyer2@example.com',
      quantity: '3',
    });
    await pay(checkoutUrl, 3);
    const page = await sdk.subscriptions.getAll({ owner: 'buyer2@example.com', take: 5 });
    isPage(page);
    expect(page.data).toHaveLength(1);
    const sub = page.data[0].uuid;
    has(page.data[0], ...SUBSCRIPTION, 'owner');

    // Usage on the team plan (its numerical feature), counted once per unique-key.
    expect(
      await sdk.usage.updateLicenseUsage({ granteeId: 'alice', planUuid: plan('team'), increment: 3, idempotencyKey: 'sdk-v2-1' }),
    ).toBeUndefined();
    await sdk.usage.updateLicenseUsage({ granteeId: 'alice', planUuid: plan('team'), increment: 3, idempotencyKey: 'sdk-v2-1' });
    // `updatedAt`: when the units last changed (the balance's last change), not when asked.
    const recordedAt = world.clock.now().toISOString();
    world.clock.set(new Date(world.clock.now().getTime() + 60_000));
    expect(await sdk.usage.getCurrentUsageRecord({ granteeId: 'alice', planUuid: plan('team') })).toEqual({
      unitCount: 3,
      updatedAt: recordedAt,
    });
    const records = await sdk.usage.getAllUsageRecords({ granteeId: 'alice' });
    isPage(records);
    has(records.data[0], 'uuid', 'unitCount', 'type', 'planUuid', 'createdAt', 'updatedAt');
    // A seat's usage is the subscription's (any seat's), labelled with the grantee's own seat: a string, as the SDK types it.
    hasMembers(records.data[0], 'licenseUuid');
    const [aliceSeat] = (await sdk.subscriptions.getSeats(sub)).data.filter((seat) => seat.granteeId === 'alice');
    expect(records.data[0].licenseUuid).toBe(aliceSeat.uuid);

    // The subscription.
    const one = await sdk.subscriptions.getOne(sub, { expand: ['plan'] });
    has(one, ...SUBSCRIPTION, 'owner', 'plan');
    expect(one).toMatchObject({ quantity: 3, owner: 'buyer2@example.com', plan: { uuid: plan('team') } });
    const seats = await sdk.subscriptions.getSeats(sub, { take: 2 });
    isPage(seats);
    expect(seats.data).toHaveLength(2);
    has(seats.data[0], ...LICENSE);
    // The SDK's Seat.capabilities: the plan's (team: edit, export).
    expect(seats.data[0].capabilities.map((c) => c.name).sort()).toEqual(['edit', 'export']);
    const rest = await sdk.subscriptions.getSeats(sub, { cursor: seats.last, take: 2 });
    expect(rest.data.map((s) => s.uuid)).toHaveLength(1);
    expect(await sdk.subscriptions.getSeatCount(sub)).toEqual({ count: 3, assigned: 1, unassigned: 2 });
    expect(await sdk.subscriptions.manageSeats(sub, [{ type: 'assign', granteeId: 'bob' } as never])).toBeUndefined();
    expect(await sdk.subscriptions.getSeatCount(sub)).toEqual({ count: 3, assigned: 2, unassigned: 1 });
    expect((await sdk.subscriptions.update(sub, { owner: 'buyer2@example.com' })).owner).toBe('buyer2@example.com');
    const invoices = await sdk.subscriptions.getInvoices(sub);
    hasMembers(invoices, 'first', 'last', 'hasMore', 'data');
    has(invoices.data[0], 'id', 'object', 'amount_due', 'currency', 'lines', 'status');
    for (const p of await sdk.subscriptions.getSwitchablePlans(sub)) {
      has(p, 'uuid', 'name', 'displayName', 'licenseType', 'currencies', 'features', 'salablePlan');
      expect(p).toMatchObject({ salablePlan: true, paddlePlanId: null });
    }
    const withPlan = await sdk.subscriptions.getAll({ owner: 'buyer2@example.com', expand: ['plan'] });
    expect((withPlan.data[0] as unknown as { plan: unknown }).plan).toMatchObject({ salablePlan: true, paddlePlanId: null });
    for (const get of [
      sdk.subscriptions.getUpdatePaymentLink,
      sdk.subscriptions.getPortalLink,
      sdk.subscriptions.getCancelSubscriptionLink,
    ])
      expect((await get(sub)).url).toMatch(/^https?:\/\//);
    has(
      await sdk.subscriptions.getPaymentMethod(sub),
      'id',
      'object',
      'billing_details',
      'card',
      'created',
      'customer',
      'livemode',
      'metadata',
      'type',
    );
    const added = await sdk.subscriptions.addSeats(sub, { increment: 1 });
    has(added, 'eventUuid');
    await world.core.worker.drain();
    const event = await sdk.events.getOne(added.eventUuid);
    has(event, 'uuid', 'type', 'organisation', 'status', 'isTest', 'retries', 'createdAt', 'updatedAt');
    expect(event).toMatchObject({ type: 'Create seats', status: 'success' });
    has(await sdk.subscriptions.removeSeats(sub, { decrement: 1 }), 'eventUuid');
    await world.core.worker.drain();
    expect((await sdk.subscriptions.getSeatCount(sub)).count).toBe(3);
    // Coupons go to the payment provider (the sandbox keeps them as documents of the subscription).
    expect(await sdk.subscriptions.addCoupon(sub, { couponUuid: 'WELCOME10' })).toBeUndefined();
    expect(await sdk.subscriptions.addCoupon(sub, { couponUuid: 'WELCOME10' })).toBeUndefined();
    const coupons = await world.db.uow.run((r) => r.billingDocuments.list(sub, 'coupon'));
    expect(coupons.map((d) => d.body)).toEqual([expect.objectContaining({ code: 'WELCOME10', active: true })]);
    expect(await sdk.subscriptions.removeCoupon(sub, { couponUuid: 'WELCOME10' })).toBeUndefined();
    await expect(sdk.subscriptions.removeCoupon(sub, { couponUuid: 'WELCOME10' })).rejects.toMatchObject({ code: 'S1002' });
    await expect(sdk.subscriptions.addCoupon(sub, { couponUuid: 'not a code!' })).rejects.toMatchObject({ code: 'S1004' });
    expect(await sdk.subscriptions.changePlan(sub, { planUuid: plan('business') })).toBeUndefined();
    expect((await sdk.subscriptions.getOne(sub)).planUuid).toBe(plan('business'));
    expect(await sdk.subscriptions.cancel(sub, { when: 'end' })).toBeUndefined();
    expect((await sdk.subscriptions.getOne(sub)).cancelAtPeriodEnd).toBe(true);
    expect(await sdk.subscriptions.reactivateSubscription(sub)).toBeUndefined();
    expect((await sdk.subscriptions.getOne(sub)).cancelAtPeriodEnd).toBe(false);
    const created = await sdk.subscriptions.create({ planUuid: plan('free'), granteeId: 'carol', owner: 'owner-v2' });
    has(created, ...SUBSCRIPTION);
    expect(created).toMatchObject({ owner: 'owner-v2', planUuid: plan('free'), type: 'user' });
    expect(await sdk.sessions.create({ scope: 'web-components:invoices' as never, metadata: { subscriptionUuid: sub } as never })).toEqual({
      sessionToken: expect.any(String),
    });

    // Licenses.
    const dave = await sdk.licenses.create({ planUuid: plan('free'), member: 'member-v2', granteeId: 'dave' });
    has(dave, ...LICENSE);
    expect(dave.granteeId).toBe('dave');
    // The members CreateAdhocLicenseInput declares beyond v1's: an end, the status it starts in, no renewal.
    const endTime = new Date(world.clock.now().getTime() + 10 * 86400_000).toISOString();
    const ending = await sdk.licenses.create({
      planUuid: plan('free'),
      member: 'member-v2-end',
      granteeId: 'dora',
      endTime,
      status: 'ACTIVE',
      cancelAtPeriodEnd: false,
    });
    expect(ending).toMatchObject({ granteeId: 'dora', status: 'ACTIVE', endTime, cancelAtPeriodEnd: false });
    await expect(
      sdk.licenses.create({ planUuid: plan('free'), member: 'member-v2-end', granteeId: 'dora', endTime: 'soon' }),
    ).rejects.toMatchObject({
      data: { validationErrors: expect.arrayContaining([expect.objectContaining({ property: expect.stringMatching(/endTime/) })]) },
    });
    // v1 (and legacy) keep their request: a member it does not declare is refused.
    await request(app)
      .post('/licenses')
      .set('x-api-key', org.liveKey)
      .set('version', 'v1')
      .send({ planUuid: plan('free'), member: 'm', granteeId: 'dora', endTime })
      .expect(400);
    const many = await sdk.licenses.createMany([
      { planUuid: plan('free'), member: 'member-v2', granteeId: 'erin' },
      { planUuid: plan('free'), member: 'member-v2', granteeId: null },
    ]);
    expect(many).toHaveLength(2);
    const all = await sdk.licenses.getAll({ take: 2 });
    isPage(all);
    expect(all.data).toHaveLength(2);
    const next = await sdk.licenses.getAll({ take: 2, cursor: all.last });
    expect(next.data[0].uuid).not.toBe(all.data[1].uuid);
    has(await sdk.licenses.getOne(dave.uuid, { expand: ['plan'] }), ...LICENSE, 'plan');
    expect(await sdk.licenses.getCount({ subscriptionUuid: sub })).toEqual({ count: 3, assigned: 2, unassigned: 1 });
    expect((await sdk.licenses.getForPurchaser({ purchaser: 'member-v2', productUuid: product() })).length).toBe(3);
    expect((await sdk.licenses.getForGranteeId('dave', { expand: ['plan'] }))[0]).toMatchObject({
      uuid: dave.uuid,
      plan: { uuid: plan('free') },
    });
    expect((await sdk.licenses.update(dave.uuid, { granteeId: 'dave2' })).granteeId).toBe('dave2');
    const ends = new Date(world.clock.now().getTime() + 30 * 86400_000).toISOString();
    expect(await sdk.licenses.update(dave.uuid, { granteeId: 'dave2', endTime: ends })).toMatchObject({
      granteeId: 'dave2',
      endTime: ends,
    });
    expect((await sdk.licenses.updateMany([{ uuid: many[1].uuid, granteeId: 'frank' }]))[0].granteeId).toBe('frank');
    // SDK 5's CheckLicensesCapabilitiesResponse: each capability with its end, and a signature (v3's).
    const check = (await sdk.licenses.check({
      productUuid: product(),
      granteeIds: ['alice', 'dave2'],
    })) as CheckLicensesCapabilitiesResponse;
    expect(Object.keys(check).sort()).toEqual(['capabilities', 'signature']);
    expect(check.capabilities.some((c) => c.capability === 'edit')).toBe(true);
    for (const c of check.capabilities) {
      expect(c).toEqual({ capability: expect.any(String), expiry: expect.any(String) });
      expect(new Date(c.expiry).toISOString()).toBe(c.expiry);
    }
    const v3check = await initSalable(org.liveKey, 'v3').entitlements.check({ productUuid: product(), granteeIds: ['alice', 'dave2'] });
    expect(check.signature).toBe(v3check.signature);
    expect(check.capabilities).toEqual(v3check.features.map((f) => ({ capability: f.feature, expiry: f.expiry })));
    // Verified offline as docs/api/verifying.md says: the names joined by ',' in the answer's order, DER, hex; the key from
    // `GET /signing-key` under v2 and v3, the same as v1's.
    const keyOf = async (version: string | null) => {
      const r = request(app).get('/signing-key').set('x-api-key', org.liveKey);
      return (await (version ? r.set('version', version) : r).expect(200)).body.data.publicKey as string;
    };
    const publicKey = await keyOf('v2');
    expect([await keyOf('v3'), await keyOf(null)]).toEqual([publicKey, publicKey]);
    const signed = (names: string[]) =>
      verify('sha256', Buffer.from(names.join(','), 'utf8'), { key: publicKey, dsaEncoding: 'der' }, Buffer.from(check.signature, 'hex'));
    expect(signed(check.capabilities.map((c) => c.capability))).toBe(true);
    expect(signed(v3check.features.map((f) => f.feature))).toBe(true);
    expect(signed([...check.capabilities.map((c) => c.capability), 'forged'])).toBe(false);
    // The documented snippet itself, as written.
    const doc = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'api', 'verifying.md'), 'utf8');
    const code = /```js v2-verify\n([\s\S]*?)```/.exec(doc)![1];
    const verifyV2Check = new Function('require', `${code}\nreturn verifyV2Check;`)(require) as (c: object, pem: string) => boolean;
    expect(verifyV2Check(check, publicKey)).toBe(true);
    expect(verifyV2Check({ ...check, capabilities: [...check.capabilities].reverse() }, publicKey)).toBe(check.capabilities.length < 2);
    // No capability: 204 (the SDK's `void`); `grace` as v1 takes it.
    expect(await sdk.licenses.check({ productUuid: product(), granteeIds: ['nobody-holds-this'] })).toBeUndefined();
    expect(await sdk.licenses.check({ productUuid: product(), granteeIds: ['alice'], grace: 3 })).toMatchObject({
      capabilities: expect.arrayContaining([expect.objectContaining({ capability: 'edit' })]),
    });
    await expect(sdk.licenses.check({ productUuid: product(), granteeIds: ['alice'], grace: 0 })).rejects.toMatchObject({
      name: 'SalableValidationError',
      data: { code: 'CHECK_GRACE_INVALID', validationErrors: [expect.objectContaining({ property: 'grace' })] },
    });
    const served = (await request(app).get('/openapi/v2.json').expect(200)).body;
    expect(served.paths['/licenses/check'].get.responses['200'].content['application/json'].schema).toMatchObject({
      properties: { capabilities: { items: { properties: { capability: { type: 'string' }, expiry: expect.anything() } } } },
    });
    expect(served.paths['/licenses/check'].get.responses).toHaveProperty('204');
    expect(await sdk.licenses.cancel(dave.uuid)).toBeUndefined();
    expect(await sdk.licenses.cancelMany({ uuids: many.map((l) => l.uuid) })).toBeUndefined();
    expect((await sdk.licenses.getOne(dave.uuid)).status).toBe('CANCELED');

    expect(seen.filter((r) => r.version === 'v2').length).toBeGreaterThan(50);
    const missing = methodsOf('v2').filter((m) => !called.v2.has(m));
    console.log(
      `v2: ${called.v2.size} of ${methodsOf('v2').length} SDK methods called and answered:\n  ${[...called.v2].sort().join('\n  ')}`,
    );
    expect(missing).toEqual([]);
  });

  it('v3: every method', async () => {
    const sdk = recorded('v3');

    const products = await sdk.products.getAll({ take: 10 });
    const productPage = products as unknown as { first: string; last: string; data: { uuid: string }[] };
    isPage(productPage);
    has(productPage.data[0], ...PRODUCT_V3);
    expect(productPage.data[0]).not.toHaveProperty('name');
    has(await sdk.products.getOne(product(), { expand: ['organisationPaymentIntegration'] }), ...PRODUCT_V3);
    const ptable = await sdk.products.getPricingTable(product(), { owner: 'buyer3@example.com' });
    has(ptable, ...PRODUCT_V3, 'features', 'currencies', 'plans');
    has(ptable.plans[0], ...PLAN_V3, 'features', 'currencies');
    const plans = await sdk.plans.getAll({ productUuid: product(), take: 2 });
    isPage(plans);
    expect(plans.data).toHaveLength(2);
    has(plans.data[0], ...PLAN_V3);
    const morePlans = await sdk.plans.getAll({ productUuid: product(), take: 10, cursor: plans.last });
    expect(morePlans.data.map((p) => p.uuid)).not.toContain(plans.data[0].uuid);
    const teamPlan = (await sdk.plans.getOne(plan('team'), { expand: ['features', 'product', 'currencies'] })) as unknown as Record<
      string,
      unknown
    >;
    has(teamPlan, ...PLAN_V3, 'features', 'product', 'currencies');
    const features = await sdk.features.getAll({ productUuid: product(), take: 2 });
    isPage(features as never);
    has(features.data[0], 'uuid', 'displayName', 'variableName', 'valueType', 'defaultValue', 'sortOrder', 'featureEnumOptions');
    const pt = await sdk.pricingTables.getOne(org.keys['pricingTables.notes.main'], { owner: 'buyer3@example.com' });
    has(pt, 'uuid', 'status', 'featureOrder', 'productUuid', 'updatedAt', 'product', 'plans');
    expect(pt).not.toHaveProperty('name');

    const { checkoutUrl } = await sdk.plans.getCheckoutLink(plan('team'), {
      ...LINKS,
      granteeId: 'gina',
      owner: 'buyer3@example.com',
      quantity: '2',
    });
    await pay(checkoutUrl, 2);
    const page = await sdk.subscriptions.getAll({ owner: 'buyer3@example.com', sort: 'desc' });
    isPage(page);
    const sub = page.data[0].uuid;
    has(page.data[0], ...SUBSCRIPTION, 'owner');

    const check = await sdk.entitlements.check({ granteeIds: ['gina'], productUuid: product() });
    expect(check.features.map((f) => f.feature).sort()).toEqual(['edit', 'export']);
    expect(typeof check.signature).toBe('string');

    expect(
      await sdk.usage.updateLicenseUsage({ granteeId: 'gina', planUuid: plan('team'), increment: 2, idempotencyKey: 'sdk-v3-1' }),
    ).toBeUndefined();
    expect((await sdk.usage.getCurrentUsageRecord({ granteeId: 'gina', planUuid: plan('team') })).unitCount).toBe(2);
    isPage(await sdk.usage.getAllUsageRecords({ granteeId: 'gina', planUuid: plan('team') }));

    has(await sdk.subscriptions.getOne(sub, { expand: ['plan'] }), ...SUBSCRIPTION, 'plan');
    const seats = await sdk.subscriptions.getSeats(sub, { take: 10 });
    isPage(seats);
    has(seats.data[0], ...SEAT_V3);
    expect(seats.data[0]).not.toHaveProperty('capabilities');
    expect(await sdk.subscriptions.getSeatCount(sub)).toEqual({ count: 2, assigned: 1, unassigned: 1 });
    expect(
      await sdk.subscriptions.manageSeats(sub, [
        { type: 'assign', granteeId: 'hank' } as never,
        { type: 'replace', granteeId: 'hank', newGranteeId: 'ivy' } as never,
      ]),
    ).toBeUndefined();
    expect((await sdk.subscriptions.getSeats(sub)).data.map((s) => s.granteeId).sort()).toEqual(['gina', 'ivy']);
    expect((await sdk.subscriptions.update(sub, { owner: 'buyer3b@example.com' })).owner).toBe('buyer3b@example.com');
    hasMembers(await sdk.subscriptions.getInvoices(sub), 'first', 'last', 'hasMore', 'data');
    for (const get of [
      sdk.subscriptions.getUpdatePaymentLink,
      sdk.subscriptions.getPortalLink,
      sdk.subscriptions.getCancelSubscriptionLink,
    ])
      expect((await get(sub)).url).toMatch(/^https?:\/\//);
    has(await sdk.subscriptions.getPaymentMethod(sub), 'id', 'object', 'card', 'type');
    has(await sdk.subscriptions.updateSeatCount(sub, { increment: 2 }), 'eventUuid');
    await world.core.worker.drain();
    has(await sdk.subscriptions.updateSeatCount(sub, { decrement: 1 }), 'eventUuid');
    await world.core.worker.drain();
    expect((await sdk.subscriptions.getSeatCount(sub)).count).toBe(3);
    const seatEvent = await sdk.subscriptions.updateSeatCount(sub, { increment: 1 });
    await world.core.worker.drain();
    expect((await sdk.events.getOne((seatEvent as { eventUuid: string }).eventUuid)).status).toBe('success');
    expect(await sdk.subscriptions.addCoupon(sub, { couponUuid: 'SPRING' })).toBeUndefined();
    expect(await sdk.subscriptions.removeCoupon(sub, { couponUuid: 'SPRING' })).toBeUndefined();
    const moved = (await sdk.subscriptions.changePlan(sub, { planUuid: plan('business') })) as unknown;
    has(moved, ...SUBSCRIPTION);
    expect(moved).toMatchObject({ uuid: sub, planUuid: plan('business') });
    expect(await sdk.subscriptions.cancel(sub, { when: 'end' })).toBeUndefined();
    expect(await sdk.subscriptions.reactivateSubscription(sub)).toBeUndefined();
    expect(await sdk.subscriptions.cancel(sub, { when: 'now' })).toBeUndefined();
    expect((await sdk.subscriptions.getOne(sub)).status).toBe('CANCELED');
    const created = await sdk.subscriptions.create({
      planUuid: plan('team'),
      granteeId: 'jo',
      owner: 'owner-v3',
      quantity: 2,
      cancelAtPeriodEnd: true,
    });
    expect(created).toMatchObject({ owner: 'owner-v3', quantity: 2, cancelAtPeriodEnd: true, type: 'perSeat' });
    expect(
      (await sdk.sessions.create({ scope: 'web-components:pricing-table' as never, metadata: { productUuid: product() } as never }))
        .sessionToken,
    ).toEqual(expect.any(String));

    const missing = methodsOf('v3').filter((m) => !called.v3.has(m));
    console.log(
      `v3: ${called.v3.size} of ${methodsOf('v3').length} SDK methods called and answered:\n  ${[...called.v3].sort().join('\n  ')}`,
    );
    expect(missing).toEqual([]);
  });

  it('v2 and v3: a refusal that is 409 in v1 reaches the SDK as 400 with its reason and code (the SDK drops the body of any other status)', async () => {
    const sdk = initSalable(org.liveKey, 'v2');
    const sdk3 = initSalable(org.liveKey, 'v3');
    const sub = await sdk.subscriptions.create({ planUuid: plan('team'), granteeId: 'ref-own', owner: 'refusals', quantity: 2 });
    const [seat] = (await sdk.subscriptions.getSeats(sub.uuid)).data;
    const refused = (code: string, error: RegExp) => ({
      name: 'SalableValidationError',
      code: 'S1004',
      data: { code, error: expect.stringMatching(error) },
    });
    await expect(sdk.licenses.cancel(seat.uuid)).rejects.toMatchObject(refused('CONFLICT', /is a seat of subscription/));
    await expect(sdk.licenses.cancelMany({ uuids: [seat.uuid] })).rejects.toMatchObject(refused('CONFLICT', /is a seat of subscription/));
    const endTime = new Date(world.clock.now().getTime() + 86400_000).toISOString();
    await expect(sdk.licenses.update(seat.uuid, { granteeId: seat.granteeId as string, endTime })).rejects.toMatchObject(
      refused('CONFLICT', /ends with the subscription/),
    );
    // A usage key reused with another amount: the same 400 each time; the first amount still replays (200).
    for (const [client, key] of [
      [sdk, 'ref-v2'],
      [sdk3, 'ref-v3'],
    ] as const) {
      const usage = { granteeId: 'ref-own', planUuid: plan('team'), idempotencyKey: key };
      expect(await client.usage.updateLicenseUsage({ ...usage, increment: 1 })).toBeUndefined();
      for (let i = 0; i < 2; i++)
        await expect(client.usage.updateLicenseUsage({ ...usage, increment: 2 })).rejects.toMatchObject(
          refused('IDEMPOTENCY_KEY_REUSED', /./),
        );
      expect(await client.usage.updateLicenseUsage({ ...usage, increment: 1 })).toBeUndefined();
    }
    expect((await sdk.usage.getCurrentUsageRecord({ granteeId: 'ref-own', planUuid: plan('team') })).unitCount).toBe(2);
    // v1 keeps its 409.
    await request(app).delete(`/licenses/${seat.uuid}`).set('x-api-key', org.liveKey).set('version', 'v1').expect(409);
  });

  it('a grantee holds at most one seat of each plan of a subscription: license updates check the end state (v1 and v2), unassign frees them all, replace moves one per plan', async () => {
    const sdk = initSalable(org.liveKey, 'v2');
    const sdk3 = initSalable(org.liveKey, 'v3');
    const sub = (await sdk.subscriptions.create({ planUuid: plan('team'), granteeId: 'dup-own', owner: 'dup-acme', quantity: 3 })).uuid;
    const seats = async () => (await sdk.subscriptions.getSeats(sub)).data;
    const own = (await seats()).find((x) => x.granteeId === 'dup-own')!;
    const [a, b] = (await seats()).filter((x) => x.granteeId === null);
    const named = (property: string) => ({
      name: 'SalableValidationError',
      data: {
        code: 'VALIDATION_FAILED',
        validationErrors: [{ property, error: expect.stringMatching(/already holds seat .* at most one seat/) }],
      },
    });
    // Two items of one batch giving one grantee two seats: refused, nothing written.
    await expect(
      sdk.licenses.updateMany([
        { uuid: a.uuid, granteeId: 'mallory' },
        { uuid: b.uuid, granteeId: 'mallory' },
      ]),
    ).rejects.toMatchObject(named('[1].granteeId'));
    expect(await sdk.subscriptions.getSeatCount(sub)).toEqual({ count: 3, assigned: 1, unassigned: 2 });
    // One seat, then a second one by a single update, by a batch, by v1's routes: refused.
    expect((await sdk.licenses.updateMany([{ uuid: a.uuid, granteeId: 'mallory' }]))[0].granteeId).toBe('mallory');
    await expect(sdk.licenses.update(b.uuid, { granteeId: 'mallory' })).rejects.toMatchObject(named('granteeId'));
    await expect(sdk.licenses.updateMany([{ uuid: b.uuid, granteeId: 'mallory' }])).rejects.toMatchObject(named('[0].granteeId'));
    const v1 = (method: 'put', path: string, body: object) =>
      request(app)[method](path).set('x-api-key', org.liveKey).set('version', 'v1').send(body).expect(400);
    expect((await v1('put', `/licenses/${b.uuid}`, { granteeId: 'mallory' })).body).toMatchObject({
      code: 'VALIDATION_FAILED',
      validationErrors: [{ property: 'granteeId' }],
    });
    expect((await v1('put', '/licenses', [{ uuid: b.uuid, granteeId: 'mallory' }])).body.validationErrors).toEqual([
      expect.objectContaining({ property: '[0].granteeId' }),
    ]);
    // A seat given back to its holder is no change; items apply in order: a grantee an earlier item unassigns may take another seat.
    expect((await sdk.licenses.update(own.uuid, { granteeId: 'dup-own' })).granteeId).toBe('dup-own');
    const moved = await sdk.licenses.updateMany([
      // null unassigns (the SDK types every granteeId a string).
      { uuid: a.uuid, granteeId: null as unknown as string },
      { uuid: b.uuid, granteeId: 'mallory' },
    ]);
    expect(moved.map((l) => l.granteeId)).toEqual([null, 'mallory']);
    // Two seats written before the rule (straight into the store): unassign frees both, and the grantee loses access.
    const twice = async (granteeId: string) => {
      const stored = await world.db.uow.run((r) => r.licenses.getManyForUpdate([a.uuid, b.uuid]));
      await world.db.uow.run((r) => r.licenses.saveMany(stored.map((l) => ({ ...l, granteeId }))));
      expect((await seats()).filter((x) => x.granteeId === granteeId)).toHaveLength(2);
    };
    await twice('mallory');
    expect(await sdk.subscriptions.manageSeats(sub, [{ type: 'unassign', granteeId: 'mallory' } as never])).toBeUndefined();
    expect((await seats()).map((x) => x.granteeId).sort()).toEqual(['dup-own', null, null]);
    expect((await sdk3.entitlements.check({ granteeIds: ['mallory'], productUuid: product() })).features).toEqual([]);
    // Replace gives the new grantee one of them and frees the others: the rule holds after it.
    await twice('trent');
    await sdk.subscriptions.manageSeats(sub, [{ type: 'replace', granteeId: 'trent', newGranteeId: 'victor' } as never]);
    expect((await seats()).map((x) => x.granteeId).sort()).toEqual(['dup-own', null, 'victor']);
    // A plan added to the subscription gives each holder a seat of it under the same subscription id: the rule is per plan.
    const [ownSeat] = await world.db.uow.run((r) => r.licenses.getManyForUpdate([own.uuid]));
    const addOn = { ...ownSeat, id: randomUUID(), planId: plan('business') };
    const addOnFree = { ...addOn, id: randomUUID(), granteeId: null };
    await world.db.uow.run((r) => r.licenses.saveMany([addOn, addOnFree]));
    expect((await sdk.licenses.update(addOn.id, { granteeId: null as unknown as string })).granteeId).toBeNull();
    expect((await sdk.licenses.update(addOn.id, { granteeId: 'dup-own' })).granteeId).toBe('dup-own');
    await expect(sdk.licenses.update(addOnFree.id, { granteeId: 'dup-own' })).rejects.toMatchObject(named('granteeId'));
    // The batch's end state is checked: a swap and a move in natural order pass (v2 and v1).
    const victor = (await seats()).find((x) => x.granteeId === 'victor')!;
    const swapped = await sdk.licenses.updateMany([
      { uuid: own.uuid, granteeId: 'victor' },
      { uuid: victor.uuid, granteeId: 'dup-own' },
    ]);
    expect(swapped.map((l) => l.granteeId)).toEqual(['victor', 'dup-own']);
    const free = (await seats()).find((x) => x.granteeId === null && x.planUuid === plan('team'))!;
    const v1Move = await request(app)
      .put('/licenses')
      .set('x-api-key', org.liveKey)
      .set('version', 'v1')
      .send([
        { uuid: free.uuid, granteeId: 'victor' },
        { uuid: own.uuid, granteeId: null },
      ])
      .expect(200);
    expect(v1Move.body.map((l: { granteeId: string | null }) => l.granteeId)).toEqual(['victor', null]);
    // replace moves the holder's seat of each plan: zed gets dup-own's seat of the team plan and of the add-on.
    await sdk.subscriptions.manageSeats(sub, [{ type: 'replace', granteeId: 'dup-own', newGranteeId: 'zed' } as never]);
    expect(
      (await seats())
        .filter((x) => x.granteeId === 'zed')
        .map((x) => x.planUuid)
        .sort(),
    ).toEqual([plan('business'), plan('team')].sort());
  });

  it("names the SDK's own bugs by the request it sends, and what the server answers", async () => {
    const sdk = initSalable(org.liveKey, 'v2');
    const last = () => seen[seen.length - 1];
    const sub = (await sdk.subscriptions.getAll({ owner: 'buyer2@example.com' })).data[0].uuid;
    // getInvoices drops its options: no query is sent, so the whole list comes back.
    await sdk.subscriptions.getInvoices(sub, { take: 1 });
    expect(last().url).toBe(`/subscriptions/${sub}/invoices`);
    // v2 plans.getOne drops its options: a bare GET, answered with features and currencies.
    const p = await sdk.plans.getOne(org.keys['plans.notes.team'], { expand: ['capabilities'] });
    expect(last().url).toBe(`/plans/${org.keys['plans.notes.team']}`);
    expect(p).toHaveProperty('features');
    // Nothing is percent-encoded: a grantee id with a slash is another path (404), `#` cuts the query.
    await expect(sdk.licenses.getForGranteeId('org/user')).rejects.toMatchObject({ code: 'S1002' });
    expect(last().url).toBe('/licenses/granteeId/org/user');
    const cut = await sdk.subscriptions.getAll({ owner: 'buyer2@example.com#1', take: 1 } as never);
    expect(last().url).toBe('/subscriptions?owner=buyer2@example.com#1&take=1');
    expect(cut.data.map((x) => x.uuid)).toEqual([sub]);
    // `unique-key: undefined` (no idempotencyKey) is read as no key: apps/v2/test/v2.test.ts.
  });
});
