import type {
  ApiKey,
  ApiKeyRepository,
  Currency,
  CurrencyRepository,
  Organisation,
  OrganisationRepository,
  PaymentIntegration,
  PaymentIntegrationRepository,
  Scope,
} from '@tollgate/core';
import { sql, type Selectable } from 'kysely';
import type { DB } from '../schema';
import { json, tenantOf, upsert, type Db } from './db';

const toOrganisation = (r: Selectable<DB['organisations']>): Organisation => ({ id: r.id, name: r.name, createdAt: r.created_at });

export function organisationRepository(db: Db): OrganisationRepository {
  return {
    get: async (id) => {
      const r = await db.selectFrom('organisations').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toOrganisation(r);
    },
    getForUpdate: async (id) => {
      const r = await db.selectFrom('organisations').selectAll().where('id', '=', id).forNoKeyUpdate().executeTakeFirst();
      return r && toOrganisation(r);
    },
    findByName: async (name) => {
      const r = await db.selectFrom('organisations').selectAll().where('name', '=', name).executeTakeFirst();
      return r && toOrganisation(r);
    },
    save: (o) => upsert(db, 'organisations', [{ id: o.id, name: o.name, created_at: o.createdAt }]),
    any: async () => !!(await db.selectFrom('organisations').select('id').limit(1).executeTakeFirst()),
    list: async () => (await db.selectFrom('organisations').selectAll().orderBy('name').execute()).map(toOrganisation),
  };
}

const toApiKey = (r: Selectable<DB['api_keys']>): ApiKey => ({
  id: r.id,
  organisationId: r.organisation_id,
  name: r.name,
  keyHash: r.key_hash,
  prefix: r.prefix,
  scopes: r.scopes as Scope[],
  isTest: r.is_test,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});

export function apiKeyRepository(db: Db): ApiKeyRepository {
  const one = async (column: 'key_hash' | 'id', value: string) => {
    const r = await db.selectFrom('api_keys').selectAll().where(column, '=', value).executeTakeFirst();
    return r && toApiKey(r);
  };
  return {
    findByHash: (h) => one('key_hash', h),
    get: (id) => one('id', id),
    listByOrganisation: async (orgId) =>
      (
        await db
          .selectFrom('api_keys')
          .selectAll()
          .where('organisation_id', '=', orgId)
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .execute()
      ).map(toApiKey),
    save: (k) =>
      upsert(db, 'api_keys', [
        {
          id: k.id,
          organisation_id: k.organisationId,
          name: k.name,
          key_hash: k.keyHash,
          prefix: k.prefix,
          scopes: json(k.scopes),
          is_test: k.isTest,
          created_at: k.createdAt,
          revoked_at: k.revokedAt,
        },
      ]),
    liveAmong: async (hashes) =>
      hashes.length === 0
        ? []
        : (
            await db
              .selectFrom('api_keys')
              .select('key_hash')
              .where('key_hash', '=', sql<string>`any(${hashes}::text[])`)
              .where('revoked_at', 'is', null)
              .execute()
          ).map((r) => r.key_hash),
  };
}

const toIntegration = (r: Selectable<DB['payment_integrations']>): PaymentIntegration => ({
  id: r.id,
  organisationId: r.organisation_id,
  isTest: r.is_test,
  integrationName: r.integration_name,
  accountName: r.account_name,
  accountId: r.account_id,
  accountData: r.account_data as Record<string, unknown>,
  updatedAt: r.updated_at,
});

export function paymentIntegrationRepository(db: Db): PaymentIntegrationRepository {
  return {
    get: async (id) => {
      const r = await db.selectFrom('payment_integrations').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toIntegration(r);
    },
    findByName: async (t, name) => {
      const r = await db
        .selectFrom('payment_integrations')
        .selectAll()
        .where((eb) => eb.and(tenantOf(t)))
        .where('integration_name', '=', name)
        .executeTakeFirst();
      return r && toIntegration(r);
    },
    save: (p) =>
      upsert(db, 'payment_integrations', [
        {
          id: p.id,
          organisation_id: p.organisationId,
          is_test: p.isTest,
          integration_name: p.integrationName,
          account_name: p.accountName,
          account_id: p.accountId,
          account_data: json(p.accountData),
          updated_at: p.updatedAt,
        },
      ]),
  };
}

export function currencyRepository(db: Db): CurrencyRepository {
  return {
    list: async () =>
      (await db.selectFrom('currencies').selectAll().orderBy('short_name').execute()).map((r): Currency => ({
        id: r.id,
        shortName: r.short_name,
        longName: r.long_name,
        symbol: r.symbol,
      })),
    save: (c) => upsert(db, 'currencies', [{ id: c.id, short_name: c.shortName, long_name: c.longName, symbol: c.symbol }]),
  };
}
