/* The one lock order every writer of seats keeps (docs/decisions.md, "An audit of transactions and
   crashes"): the subscriptions first, in id order, then their licenses. One subscription locked
   after another's licenses could deadlock with a writer of both (PostgreSQL aborts one: a 409). */
import { randomUUID } from 'node:crypto';
import type { Repositories, Subscription, UnitOfWork } from '../src';
import { buyPlan, createTestCore, InMemoryUnitOfWork, seedSample } from '../src/testing';

/** The in-memory unit of work, recording the row locks each transaction takes, in order. */
class RecordingUnitOfWork implements UnitOfWork {
  locks: string[][] = [];
  private readonly inner = new InMemoryUnitOfWork();
  read<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    return this.inner.read(work);
  }
  run<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    const taken: string[] = [];
    this.locks.push(taken);
    return this.inner.run((r) =>
      work({
        ...r,
        subscriptions: {
          ...r.subscriptions,
          getForUpdate: (id) => (taken.push(`subscription ${id}`), r.subscriptions.getForUpdate(id)),
        },
        licenses: {
          ...r.licenses,
          getManyForUpdate: (ids) => (taken.push(...ids.map((id) => `license ${id}`)), r.licenses.getManyForUpdate(ids)),
        },
        // A new grantee's insert waits at its unique key for a transaction inserting the same one.
        people: {
          ...r.people,
          findOrCreateGrantee: (g) => (taken.push(`grantee ${g.granteeId}`), r.people.findOrCreateGrantee(g)),
        },
      }),
    );
  }
  changeFeed() {
    return this.inner.changeFeed();
  }
}

/** Subscriptions in id order, all before the first license. */
function expectOrdered(locks: string[]) {
  const firstLicense = locks.findIndex((l) => l.startsWith('license '));
  const subscriptions = locks.filter((l) => l.startsWith('subscription '));
  expect(locks.slice(firstLicense === -1 ? locks.length : firstLicense).some((l) => l.startsWith('subscription '))).toBe(false);
  expect(subscriptions).toEqual([...subscriptions].sort());
}

describe('lock order of seat and grantee writers', () => {
  it("a group's members renamed together lock every subscription they hold seats on first, in id order", async () => {
    const uow = new RecordingUnitOfWork();
    const core = createTestCore({ uow });
    const { tenant, keys } = await seedSample(core, `org-${randomUUID()}`);
    // Two members, each with a seat on a subscription of their own.
    const bought: Subscription[] = [];
    for (const g of ['ann', 'ben']) bought.push((await buyPlan(core, keys['plans.notes.team'], 2, g)).subscription);
    const group = await core.groups.create(tenant, { owner: 'team-owner', grantees: [{ granteeId: 'ann' }, { granteeId: 'ben' }] });
    const members = (await core.groups.get(tenant, group.id)).members;
    const id = (granteeId: string) => members.find((m) => m.grantee.granteeId === granteeId)!.grantee.id;
    // Renamed in the order that locks the higher subscription id first when each rename locks its own.
    const [low, high] = [...bought].sort((a, b) => (a.id < b.id ? -1 : 1));
    const holderOf = (s: { id: string }) => (s.id === bought[0].id ? 'ann' : 'ben');
    uow.locks = [];
    await core.groups.update(tenant, group.id, {
      grantees: [
        { id: id(holderOf(high)), granteeId: `${holderOf(high)}-renamed` },
        { id: id(holderOf(low)), granteeId: `${holderOf(low)}-renamed` },
      ],
    });
    const [taken] = uow.locks;
    expect(taken.filter((l) => l.startsWith('subscription '))).toEqual([`subscription ${low.id}`, `subscription ${high.id}`]);
    expectOrdered(taken);
    // And the seats moved.
    const holders = (await core.licenses.list(tenant, {})).map((l) => l.granteeId);
    expect(holders).toEqual(expect.arrayContaining(['ann-renamed', 'ben-renamed']));
    expect(holders).not.toContain('ann');
  });

  it('license updates across subscriptions lock the subscriptions first, in id order', async () => {
    const uow = new RecordingUnitOfWork();
    const core = createTestCore({ uow });
    const { tenant, keys } = await seedSample(core, `org-${randomUUID()}`);
    const subs: Subscription[] = [];
    for (const g of ['cat', 'dan']) subs.push((await buyPlan(core, keys['plans.notes.team'], 2, g)).subscription);
    const seats = await core.licenses.list(tenant, {});
    uow.locks = [];
    // Seats named from the higher subscription first.
    const ordered = [...seats].sort((a, b) => (a.subscriptionId! < b.subscriptionId! ? 1 : -1));
    await core.licenses.batchUpdate(
      tenant,
      ordered.map((l, i) => ({ uuid: l.id, granteeId: `user-${i}` })),
    );
    const [taken] = uow.locks;
    expect(taken.filter((l) => l.startsWith('subscription '))).toHaveLength(2);
    expectOrdered(taken);
  });

  it('new grantees are inserted in granteeId order, whatever the order asked ([a, b] and [b, a] never wait each at the other key)', async () => {
    const uow = new RecordingUnitOfWork();
    const core = createTestCore({ uow });
    const { tenant, keys } = await seedSample(core, `org-${randomUUID()}`);
    const inserts = () => uow.locks.flat().filter((l) => l.startsWith('grantee '));
    uow.locks = [];
    const group = await core.groups.create(tenant, {
      owner: 'o',
      grantees: [{ granteeId: 'zed' }, { granteeId: 'amy' }, { granteeId: 'max' }],
    });
    expect(inserts()).toEqual(['grantee amy', 'grantee max', 'grantee zed']);
    expect((await core.groups.get(tenant, group.id)).members.map((m) => m.grantee.granteeId).sort()).toEqual(['amy', 'max', 'zed']);
    const { subscription } = await buyPlan(core, keys['plans.notes.team'], 3, 'ann');
    uow.locks = [];
    await core.groups.manage(tenant, subscription.id, [
      { type: 'add', granteeId: 'yan' },
      { type: 'add', granteeId: 'bea' },
    ]);
    expect(inserts()).toEqual(['grantee bea', 'grantee yan']);
  });
});
