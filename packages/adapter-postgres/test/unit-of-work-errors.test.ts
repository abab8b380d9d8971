/* What a failed statement becomes: a crowded pool is BUSY, an unreachable server is an outage. */
import { ErrorCodes } from '@tollgate/core';
import { domainErrorOf } from '../src/unit-of-work';

describe('database errors as domain errors', () => {
  it("reports pg-pool's queue timeout (every connection in use) as BUSY, never as the database being down", () => {
    expect(domainErrorOf(new Error('timeout exceeded when trying to connect'))?.code).toBe(ErrorCodes.BUSY);
  });

  it('reports a connection attempt that timed out, a refused or a cut connection as the database being unavailable', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    for (const e of [
      new Error('Connection terminated due to connection timeout'),
      refused,
      new Error('Connection terminated unexpectedly'),
    ])
      expect(domainErrorOf(e)?.code).toBe(ErrorCodes.DATABASE_UNAVAILABLE);
  });

  it('says nothing was changed only for a transaction that failed before its COMMIT, never for a read (which cannot know what its request committed before it)', () => {
    const cut = new Error('Connection terminated unexpectedly');
    expect(domainErrorOf(cut)?.message).toMatch(/nothing was changed/);
    expect(domainErrorOf(cut, false)?.message).toBe('the database is unavailable; retry later');
    expect(domainErrorOf(new Error('timeout exceeded when trying to connect'), false)?.message).not.toMatch(/nothing was changed/);
  });
});
