/**
 * v2/v3 lists as the SDK reads them: usage records newest first and by keyset, labelled with the
 * license they were recorded on; seats without the canceled ones and with their capabilities; ad
 * hoc licenses with the SDK's `endTime`, `status` and `cancelAtPeriodEnd`.
 */
import request from 'supertest';
import { ajv } from '@tollgate/http';
import type { Repositories, UnitOfWork } from '@tollgate/core';
import { createTestCore, InMemoryUnitOfWork, seedSample } from '@tollgate/core/testing';
import { createTestWorld, purchase, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createV2App, versionRoutes } from '../src';
import { seatRoutes } from '../src/routes/seats';
import { licenseRoutes } from '../src/routes/licenses';

let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createV2App>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'v2-lists');
  app = createV2App(world);
});
afterAll(() => world?.close());

const api = (version: 'v2' | 'v3') => ({
  get: (p: string) => request(app).get(p).set('x-api-key', org.liveKey).set('version', version),
  put: (p: string, body?: unknown) =>
    request(app)
      .put(p)
      .set('x-api-key', org.liveKey)
      .set('version', version)
      .send(body as object),
  post: (p: string, body?: unknown) =>
    request(app)
      .post(p)
      .set('x-api-key', org.liveKey)
      .set('version', version)
      .send(body as object),
});
const expectSchema = (method: string, path: string, body: unknown) => {
  const r = versionRoutes({ ...world, config: { publicUrl: 'http://x' } } as never, 'v2').find(
    (x) => x.method === method && x.path === path,
  );
  const validate = ajv.compile(r?.response.schema as object);
  if (!validate(body)) throw new Error(ajv.errorsText(validate.errors));
};
const later = (ms: number) => world.clock.set(new Date(world.clock.now().getTime() + ms));
const uuids = (res: { body: { data: { uuid: string }[] } }) => res.body.data.map((r) => r.uuid);

/**
 * An in-memory unit of work whose repositories tell `spy` of each call (repository, method, its
 * answer) before answering: to count the queries a route or use case makes.
 */
const spyingUow = (spy: (repo: string | symbol, method: string | symbol, answer: unknown) => void) => {
  const inner = new InMemoryUnitOfWork();
  const spying = (r: Repositories): Repositories =>
    new Proxy(r, {
      get(target, repo) {
        const v = Reflect.get(target, repo) as unknown;
        if (typeof v !== 'object' || v === null) return v;
        return new Proxy(v, {
          get(u, m) {
            const f = Reflect.get(u, m) as unknown;
            if (typeof f !== 'function') return f;
            return (...args: unknown[]) => {
              const answer = f.apply(u, args) as unknown;
              if (!(answer instanceof Promise)) return answer;
              return answer.then((a: unknown) => (spy(repo, m, a), a));
            };
          },
        });
      },
    });
  const uow = new Proxy(inner, {
    get(target, p) {
      const f = Reflect.get(target, p) as unknown;
      if (p === 'run' || p === 'read')
        return (work: (r: Repositories) => Promise<unknown>) => (f as UnitOfWork['run']).call(target, (r) => work(spying(r)));
      return typeof f === 'function' ? f.bind(target) : f;
    },
  }) as UnitOfWork;
  return { inner, uow };
};

