import type { BillingDocumentRepository } from '../../ports';
import { type Tables, copy, values } from './tables';

export function billingDocumentRepository(db: Tables): BillingDocumentRepository {
  return {
    // Newest first; the map's insertion order breaks ties, like the SQL adapter's sequence.
    list: async (sid, kind) =>
      values(db.billingDocuments)
        .filter((d) => d.subscriptionId === sid && d.kind === kind)
        .reverse()
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime()),
    save: async (d) => void db.billingDocuments.set(d.id, copy(d)),
  };
}
