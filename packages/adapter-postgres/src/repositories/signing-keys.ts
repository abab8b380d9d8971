import type { SigningAlgorithm, SigningKeyRepository } from '@tollgate/core';
import { upsert, type Db } from './db';

export function signingKeyRepository(db: Db): SigningKeyRepository {
  return {
    listActive: async (tenant, algorithm) =>
      (
        await db
          .selectFrom('signing_keys')
          .selectAll()
          .where('organisation_id', '=', tenant.organisationId)
          .where('is_test', '=', tenant.isTest)
          .where('algorithm', '=', algorithm)
          .where('retired_at', 'is', null)
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .execute()
      ).map((r) => ({
        id: r.id,
        organisationId: r.organisation_id,
        isTest: r.is_test,
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
          is_test: k.isTest,
          algorithm: k.algorithm,
          public_key: k.publicKey,
          secret_ciphertext: k.secretCiphertext,
          created_at: k.createdAt,
          retired_at: k.retiredAt,
        },
      ]),
  };
}
