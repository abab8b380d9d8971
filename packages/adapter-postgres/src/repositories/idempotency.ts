import { DomainError, ErrorCodes, type IdempotencyRepository, type IdempotencyScope } from '@tollgate/core';
import { sql } from 'kysely';
import { json, type Db } from './db';

export function idempotencyRepository(db: Db): IdempotencyRepository {
  const inScope = (s: IdempotencyScope) => ({ organisation_id: s.organisationId, is_test: s.isTest, route: s.route, key: s.key });
  return {
    find: async (scope, since) => {
      const r = await db
        .selectFrom('idempotency_keys')
        .selectAll()
        .where((eb) => eb.and(inScope(scope)))
        .where('created_at', '>=', since)
        .executeTakeFirst();
      return (
        r && {
          organisationId: r.organisation_id,
          isTest: r.is_test,
          route: r.route,
          key: r.key,
          fingerprint: r.fingerprint,
          status: r.status,
          body: r.body,
          createdAt: r.created_at,
        }
      );
    },
    // Insert first: the primary key decides which request runs. A claim of a transaction still
    // running makes this insert wait (PostgreSQL's unique check) until that one commits (the key
    // is held, with its answer) or rolls back (the key is free); an expired record gives way.
    claim: async (rec, expiredBefore, waitMs) => {
      await sql`select set_config('lock_timeout', ${`${Math.max(1, Math.round(waitMs))}ms`}, true)`.execute(db);
      let r;
      try {
        r = await db
          .insertInto('idempotency_keys')
          .values({
            organisation_id: rec.organisationId,
            is_test: rec.isTest,
            route: rec.route,
            key: rec.key,
            fingerprint: rec.fingerprint,
            status: null,
            body: null,
            created_at: rec.createdAt,
          })
          .onConflict((oc) =>
            oc
              .columns(['organisation_id', 'is_test', 'route', 'key'])
              .doUpdateSet({
                fingerprint: (eb) => eb.ref('excluded.fingerprint'),
                status: null,
                body: null,
                created_at: (eb) => eb.ref('excluded.created_at'),
              })
              .where((eb) => eb.or([eb('idempotency_keys.created_at', '<', expiredBefore), eb('idempotency_keys.status', 'is', null)])),
          )
          .executeTakeFirst();
      } catch (e) {
        if ((e as { code?: string }).code === '55P03')
          throw new DomainError(ErrorCodes.IDEMPOTENCY_KEY_IN_USE, 'a request with this idempotency-key is still in progress; retry later');
        throw e;
      }
      // The work that follows takes its row locks with the server's usual patience.
      await sql`select set_config('lock_timeout', '0', true)`.execute(db);
      return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
    },
    complete: async (scope, status, body) => {
      await db
        .updateTable('idempotency_keys')
        .set({ status, body: body === undefined ? null : json(body) })
        .where((eb) => eb.and(inScope(scope)))
        .execute();
    },
    purge: async (before) =>
      Number((await db.deleteFrom('idempotency_keys').where('created_at', '<', before).executeTakeFirst()).numDeletedRows ?? 0),
  };
}
