import type { WebhookEventRepository } from '../../ports';
import type { Tables } from './tables';

export function webhookEventRepository(db: Tables): WebhookEventRepository {
  return {
    record: async (provider, eventId, at) => {
      const key = `${provider}:${eventId}`;
      if (db.webhookEvents.has(key)) return false;
      db.webhookEvents.set(key, at);
      return true;
    },
  };
}
