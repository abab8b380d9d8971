/* The stored idempotent answer commits with the work it answers (issue #24, point 8), and a key
   never crosses an organisation, mode or route (point 2). */
import { randomUUID } from 'node:crypto';
import { DomainError, ErrorCodes, IDEMPOTENCY_CLAIM_SLICE_MS, IdempotencyService, type Repositories } from '../src';
import type { JoinedUnitOfWork } from '../src/usecases/joined-unit-of-work';
import { createTestCore, type TestCore } from '../src/testing';
import { FixedClock } from '../src/testing/fakes';

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

describe('idempotency: a request waiting for the first of its key', () => {
  it('holds no connection while it waits: short claims in transactions of their own, then the replay', async () => {
    const scope = { organisationId: 'o', isTest: false, key: 'k', route: 'POST /api/x' };
    const attempts: { claimWaitMs: number; open: boolean }[] = [];
    let open = 0;
    let inUse = 3;
    // A database where the first request of the key runs for three claims' time, then has answered.
    const uow = {
      runShared: async <T>(work: (r: Repositories) => Promise<T>): Promise<T> => {
        open++;
        try {
          return await work({
            idempotency: {
              claim: async (_rec: unknown, _since: Date, claimWaitMs: number) => {
                attempts.push({ claimWaitMs, open: open > 1 });
                if (inUse-- > 0) throw new DomainError(ErrorCodes.IDEMPOTENCY_KEY_IN_USE, 'in progress');
                return false;
              },
              find: async () => ({ ...scope, fingerprint: 'f', status: 201, body: { id: 'x' }, createdAt: new Date() }),
            },
          } as unknown as Repositories);
        } finally {
          open--;
        }
      },
    } as unknown as JoinedUnitOfWork;
    const service = new IdempotencyService({ uow, clock: new FixedClock(new Date()) });
    const outcome = await service.perform(scope, 'f', () => Promise.reject(new Error('must not run')));
    expect(outcome).toEqual({ kind: 'replay', status: 201, body: { id: 'x' } });
    expect(attempts).toHaveLength(4);
    for (const a of attempts) expect(a).toEqual({ claimWaitMs: IDEMPOTENCY_CLAIM_SLICE_MS, open: false });
  });
});
