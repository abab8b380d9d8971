import { sql, type Kysely } from 'kysely';

/**
 * Outgoing webhooks (DESIGN section 12): vendors' endpoints, the outbox of events (written in the
 * transaction of the change each describes), one delivery per event and subscribed endpoint, and
 * the attempts of each delivery.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('organisation_id', 'uuid', (c) => c.notNull().references('organisations.id'))
    .addColumn('is_test', 'boolean', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('events', 'jsonb', (c) => c.notNull())
    .addColumn('sealed_secret', 'text', (c) => c.notNull())
    .addColumn('disabled_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await sql`create index webhook_endpoints_tenant on webhook_endpoints (organisation_id, is_test, created_at, id)`.execute(db);

  await db.schema
    .createTable('outbox_events')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('organisation_id', 'uuid', (c) => c.notNull().references('organisations.id'))
    .addColumn('is_test', 'boolean', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('ordering_key', 'uuid', (c) => c.notNull())
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await sql`create index outbox_events_tenant on outbox_events (organisation_id, is_test, created_at, id)`.execute(db);
  // The retention sweep: the oldest events first.
  await sql`create index outbox_events_created on outbox_events (created_at)`.execute(db);

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('event_id', 'uuid', (c) => c.notNull().references('outbox_events.id').onDelete('cascade'))
    .addColumn('endpoint_id', 'uuid', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('organisation_id', 'uuid', (c) => c.notNull())
    .addColumn('ordering_key', 'uuid', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'timestamptz', (c) => c.notNull())
    .addColumn('locked_until', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    // Delivery order: the order the events were written, even within one transaction.
    .addColumn('seq', 'bigserial', (c) => c.notNull().unique())
    .execute();
  // Deliveries of an event (the sweep's "none waiting" probe, and cascades).
  await sql`create index webhook_deliveries_event on webhook_deliveries (event_id)`.execute(db);
  // The claim (due pending deliveries, by sequence) and its "earlier pending delivery of the same key" probe.
  await sql`create index webhook_deliveries_due on webhook_deliveries (seq, next_attempt_at) where status = 'pending'`.execute(db);
  await sql`create index webhook_deliveries_open_by_key on webhook_deliveries (endpoint_id, ordering_key, seq) where status = 'pending'`.execute(
    db,
  );

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('delivery_id', 'uuid', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('endpoint_id', 'uuid', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('event_id', 'uuid', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await sql`create index webhook_attempts_endpoint on webhook_attempts (endpoint_id, created_at, id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['webhook_attempts', 'webhook_deliveries', 'outbox_events', 'webhook_endpoints'])
    await db.schema.dropTable(t).ifExists().execute();
}
