import type { BillingDocumentKind, BillingDocumentRepository } from '@tollgate/core';
import { json, upsert, type Db } from './db';

export function billingDocumentRepository(db: Db): BillingDocumentRepository {
  return {
    list: async (sid, kind) =>
      (
        await db
          .selectFrom('billing_documents')
          .selectAll()
          .where('subscription_id', '=', sid)
          .where('kind', '=', kind)
          .orderBy('created_at', 'desc')
          .orderBy('seq', 'desc')
          .execute()
      ).map((r) => ({
        id: r.id,
        organisationId: r.organisation_id,
        subscriptionId: r.subscription_id,
        kind: r.kind as BillingDocumentKind,
        body: r.body as Record<string, unknown>,
        createdAt: r.created_at,
      })),
    save: (d) =>
      upsert(db, 'billing_documents', [
        {
          id: d.id,
          organisation_id: d.organisationId,
          subscription_id: d.subscriptionId,
          kind: d.kind,
          body: json(d.body),
          created_at: d.createdAt,
        },
      ]),
  };
}
