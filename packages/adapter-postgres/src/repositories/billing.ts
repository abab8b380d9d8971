import { DomainError, ErrorCodes } from '@tollgate/core';
import type {
  BillingDocumentKind,
  BillingDocumentRepository,
  CheckoutOptions,
  CheckoutSession,
  CheckoutSessionRepository,
  Customer,
  CustomerRepository,
  IdempotencyRepository,
  IdempotencyScope,
  SigningAlgorithm,
  SigningKeyRepository,
  WebhookEventRepository,
} from '@tollgate/core';
import { sql, type Selectable } from 'kysely';
import type { DB } from '../schema';
import { json, tenantOf, upsert, type Db } from './db';

const toCustomer = (r: Selectable<DB['customers']>): Customer => ({
  id: r.id,
  organisationId: r.organisation_id,
  isTest: r.is_test,
  value: r.value,
  emailAddress: r.email_address,
  paymentCustomerId: r.payment_customer_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export function customerRepository(db: Db): CustomerRepository {
  return {
    get: async (id) => {
      const r = await db.selectFrom('customers').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toCustomer(r);
    },
    findByValue: async (t, v) => {
      const r = await db
        .selectFrom('customers')
        .selectAll()
        .where((eb) => eb.and(tenantOf(t)))
        .where('value', '=', v)
        .executeTakeFirst();
      return r && toCustomer(r);
    },
    save: (c) =>
      upsert(db, 'customers', [
        {
          id: c.id,
          organisation_id: c.organisationId,
          is_test: c.isTest,
          value: c.value,
          email_address: c.emailAddress,
          payment_customer_id: c.paymentCustomerId,
          created_at: c.createdAt,
          updated_at: c.updatedAt,
        },
      ]),
  };
}

const toSession = (r: Selectable<DB['checkout_sessions']>): CheckoutSession => ({
  id: r.id,
  organisationId: r.organisation_id,
  isTest: r.is_test,
  productId: r.product_id,
  planId: r.plan_id,
  granteeId: r.grantee_id,
  member: r.member,
  successUrl: r.success_url,
  cancelUrl: r.cancel_url,
  options: r.options as unknown as CheckoutOptions,
  provider: r.provider,
  providerSessionId: r.provider_session_id,
  status: r.status as CheckoutSession['status'],
  subscriptionId: r.subscription_id,
  createdAt: r.created_at,
  completedAt: r.completed_at,
});

export function checkoutSessionRepository(db: Db): CheckoutSessionRepository {
  const one = async (id: string, forUpdate: boolean) => {
    const q = db.selectFrom('checkout_sessions').selectAll().where('id', '=', id);
    const r = await (forUpdate ? q.forUpdate() : q).executeTakeFirst();
    return r && toSession(r);
  };
  return {
    get: (id) => one(id, false),
    getForUpdate: (id) => one(id, true),
    save: (cs) =>
      upsert(db, 'checkout_sessions', [
        {
          id: cs.id,
          organisation_id: cs.organisationId,
          is_test: cs.isTest,
          product_id: cs.productId,
          plan_id: cs.planId,
          grantee_id: cs.granteeId,
          member: cs.member,
          success_url: cs.successUrl,
          cancel_url: cs.cancelUrl,
          options: json(cs.options),
          provider: cs.provider,
          provider_session_id: cs.providerSessionId,
          status: cs.status,
          subscription_id: cs.subscriptionId,
          created_at: cs.createdAt,
          completed_at: cs.completedAt,
        },
      ]),
  };
}

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

export function signingKeyRepository(db: Db): SigningKeyRepository {
  return {
    listActive: async (orgId, algorithm) =>
      (
        await db
          .selectFrom('signing_keys')
          .selectAll()
          .where('organisation_id', '=', orgId)
          .where('algorithm', '=', algorithm)
          .where('retired_at', 'is', null)
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .execute()
      ).map((r) => ({
        id: r.id,
        organisationId: r.organisation_id,
        algorithm: r.algorithm as SigningAlgorithm,
        publicKey: r.public_key,
        secretCiphertext: r.secret_ciphertext,
        createdAt: r.created_at,
        retiredAt: r.retired_at,
      })),
    save: (k) =>
      upsert(db, 'signing_keys', [
        {
          id: k.id,
          organisation_id: k.organisationId,
          algorithm: k.algorithm,
          public_key: k.publicKey,
          secret_ciphertext: k.secretCiphertext,
          created_at: k.createdAt,
          retired_at: k.retiredAt,
        },
      ]),
  };
}

export function idempotencyRepository(db: Db): IdempotencyRepository {
  const inScope = (s: IdempotencyScope) => ({ organisation_id: s.organisationId, is_test: s.isTest, route: s.route, key: s.key });
  return {
    find: async (scope, since) => {
      const r = await db
        .selectFrom('idempotency_keys')
        .selectAll()
        .where((eb) => eb.and(inScope(scope)))
        .where('created_at', '>=', since)
        .executeTakeFirst();
      return (
        r && {
          organisationId: r.organisation_id,
          isTest: r.is_test,
          route: r.route,
          key: r.key,
          fingerprint: r.fingerprint,
          status: r.status,
          body: r.body,
          createdAt: r.created_at,
        }
      );
    },
    // Insert first: the primary key decides which request runs. A claim of a transaction still
    // running makes this insert wait (PostgreSQL's unique check) until that one commits (the key
    // is held, with its answer) or rolls back (the key is free); an expired record gives way.
    claim: async (rec, expiredBefore, waitMs) => {
      await sql`select set_config('lock_timeout', ${`${Math.max(1, Math.round(waitMs))}ms`}, true)`.execute(db);
      let r;
      try {
        r = await db
          .insertInto('idempotency_keys')
          .values({
            organisation_id: rec.organisationId,
            is_test: rec.isTest,
            route: rec.route,
            key: rec.key,
            fingerprint: rec.fingerprint,
            status: null,
            body: null,
            created_at: rec.createdAt,
          })
          .onConflict((oc) =>
            oc
              .columns(['organisation_id', 'is_test', 'route', 'key'])
              .doUpdateSet({
                fingerprint: (eb) => eb.ref('excluded.fingerprint'),
                status: null,
                body: null,
                created_at: (eb) => eb.ref('excluded.created_at'),
              })
              .where((eb) => eb.or([eb('idempotency_keys.created_at', '<', expiredBefore), eb('idempotency_keys.status', 'is', null)])),
          )
          .executeTakeFirst();
      } catch (e) {
        if ((e as { code?: string }).code === '55P03')
          throw new DomainError(ErrorCodes.IDEMPOTENCY_KEY_IN_USE, 'a request with this idempotency-key is still in progress; retry later');
        throw e;
      }
      // The work that follows takes its row locks with the server's usual patience.
      await sql`select set_config('lock_timeout', '0', true)`.execute(db);
      return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
    },
    complete: async (scope, status, body) => {
      await db
        .updateTable('idempotency_keys')
        .set({ status, body: body === undefined ? null : json(body) })
        .where((eb) => eb.and(inScope(scope)))
        .execute();
    },
    purge: async (before) =>
      Number((await db.deleteFrom('idempotency_keys').where('created_at', '<', before).executeTakeFirst()).numDeletedRows ?? 0),
  };
}

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
