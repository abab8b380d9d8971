import type { SigningKeyRepository } from '../../ports';
import { type Changed, type Tables, byCreated, copy, values } from './tables';

export function signingKeyRepository(db: Tables, changed: Changed): SigningKeyRepository {
  return {
    listActive: async (tenant, algorithm) =>
      values(db.signingKeys)
        .filter(
          (k) => k.organisationId === tenant.organisationId && k.isTest === tenant.isTest && k.algorithm === algorithm && !k.retiredAt,
        )
        .sort(byCreated)
        .reverse(),
    save: async (k) => {
      changed({ kind: 'signingKey', organisationId: k.organisationId });
      db.signingKeys.set(k.id, copy(k));
    },
  };
}
