import { sql, type Kysely } from 'kysely';

/**
 * Idempotency records scoped by organisation, mode, key and route (issue #24): a key first used
 * with a live API key is another key under a test API key of the same organisation, and another
 * key on another route. Records kept from before name their route from their fingerprint (method
 * and path); their mode is unknown and taken as live, so a test-mode retry of one of them (within
 * its 24 hours) runs anew rather than risk a replay across modes. Claims now commit only with
 * their answer, so in-flight rows of the old scheme are dropped.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export async function up(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('status', 'is', null).execute();
  await db.schema
    .alterTable('idempotency_keys')
    .addColumn('is_test', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('route', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await sql`update idempotency_keys set route = split_part(fingerprint, ' ', 1) || ' ' || split_part(fingerprint, ' ', 2)`.execute(db);
  await db.schema.alterTable('idempotency_keys').dropConstraint('idempotency_keys_pk').execute();
  await db.schema
    .alterTable('idempotency_keys')
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['organisation_id', 'is_test', 'route', 'key'])
    .execute();
  await sql`alter table idempotency_keys alter column is_test drop default, alter column route drop default`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // Only one record per organisation and key can stay: the earliest.
  await sql`
    delete from idempotency_keys k using idempotency_keys o
    where k.organisation_id = o.organisation_id and k.key = o.key
      and (k.created_at, k.is_test, k.route) > (o.created_at, o.is_test, o.route)`.execute(db);
  await db.schema.alterTable('idempotency_keys').dropConstraint('idempotency_keys_pk').execute();
  await db.schema.alterTable('idempotency_keys').addPrimaryKeyConstraint('idempotency_keys_pk', ['organisation_id', 'key']).execute();
  await db.schema.alterTable('idempotency_keys').dropColumn('is_test').dropColumn('route').execute();
}