describe('GET /usage', () => {
  it('pages newest first with sort=desc, the cursor leading on in either order', async () => {
    const plan = org.keys['plans.notes.free'];
    await api('v2').post('/licenses', { planUuid: plan, member: 'm', granteeId: 'u-order' }).expect(200);
    for (let i = 1; i <= 5; i++) {
      later(1000);
      await api('v2')
        .put('/usage', { granteeId: 'u-order', planUuid: plan, countOptions: { increment: i } })
        .expect(200);
    }
    const all = await api('v2').get('/usage?granteeId=u-order&take=5').expect(200);
    expect(all.body.data.map((r: { unitCount: number }) => r.unitCount)).toEqual([1, 2, 3, 4, 5]);
    const [r1, r2, r3, r4, r5] = uuids(all);
    const desc = (cursor?: string) => api('v2').get(`/usage?granteeId=u-order&take=2&sort=desc${cursor ? `&cursor=${cursor}` : ''}`);
    const first = await desc().expect(200);
    expect(first.body).toMatchObject({ first: r5, last: r4 });
    expect(uuids(first)).toEqual([r5, r4]);
    expect(uuids(await desc(r4).expect(200))).toEqual([r3, r2]);
    expect(uuids(await desc(r2).expect(200))).toEqual([r1]);
    expect(uuids(await desc(r1).expect(200))).toEqual([]);
    // Oldest first (the default) continues after its cursor the other way.
    expect(uuids(await api('v2').get(`/usage?granteeId=u-order&take=2&cursor=${r2}`).expect(200))).toEqual([r3, r4]);
    expect(uuids(await api('v3').get(`/usage?granteeId=u-order&take=2&sort=asc&cursor=${r4}`).expect(200))).toEqual([r5]);
    const unknown = await desc('00000000-0000-4000-8000-000000000000').expect(400);
    expect(unknown.body.validationErrors).toEqual([{ property: 'cursor', error: 'names no usage record of this list' }]);
  });

  it("labels a record with the ad hoc license it was recorded on, and a subscription's (any seat's) with the asker's own seat", async () => {
    const free = org.keys['plans.notes.free'];
    const team = org.keys['plans.notes.team'];
    const own = (await api('v2').post('/licenses', { planUuid: free, member: 'm', granteeId: 'u-a' }).expect(200)).body.uuid;
    const sub = (await purchase(world, team, 'u-a', 2)).subscription.id;
    await api('v2')
      .put(`/subscriptions/${sub}/manage-seats`, [{ type: 'assign', granteeId: 'u-b' }])
      .expect(204);
    await api('v2')
      .put('/usage', { granteeId: 'u-a', planUuid: free, countOptions: { increment: 1 } })
      .expect(200);
    later(1000);
    // The seatmate's usage counts into the subscription both seats share.
    await api('v2')
      .put('/usage', { granteeId: 'u-b', planUuid: team, countOptions: { increment: 4 } })
      .expect(200);
    const seats = (await api('v2').get(`/subscriptions/${sub}/seats`).expect(200)).body.data as { uuid: string; granteeId: string }[];
    const seatOf = (grantee: string) => seats.find((l) => l.granteeId === grantee)!.uuid;
    const list = await api('v2').get('/usage?granteeId=u-a').expect(200);
    expectSchema('get', '/usage', list.body);
    expect(list.body.data.map((r: object) => ({ ...r }))).toEqual([
      expect.objectContaining({ unitCount: 1, licenseUuid: own, planUuid: free }),
      expect.objectContaining({ unitCount: 4, licenseUuid: seatOf('u-a'), planUuid: team }),
    ]);
    // The same records from the seatmate's side; a plan narrows to its holders.
    expect((await api('v2').get('/usage?granteeId=u-b').expect(200)).body.data).toEqual([
      expect.objectContaining({ unitCount: 4, licenseUuid: seatOf('u-b') }),
    ]);
    expect((await api('v2').get(`/usage?granteeId=u-a&planUuid=${free}`).expect(200)).body.data).toEqual([
      expect.objectContaining({ unitCount: 1, licenseUuid: own }),
    ]);
  });

  it('reads one page of the ledger (take + 1 rows at most), not every record of the holder', async () => {
    // A core on the in-memory database whose repositories count the ledger rows they hand out.
    const rows = { read: 0 };
    const { inner, uow } = spyingUow((repo, m, page) => {
      if (repo === 'usage' && (m === 'pageRecords' || m === 'pageRecordsOf'))
        rows.read += (page as { items: unknown[] } | undefined)?.items.length ?? 0;
    });
    const core = createTestCore({ uow, changes: inner.changeFeed() });
    const { tenant, keys } = await seedSample(core, 'mem-usage');
    await core.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'm', granteeId: 'g' }]);
    for (let i = 0; i < 250; i++) {
      core.clock.set(new Date(core.clock.now().getTime() + 1000));
      await core.granteeUsage.record(tenant, { granteeId: 'g', planId: keys['plans.notes.free'], increment: 1 });
    }
    const asc = await core.granteeUsage.records(tenant, { granteeId: 'g', take: 250 });
    rows.read = 0;
    const page = await core.granteeUsage.records(tenant, { granteeId: 'g', take: 2, sort: 'desc' });
    expect(rows.read).toBeLessThanOrEqual(3);
    expect(page.map((r) => r.id)).toEqual([asc[249].id, asc[248].id]);
    rows.read = 0;
    const next = await core.granteeUsage.records(tenant, { granteeId: 'g', take: 2, sort: 'desc', cursor: asc[248].id });
    expect(next.map((r) => r.id)).toEqual([asc[247].id, asc[246].id]);
    expect(rows.read).toBeLessThanOrEqual(3);
  });
});

