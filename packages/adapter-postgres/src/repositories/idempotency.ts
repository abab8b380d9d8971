import type { IdempotencyRepository } from '@tollgate/core';
import { json, type Db } from './db';

export function idempotencyRepository(db: Db): IdempotencyRepository {
  return {
    find: async (orgId, key, since) => {
      const r = await db
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('organisation_id', '=', orgId)
        .where('key', '=', key)
        .where('created_at', '>=', since)
        .executeTakeFirst();
      return (
        r && {
          organisationId: r.organisation_id,
          key: r.key,
          fingerprint: r.fingerprint,
          status: r.status,
          body: r.body,
          createdAt: r.created_at,
        }
      );
    },
    // Insert first: the unique (organisation, key) decides which request runs; an expired or abandoned holder gives way.
    claim: async (rec, expiredBefore, abandonedBefore) => {
      const r = await db
        .insertInto('idempotency_keys')
        .values({
          organisation_id: rec.organisationId,
          key: rec.key,
          fingerprint: rec.fingerprint,
          status: null,
          body: null,
          created_at: rec.createdAt,
        })
        .onConflict((oc) =>
          oc
            .columns(['organisation_id', 'key'])
            .doUpdateSet({
              fingerprint: (eb) => eb.ref('excluded.fingerprint'),
              status: null,
              body: null,
              created_at: (eb) => eb.ref('excluded.created_at'),
            })
            .where((eb) =>
              eb.or([
                eb('idempotency_keys.created_at', '<', expiredBefore),
                eb.and([eb('idempotency_keys.status', 'is', null), eb('idempotency_keys.created_at', '<', abandonedBefore)]),
              ]),
            ),
        )
        .executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
    },
    complete: async (orgId, key, status, body) => {
      await db
        .updateTable('idempotency_keys')
        .set({ status, body: body === undefined ? null : json(body) })
        .where('organisation_id', '=', orgId)
        .where('key', '=', key)
        .execute();
    },
    release: async (orgId, key) => {
      await db
        .deleteFrom('idempotency_keys')
        .where('organisation_id', '=', orgId)
        .where('key', '=', key)
        .where('status', 'is', null)
        .execute();
    },
    purge: async (before) =>
      Number((await db.deleteFrom('idempotency_keys').where('created_at', '<', before).executeTakeFirst()).numDeletedRows ?? 0),
  };
}
