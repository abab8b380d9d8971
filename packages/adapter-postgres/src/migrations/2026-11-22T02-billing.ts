import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('checkout_sessions')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('organisation_id', 'uuid', (c) => c.notNull().references('organisations.id'))
    .addColumn('is_test', 'boolean', (c) => c.notNull())
    .addColumn('product_id', 'uuid', (c) => c.notNull().references('products.id'))
    .addColumn('plan_id', 'uuid', (c) => c.notNull().references('plans.id'))
    .addColumn('grantee_id', 'text', (c) => c.notNull())
    .addColumn('member', 'text', (c) => c.notNull())
    .addColumn('success_url', 'text', (c) => c.notNull())
    .addColumn('cancel_url', 'text', (c) => c.notNull())
    .addColumn('options', 'jsonb', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_session_id', 'text', (c) => c.unique())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('subscription_id', 'uuid', (c) => c.references('subscriptions.id'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('completed_at', 'timestamptz')
    .execute();

  await db.schema
    .createTable('billing_documents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'uuid', (c) => c.notNull().references('organisations.id'))
    .addColumn('subscription_id', 'uuid', (c) => c.notNull().references('subscriptions.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('body', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    // Newest first even for documents made in the same millisecond (a card replaced at once).
    .addColumn('seq', 'bigserial', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('billing_documents_subscription')
    .on('billing_documents')
    .columns(['subscription_id', 'kind', 'created_at'])
    .execute();

  // Webhook deliveries already applied: a replayed event id changes nothing.
  await db.schema
    .createTable('webhook_events')
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_events_pk', ['provider', 'event_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['webhook_events', 'billing_documents', 'checkout_sessions']) await db.schema.dropTable(t).ifExists().execute();
}