describe('seats', () => {
  it('lists and counts no canceled seat, and a v2 seat shows its plan capabilities', async () => {
    const sub = (await purchase(world, org.keys['plans.notes.team'], 's-holder', 3)).subscription.id;
    const seats = await api('v2').get(`/subscriptions/${sub}/seats`).expect(200);
    expect(seats.body.data).toHaveLength(3);
    const license = (await api('v2').get(`/licenses/${seats.body.data[0].uuid}`).expect(200)).body;
    expect(license.capabilities.length).toBeGreaterThan(0);
    expect(seats.body.data[0].capabilities).toEqual(license.capabilities);
    expect((await api('v2').get(`/subscriptions/${sub}/seats/count`).expect(200)).body).toEqual({ count: 3, assigned: 1, unassigned: 2 });
    // A seat of another subscription is no cursor of this list.
    const other = (await purchase(world, org.keys['plans.notes.team'], 's-other', 2)).subscription.id;
    const otherSeat = (await api('v2').get(`/subscriptions/${other}/seats`).expect(200)).body.data[0].uuid;
    const refused = await api('v2').get(`/subscriptions/${sub}/seats?cursor=${otherSeat}`).expect(400);
    expect(refused.body.validationErrors).toEqual([{ property: 'cursor', error: 'names no seat of this subscription' }]);
    // Cancelled now: every seat is CANCELED and neither version lists or counts them.
    await api('v2').put(`/subscriptions/${sub}/cancel?when=now`).expect(204);
    for (const version of ['v2', 'v3'] as const) {
      expect((await api(version).get(`/subscriptions/${sub}/seats`).expect(200)).body).toEqual({ first: null, last: null, data: [] });
      expect((await api(version).get(`/subscriptions/${sub}/seats/count`).expect(200)).body).toEqual({
        count: 0,
        assigned: 0,
        unassigned: 0,
      });
    }
  });

  it('reads a page of live seats, and their count, in one license query each however many seats are canceled', async () => {
    const calls: string[] = [];
    const { inner, uow } = spyingUow((repo, m) => {
      if (repo === 'licenses') calls.push(String(m));
    });
    const core = createTestCore({ uow, changes: inner.changeFeed() });
    const { tenant, keys } = await seedSample(core, 'mem-seats');
    const sub = (await purchase({ core }, keys['plans.notes.team'], 'holder', 30)).subscription.id;
    // The 25 oldest seats canceled (as the repository can hold them), 5 live ones after them.
    const all = await inner.read((r) => r.licenses.listBySubscription(sub));
    await inner.run((r) => r.licenses.saveMany(all.slice(0, 25).map((l) => ({ ...l, status: 'CANCELED' as const }))));
    const live = all.slice(25);
    const routes = seatRoutes({ core } as never, 'v2');
    const call = async (operationId: string, query: Record<string, string>, subscriptionUuid = sub) => {
      const r = routes.find((x) => x.operationId === operationId);
      calls.length = 0;
      return (await r?.handle({ tenant, params: { subscriptionUuid }, query, body: undefined, req: {} as never, res: {} as never }))
        ?.body as { data: { uuid: string }[] } & Record<string, number>;
    };
    const first = await call('getSeats', { take: '3' });
    expect(first.data.map((x) => x.uuid)).toEqual(live.slice(0, 3).map((l) => l.id));
    expect(calls.filter((m) => m === 'page' || m === 'list' || m === 'count')).toEqual(['page']);
    const next = await call('getSeats', { take: '3', cursor: live[2].id });
    expect(next.data.map((x) => x.uuid)).toEqual(live.slice(3).map((l) => l.id));
    expect(calls.filter((m) => m === 'page' || m === 'list' || m === 'count')).toEqual(['page']);
    const assigned = live.filter((l) => l.granteeId !== null).length;
    expect(await call('getSeatCount', {})).toEqual({ count: 5, assigned, unassigned: 5 - assigned });
    expect(calls.filter((m) => m === 'page' || m === 'list' || m === 'count')).toEqual(['count']);
    // An empty page still tells an unknown subscription from one without live seats.
    await expect(call('getSeats', {}, '00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await inner.run((r) => r.licenses.saveMany(live.map((l) => ({ ...l, status: 'CANCELED' as const }))));
    expect((await call('getSeats', {})).data).toEqual([]);
  });
});

describe('POST /licenses (v2)', () => {
  const free = () => org.keys['plans.notes.free'];
  it('takes the SDK members endTime, status and cancelAtPeriodEnd with their meanings', async () => {
    const end = new Date(world.clock.now().getTime() + 7 * 86400_000).toISOString();
    const one = await api('v2')
      .post('/licenses', { planUuid: free(), member: 'm', granteeId: 'l-end', endTime: end, status: 'ACTIVE', cancelAtPeriodEnd: false })
      .expect(200);
    expect(one.body).toMatchObject({ granteeId: 'l-end', status: 'ACTIVE', endTime: end, cancelAtPeriodEnd: false });
    expect((await api('v2').get(`/licenses/${one.body.uuid}`).expect(200)).body.endTime).toBe(end);
    const many = await api('v2')
      .post('/licenses', [
        { planUuid: free(), member: 'm', granteeId: 'l-1', endTime: end },
        { planUuid: free(), member: 'm', granteeId: 'l-2' },
      ])
      .expect(200);
    expect(many.body.map((l: { endTime: string | null }) => l.endTime)).toEqual([end, null]);
  });

  it('creates each license with its end in the creation itself: no later write could leave it without one', async () => {
    // A unit of work in which, once the creation has saved its licenses, every license write fails (an outage).
    let saved = false;
    const { inner, uow } = spyingUow((repo, m) => {
      if (repo !== 'licenses') return;
      if (saved && (m === 'saveMany' || m === 'getManyForUpdate')) throw new Error('outage');
      if (m === 'saveMany') saved = true;
    });
    const core = createTestCore({ uow, changes: inner.changeFeed() });
    const { tenant, keys } = await seedSample(core, 'mem-end');
    const route = licenseRoutes({ core, clock: core.clock } as never, 'v2').find((x) => x.operationId === 'createLicenses');
    const end = new Date(core.clock.now().getTime() + 7 * 86400_000);
    const body = [
      { planUuid: keys['plans.notes.free'], member: 'm', granteeId: 'e-1', endTime: end.toISOString() },
      { planUuid: keys['plans.notes.free'], member: 'm', granteeId: 'e-2' },
    ];
    const answer = await route?.handle({ tenant, params: {}, query: {}, body, req: {} as never, res: {} as never });
    expect((answer?.body as { endTime: string | null }[]).map((l) => l.endTime)).toEqual([end.toISOString(), null]);
    const stored = await inner.read((r) => r.licenses.list(tenant, {}));
    expect(stored.map((l) => [l.granteeId, l.endTime]).sort((a, b) => String(a[0]).localeCompare(String(b[0])))).toEqual([
      ['e-1', end],
      ['e-2', null],
    ]);
  });

  it('refuses bad values with 400 naming the member, making none', async () => {
    const bad = async (body: unknown, property: RegExp) => {
      const res = await api('v2').post('/licenses', body).expect(400);
      expect(JSON.stringify(res.body.validationErrors)).toMatch(property);
    };
    const base = { planUuid: free(), member: 'm', granteeId: 'l-bad' };
    await bad({ ...base, endTime: 'tomorrow' }, /endTime/);
    await bad({ ...base, endTime: '2001-01-01T00:00:00Z' }, /endTime/);
    await bad({ ...base, status: 'CANCELED' }, /status/);
    await bad({ ...base, status: 'TRIALING' }, /status/);
    await bad({ ...base, cancelAtPeriodEnd: 'yes' }, /cancelAtPeriodEnd/);
    await bad({ ...base, cancelAtPeriodEnd: true }, /cancelAtPeriodEnd/);
    // An evaluation plan's license starts EVALUATION: ACTIVE is refused too.
    await bad({ ...base, planUuid: org.keys['plans.notes.team'], status: 'ACTIVE' }, /status/);
    await bad([base, { ...base, endTime: '2001-01-01T00:00:00Z' }], /\[1\]\.endTime/);
    // A leap second passes the schema's date-time but no clock shows it: named as the member, in its place.
    await bad([base, { ...base, endTime: '2030-06-30T23:59:60Z' }], /\[1\]\.endTime/);
    expect((await api('v2').get('/licenses/granteeId/l-bad').expect(200)).body).toEqual([]);
  });
});
