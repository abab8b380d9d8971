import type { WebhookEventRepository } from '@tollgate/core';
import type { Db } from './db';

export function webhookEventRepository(db: Db): WebhookEventRepository {
  return {
    record: async (provider, eventId, at) => {
      const r = await db
        .insertInto('webhook_events')
        .values({ provider, event_id: eventId, received_at: at })
        .onConflict((oc) => oc.columns(['provider', 'event_id']).doNothing())
        .executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
    },
  };
}
