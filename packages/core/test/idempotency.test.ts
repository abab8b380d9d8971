/* The stored idempotent answer commits with the work it answers (issue #24, point 8), and a key
   never crosses an organisation, mode or route (point 2). */
import { randomUUID } from 'node:crypto';
import { createTestCore, type TestCore } from '../src/testing';

describe('idempotency: the answer in the work transaction', () => {
  let core: TestCore;
  let organisationId: string;
  beforeEach(async () => {
    core = createTestCore();
    organisationId = (await core.apiKeys.ensureOrganisation(`org-${randomUUID().slice(0, 8)}`)).id;
  });
  const scope = (over: object = {}) => ({ organisationId, isTest: false, key: 'k-1', route: 'POST /api/x', ...over });

  it('leaves neither the work nor the answer when the request fails after its writes, and replays after success', async () => {
    const org = `made-${randomUUID().slice(0, 8)}`;
    await expect(
      core.idempotency.perform(scope(), 'POST /api/x a', async () => {
        await core.apiKeys.ensureOrganisation(org);
        throw new Error('the process died before the answer');
      }),
    ).rejects.toThrow('the process died');
    await expect(core.apiKeys.organisation(org)).rejects.toMatchObject({ code: 'ORGANISATION_NOT_FOUND' });
    let runs = 0;
    const work = async () => {
      runs++;
      const made = await core.apiKeys.ensureOrganisation(org);
      return { status: 201, body: { id: made.id } };
    };
    const first = await core.idempotency.perform(scope(), 'POST /api/x a', work);
    const again = await core.idempotency.perform(scope(), 'POST /api/x a', work);
    expect(first.kind).toBe('ran');
    expect(again).toEqual({ kind: 'replay', status: 201, body: first.kind === 'ran' ? first.answer.body : undefined });
    expect(runs).toBe(1);
  });

  it('runs anew under another mode, route or organisation, and refuses another request under the same scope', async () => {
    let runs = 0;
    const work = async () => ({ status: 201, body: { n: ++runs } });
    await core.idempotency.perform(scope(), 'POST /api/x a', work);
    for (const other of [{ isTest: true }, { route: 'POST /api/y' }, { organisationId: randomUUID() }]) {
      expect((await core.idempotency.perform(scope(other), 'POST /api/x a', work)).kind).toBe('ran');
    }
    expect(runs).toBe(4);
    await expect(core.idempotency.perform(scope(), 'POST /api/x b', work)).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
  });
});
