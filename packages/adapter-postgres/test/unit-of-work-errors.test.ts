/* What a failed statement becomes: a crowded pool is BUSY, an unreachable server is an outage. */
import { ErrorCodes } from '@tollgate/core';
import { DatabaseError } from 'pg';
import { domainErrorOf, markConnectFailure } from '../src/unit-of-work';

/** An error as pg builds it from a server's ErrorResponse (severity FATAL at connect). */
const serverError = (code: string, message: string) =>
  Object.assign(new DatabaseError(message, message.length, 'error'), { code, severity: 'FATAL' });

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

  it("reports the server's refusals of a connection as the database being unavailable (503 with Retry-After), not a 500", () => {
    for (const e of [
      serverError('55000', 'database "tollgate" is not currently accepting connections'), // ALLOW_CONNECTIONS false
      serverError('53300', 'sorry, too many clients already'),
      serverError('53300', 'too many connections for role "tollgate"'),
      serverError('57P03', 'the database system is starting up'),
      serverError('57P04', 'database "tollgate" does not exist'),
      serverError('57P05', 'terminating connection due to idle-session timeout'),
    ]) {
      expect(domainErrorOf(e)?.code).toBe(ErrorCodes.DATABASE_UNAVAILABLE);
      expect(domainErrorOf(e, false)?.code).toBe(ErrorCodes.DATABASE_UNAVAILABLE);
    }
  });

  it('reports any failure while connecting as an outage (a refused login too), but a crowded pool stays BUSY', () => {
    const login = serverError('28P01', 'password authentication failed for user "tollgate"');
    expect(domainErrorOf(login)).toBeUndefined();
    expect(domainErrorOf(markConnectFailure(login))?.code).toBe(ErrorCodes.DATABASE_UNAVAILABLE);
    const other55000 = serverError('55000', 'some other prerequisite is missing');
    expect(domainErrorOf(markConnectFailure(other55000))?.code).toBe(ErrorCodes.DATABASE_UNAVAILABLE);
    expect(domainErrorOf(markConnectFailure(new Error('timeout exceeded when trying to connect')))?.code).toBe(ErrorCodes.BUSY);
  });

  it("leaves a statement's own refusals alone: 55000 past connecting, a statement canceled by its timeout (57014)", () => {
    expect(domainErrorOf(serverError('55000', 'cannot ALTER TABLE "x" because it has pending trigger events'))).toBeUndefined();
    expect(domainErrorOf(serverError('57014', 'canceling statement due to statement timeout'))).toBeUndefined();
  });

  it('reads only the lost-connection codes of class 08 as an outage: a protocol violation (08P01, a client bug) stays a 500', () => {
    for (const code of ['08000', '08003', '08006'])
      expect(domainErrorOf(serverError(code, 'connection lost'))?.code).toBe(ErrorCodes.DATABASE_UNAVAILABLE);
    const bug = Object.assign(serverError('08P01', 'bind message supplies 0 parameters, but prepared statement "" requires 65536'), {
      severity: 'ERROR',
    });
    expect(domainErrorOf(bug)).toBeUndefined();
    // A pooler (PgBouncer) ending the session when the server behind it went away, or its queue timed out: FATAL 08P01.
    for (const message of ['server conn crashed?', 'query_wait_timeout'])
      expect(domainErrorOf(serverError('08P01', message))?.code).toBe(ErrorCodes.DATABASE_UNAVAILABLE);
    // Raised while connecting (marked), any code is an outage.
    expect(domainErrorOf(markConnectFailure(serverError('08001', 'could not connect')))?.code).toBe(ErrorCodes.DATABASE_UNAVAILABLE);
  });
});
