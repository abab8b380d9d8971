import { sql, type Kysely } from 'kysely';

/**
 * The catalog API's people (issue #20): grantees (the vendor's user or team identifiers, with a
 * name), groups of an owner (a customer) and the memberships of groups without a subscription. A
 * subscription's group has the subscription's id; its members are the grantees of its seats, so
 * it keeps no membership rows. Every subscription so far gets its group.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export async function up(db: Kysely<any>): Promise<void> {
  const owned = (name: string) =>
    db.schema
      .createTable(name)
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('organisation_id', 'uuid', (c) => c.notNull().references('organisations.id'))
      .addColumn('is_test', 'boolean', (c) => c.notNull());
  await owned('grantees')
    .addColumn('grantee_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addUniqueConstraint('grantees_tenant_grantee', ['organisation_id', 'is_test', 'grantee_id'])
    .execute();
  await owned('groups')
    .addColumn('customer_id', 'uuid', (c) => c.notNull().references('customers.id'))
    .addColumn('subscription_id', 'uuid', (c) => c.unique().references('subscriptions.id'))
    .addColumn('name', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('groups_tenant_created').on('groups').columns(['organisation_id', 'is_test', 'created_at', 'id']).execute();
  await owned('group_memberships')
    .addColumn('group_id', 'uuid', (c) => c.notNull().references('groups.id').onDelete('cascade'))
    .addColumn('grantee_ref', 'uuid', (c) => c.notNull().references('grantees.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addUniqueConstraint('group_memberships_pair', ['group_id', 'grantee_ref'])
    .execute();
  await db.schema.createIndex('group_memberships_grantee').on('group_memberships').column('grantee_ref').execute();
  await sql`
    insert into groups (id, organisation_id, is_test, customer_id, subscription_id, name, created_at, updated_at)
    select id, organisation_id, is_test, customer_id, id, null, created_at, updated_at from subscriptions
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('group_memberships').execute();
  await db.schema.dropTable('groups').execute();
  await db.schema.dropTable('grantees').execute();
}
