import type { SigningAlgorithm, SigningKey, SigningKeyRepository, Tenant } from '@tollgate/core';
import type { Selectable } from 'kysely';
import type { SigningKeys } from '../schema';
import { upsert, type Db } from './db';

/**
 * The table of a mode's keys: live keys in `signing_keys`, test keys in `test_signing_keys`
 * (migration 2026-11-29T10-00), where an instance of the previous version, whose query names no
 * mode, never sees them.
 */
const tableOf = (isTest: boolean) => (isTest ? 'test_signing_keys' : 'signing_keys');

export function signingKeyRepository(db: Db): SigningKeyRepository {
  return {
    listActive: async (tenant: Tenant, algorithm) =>
      (
        await db
          .selectFrom(tableOf(tenant.isTest))
          .selectAll()
          .where('organisation_id', '=', tenant.organisationId)
          .where('algorithm', '=', algorithm)
          .where('retired_at', 'is', null)
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .execute()
      ).map((r: Selectable<SigningKeys>): SigningKey => ({
        id: r.id,
        organisationId: r.organisation_id,
        isTest: tenant.isTest,
        algorithm: r.algorithm as SigningAlgorithm,
        publicKey: r.public_key,
        secretCiphertext: r.secret_ciphertext,
        createdAt: r.created_at,
        retiredAt: r.retired_at,
      })),
    save: (k) =>
      upsert(db, tableOf(k.isTest), [
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
