import type { ApiKeyRepository, CurrencyRepository, OrganisationRepository, PaymentIntegrationRepository } from '../../ports';
import { type Changed, type Tables, byCreated, copy, inTenant, values } from './tables';

export function organisationRepository(db: Tables): OrganisationRepository {
  return {
    get: async (id) => copy(db.organisations.get(id)),
    getForUpdate: async (id) => copy(db.organisations.get(id)),
    findByName: async (name) => values(db.organisations).find((o) => o.name === name),
    save: async (org) => void db.organisations.set(org.id, copy(org)),
    any: async () => db.organisations.size > 0,
    list: async () => values(db.organisations).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
  };
}

export function apiKeyRepository(db: Tables, changed: Changed): ApiKeyRepository {
  return {
    findByHash: async (h) => values(db.apiKeys).find((k) => k.keyHash === h),
    get: async (id) => copy(db.apiKeys.get(id)),
    listByOrganisation: async (orgId) =>
      values(db.apiKeys)
        .filter((k) => k.organisationId === orgId)
        .sort(byCreated)
        .reverse(),
    save: async (k) => {
      if (db.apiKeys.has(k.id)) changed({ kind: 'apiKey', keyHash: k.keyHash });
      db.apiKeys.set(k.id, copy(k));
    },
    liveAmong: async (hashes) => {
      const wanted = new Set(hashes);
      return values(db.apiKeys)
        .filter((k) => wanted.has(k.keyHash) && !k.revokedAt)
        .map((k) => k.keyHash);
    },
  };
}

export function paymentIntegrationRepository(db: Tables): PaymentIntegrationRepository {
  return {
    get: async (id) => copy(db.paymentIntegrations.get(id)),
    findByName: async (t, name) => values(db.paymentIntegrations).find((p) => inTenant(p, t) && p.integrationName === name),
    save: async (p) => void db.paymentIntegrations.set(p.id, copy(p)),
  };
}

export function currencyRepository(db: Tables): CurrencyRepository {
  return {
    list: async () => values(db.currencies).sort((a, b) => (a.shortName < b.shortName ? -1 : 1)),
    save: async (c) => void db.currencies.set(c.id, copy(c)),
  };
}
