import { sql, type ExpressionBuilder, type Insertable, type Selectable } from 'kysely';
import type {
  DeliveryAttempt,
  DeliveryStatus,
  OutboxDelivery,
  OutboxEvent,
  OutboxRepository,
  WebhookEndpoint,
  WebhookEventType,
  WebhookRepository,
} from '@tollgate/core';
import type { DB } from '../schema';
import { chunks, json, keysetPage, plainArray, tenantOf, textArray, timeArray, upsert, type Db } from './db';

/** A webhook endpoint row as the domain's endpoint. */
export const toEndpoint = (r: Selectable<DB['webhook_endpoints']>): WebhookEndpoint => ({
  id: r.id,
  organisationId: r.organisation_id,
  isTest: r.is_test,
  url: r.url,
  description: r.description,
  events: r.events as WebhookEventType[],
  sealedSecret: r.sealed_secret,
  disabledAt: r.disabled_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const endpointRow = (e: WebhookEndpoint): Insertable<DB['webhook_endpoints']> => ({
  id: e.id,
  organisation_id: e.organisationId,
  is_test: e.isTest,
  url: e.url,
  description: e.description,
  events: json(e.events),
  sealed_secret: e.sealedSecret,
  disabled_at: e.disabledAt,
  created_at: e.createdAt,
  updated_at: e.updatedAt,
});

const toEvent = (r: Selectable<DB['outbox_events']>): OutboxEvent => ({
  id: r.id,
  organisationId: r.organisation_id,
  isTest: r.is_test,
  type: r.type as WebhookEventType,
  orderingKey: r.ordering_key,
  payload: r.payload as unknown as OutboxEvent['payload'],
  createdAt: r.created_at,
});

const toDelivery = (r: Selectable<DB['webhook_deliveries']>): OutboxDelivery => ({
  id: r.id,
  eventId: r.event_id,
  endpointId: r.endpoint_id,
  organisationId: r.organisation_id,
  orderingKey: r.ordering_key,
  status: r.status as DeliveryStatus,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  lockedUntil: r.locked_until,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const deliveryRow = (d: OutboxDelivery): Omit<Insertable<DB['webhook_deliveries']>, 'seq'> => ({
  id: d.id,
  event_id: d.eventId,
  endpoint_id: d.endpointId,
  organisation_id: d.organisationId,
  ordering_key: d.orderingKey,
  status: d.status,
  attempts: d.attempts,
  next_attempt_at: d.nextAttemptAt,
  locked_until: d.lockedUntil,
  created_at: d.createdAt,
  updated_at: d.updatedAt,
});

const toAttempt = (r: Selectable<DB['webhook_attempts']>): DeliveryAttempt => ({
  id: r.id,
  deliveryId: r.delivery_id,
  endpointId: r.endpoint_id,
  eventId: r.event_id,
  responseStatus: r.response_status,
  responseBody: r.response_body,
  durationMs: r.duration_ms,
  createdAt: r.created_at,
});

export function outboxRepository(db: Db): OutboxRepository {
  return {
    append: async (events) => {
      // One statement per chunk, rows in the given order (the deliveries' sequence follows it).
      for (const chunk of chunks(events, 7))
        await db
          .insertInto('outbox_events')
          .values(
            chunk.map((e) => ({
              id: e.id,
              organisation_id: e.organisationId,
              is_test: e.isTest,
              type: e.type,
              ordering_key: e.orderingKey,
              payload: json(e.payload),
              created_at: e.createdAt,
            })),
          )
          .execute();
    },
    appendSeeingEndpoints: async (events) => {
      if (events.length === 0) return [];
      // One call appends the events in the given order and reads their tenants' enabled endpoints
      // (outbox_append, migration 2026-11-26T10-00: its plans kept by the session, each column one
      // array): one round trip where append and a look-up per tenant took two or more.
      const rows = await sql<Selectable<DB['webhook_endpoints']>>`
        select * from outbox_append(${plainArray(events.map((e) => e.id))}, ${plainArray(events.map((e) => e.organisationId))},
          ${plainArray(events.map((e) => e.isTest))}, ${textArray(events.map((e) => e.type))}, ${plainArray(events.map((e) => e.orderingKey))},
          ${json(events.map((e) => e.payload))}, ${timeArray(events.map((e) => e.createdAt))})`.execute(db);
      return rows.rows.map(toEndpoint);
    },
    purge: async (before, limit) => {
      // Two statements, so that a resend racing the purge keeps what it wrote. The first locks the
      // oldest candidates, skipping any event a resend is writing a delivery for (its insert holds
      // the event's key-share lock until it commits); one deleted under it would take the new
      // delivery with it (cascade) after the resend was acknowledged. The second, with a fresh view
      // now that they are locked, deletes those still without a pending delivery: a resend that
      // committed in between keeps its event, and one that starts now waits for the lock and then
      // finds the event gone (answered 404).
      const noPending = (eb: ExpressionBuilder<DB, 'outbox_events'>) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('webhook_deliveries as d')
              .select('d.id')
              .whereRef('d.event_id', '=', 'outbox_events.id')
              .where('d.status', '=', 'pending'),
          ),
        );
      const locked = await db
        .selectFrom('outbox_events')
        .select('id')
        .where('created_at', '<', before)
        .where(noPending)
        .orderBy('created_at')
        .limit(limit)
        .forUpdate()
        .skipLocked()
        .execute();
      if (locked.length === 0) return 0;
      const gone = await db
        .deleteFrom('outbox_events')
        .where(
          'id',
          'in',
          locked.map((e) => e.id),
        )
        .where(noPending)
        .executeTakeFirst();
      return Number(gone.numDeletedRows);
    },
    get: async (id) => {
      const r = await db.selectFrom('outbox_events').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toEvent(r);
    },
    page: async (t, q) => {
      const page = await keysetPage(
        () => {
          const base = db
            .selectFrom('outbox_events')
            .selectAll()
            .where('organisation_id', '=', t.organisationId)
            .where('is_test', '=', t.isTest);
          return q.types?.length ? base.where('type', 'in', q.types) : base;
        },
        'outbox_events',
        q,
      );
      return { ...page, items: page.items.map(toEvent) };
    },
  };
}

/** No cap (a count no endpoint reaches). */
const MANY = 1_000_000_000;

export function webhookRepository(db: Db): WebhookRepository {
  return {
    getEndpoint: async (id) => {
      const r = await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toEndpoint(r);
    },
    pageEndpoints: async (t, q) => {
      const page = await keysetPage(
        () =>
          db.selectFrom('webhook_endpoints').selectAll().where('organisation_id', '=', t.organisationId).where('is_test', '=', t.isTest),
        'webhook_endpoints',
        q,
      );
      return { ...page, items: page.items.map(toEndpoint) };
    },
    enabledEndpoints: async (t) =>
      (
        await db
          .selectFrom('webhook_endpoints')
          .selectAll()
          .where((eb) => eb.and(tenantOf(t)))
          .where('disabled_at', 'is', null)
          .orderBy('created_at')
          .orderBy('id')
          .execute()
      ).map(toEndpoint),
    saveEndpoint: (e) => upsert(db, 'webhook_endpoints', [endpointRow(e)]),
    deleteEndpoint: async (id) => {
      await db.deleteFrom('webhook_endpoints').where('id', '=', id).execute();
    },
    addDeliveries: async (ds) => {
      for (const chunk of chunks(ds, 11))
        if (chunk.length) await db.insertInto('webhook_deliveries').values(chunk.map(deliveryRow)).execute();
    },
    getDeliveryForUpdate: async (id) => {
      const r = await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
      return r && toDelivery(r);
    },
    getEventForDelivery: async (id) => {
      // FOR KEY SHARE: what a delivery's foreign key takes, now rather than at the insert, before the
      // delivery's own lock (the purge's FOR UPDATE ... SKIP LOCKED passes over it; its cascade never
      // waits for a delivery whose event is held).
      const r = await db.selectFrom('outbox_events').selectAll().where('id', '=', id).forKeyShare().executeTakeFirst();
      return r && toEvent(r);
    },
    saveDelivery: async (d) => {
      await db
        .updateTable('webhook_deliveries')
        .set({
          status: d.status,
          attempts: d.attempts,
          next_attempt_at: d.nextAttemptAt,
          locked_until: d.lockedUntil,
          updated_at: d.updatedAt,
        })
        .where('id', '=', d.id)
        .execute();
    },
    claimNext: async (now, leaseUntil, caps) => {
      const perEndpoint = Math.min(caps?.perEndpoint ?? MANY, MANY);
      const perOrganisation = Math.min(caps?.perOrganisation ?? MANY, MANY);
      const { rows } = await sql<Selectable<DB['webhook_deliveries']>>`
        select d.* from webhook_deliveries d
        join webhook_endpoints e on e.id = d.endpoint_id
        left join webhook_turns t on t.organisation_id = d.organisation_id
        where d.status = 'pending' and d.next_attempt_at <= ${now}
          and (d.locked_until is null or d.locked_until <= ${now})
          and not exists (
            select 1 from webhook_deliveries p
            where p.endpoint_id = d.endpoint_id and p.ordering_key = d.ordering_key and p.seq < d.seq and p.status = 'pending')
          and (select count(*) from webhook_deliveries l
               where l.organisation_id = d.organisation_id and l.endpoint_id = d.endpoint_id
                 and l.status = 'pending' and l.locked_until > ${now}) < ${perEndpoint}
          and (select count(*) from webhook_deliveries l
               where l.organisation_id = d.organisation_id and l.status = 'pending' and l.locked_until > ${now}) < ${perOrganisation}
        order by coalesce(t.served_turn, 0), e.served_turn, d.seq
        limit 1
        for update of d skip locked`.execute(db);
      const r = rows[0];
      if (!r) return undefined;
      await db.updateTable('webhook_deliveries').set({ locked_until: leaseUntil }).where('id', '=', r.id).execute();
      // The next turn goes to whoever was served longest ago: this endpoint and organisation go to the back.
      const { rows: turn } = await sql<{ turn: number }>`select nextval('webhook_turns_seq')::int8 as turn`.execute(db);
      await db.updateTable('webhook_endpoints').set({ served_turn: turn[0].turn }).where('id', '=', r.endpoint_id).execute();
      await db
        .insertInto('webhook_turns')
        .values({ organisation_id: r.organisation_id, served_turn: turn[0].turn })
        .onConflict((oc) => oc.column('organisation_id').doUpdateSet({ served_turn: turn[0].turn }))
        .execute();
      return { ...toDelivery(r), lockedUntil: leaseUntil };
    },
    getDelivery: async (id) => {
      const r = await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toDelivery(r);
    },
    pageDeliveries: async (t, q) => {
      const page = await keysetPage(
        () => {
          const base = db
            .selectFrom('webhook_deliveries as d')
            .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
            .selectAll('d')
            .where('e.organisation_id', '=', t.organisationId)
            .where('e.is_test', '=', t.isTest);
          const ofEvent = q.eventId ? base.where('d.event_id', '=', q.eventId) : base;
          return q.endpointId ? ofEvent.where('d.endpoint_id', '=', q.endpointId) : ofEvent;
        },
        'd',
        q,
      );
      return { ...page, items: page.items.map(toDelivery) };
    },
    pageTenantAttempts: async (t, q) => {
      const page = await keysetPage(
        () => {
          const base = db
            .selectFrom('webhook_attempts as a')
            .innerJoin('webhook_endpoints as e', 'e.id', 'a.endpoint_id')
            .selectAll('a')
            .select(
              sql<number>`(select count(*)::int from webhook_attempts b
                where b.delivery_id = a.delivery_id and (b.created_at, b.id) <= (a.created_at, a.id))`.as('number'),
            )
            .where('e.organisation_id', '=', t.organisationId)
            .where('e.is_test', '=', t.isTest);
          return q.deliveryId ? base.where('a.delivery_id', '=', q.deliveryId) : base;
        },
        'a',
        q,
      );
      return { ...page, items: page.items.map((r) => ({ ...toAttempt(r), number: Number(r.number) })) };
    },
    addAttempt: async (a) => {
      await db
        .insertInto('webhook_attempts')
        .values({
          id: a.id,
          delivery_id: a.deliveryId,
          endpoint_id: a.endpointId,
          event_id: a.eventId,
          response_status: a.responseStatus,
          response_body: a.responseBody,
          duration_ms: a.durationMs,
          created_at: a.createdAt,
        })
        .execute();
    },
    pageAttempts: async (endpointId, q) => {
      const page = await keysetPage(
        () => db.selectFrom('webhook_attempts').selectAll().where('endpoint_id', '=', endpointId),
        'webhook_attempts',
        q,
      );
      return { ...page, items: page.items.map(toAttempt) };
    },
    succeededSince: async (endpointId, since) => {
      // One probe of the partial index webhook_attempts_succeeded (its predicate written as the index's).
      const r = await db
        .selectNoFrom((eb) =>
          eb
            .exists(
              eb
                .selectFrom('webhook_attempts')
                .select('id')
                .where('endpoint_id', '=', endpointId)
                .where('created_at', '>=', since)
                .where(sql<boolean>`response_status between 200 and 299`),
            )
            .as('reached'),
        )
        .executeTakeFirstOrThrow();
      return r.reached === true;
    },
    countPending: async () => {
      const r = await db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', '=', 'pending')
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },
  };
}
