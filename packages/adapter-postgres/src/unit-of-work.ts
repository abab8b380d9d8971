import type { Kysely } from 'kysely';
import { DomainError, ErrorCodes, type Repositories, type UnitOfWork } from '@tollgate/core';
import type { DB } from './schema';
import { repositories } from './repositories';

/**
 * PostgreSQL's refusals that a racing or odd request can cause, as domain errors: a row this change
 * refers to was removed meanwhile (a product deleted while its plans are written), a unique value
 * taken meanwhile, a serialization failure, or text PostgreSQL cannot store. The database's own
 * message never reaches a client (it names tables and values); it goes to the log with the 500 of
 * anything else.
 */
export function domainErrorOf(e: unknown): DomainError | undefined {
  const code = (e as { code?: unknown })?.code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return undefined;
  switch (code) {
    case '23503': // foreign_key_violation
      return new DomainError(ErrorCodes.CONFLICT, 'a record this change refers to was changed or removed meanwhile; reload and retry');
    case '23505': // unique_violation
      return new DomainError(ErrorCodes.CONFLICT, 'a record with the same identity was written meanwhile; reload and retry');
    case '40001': // serialization_failure
    case '40P01': // deadlock_detected
      return new DomainError(ErrorCodes.CONFLICT, 'the change collided with another one; retry');
    case '22P02': // invalid_text_representation
    case '22P05': // untranslatable_character
    case '22021': // character_not_in_repertoire
    case '22001': // string_data_right_truncation
    case '22003': // numeric_value_out_of_range
      return new DomainError(ErrorCodes.VALIDATION_FAILED, 'a value of the request cannot be stored', [
        { property: 'body', error: 'has a value that cannot be stored' },
      ]);
    default:
      return undefined;
  }
}

const translated = async <T>(work: () => Promise<T>): Promise<T> => {
  try {
    return await work();
  } catch (e) {
    throw domainErrorOf(e) ?? e;
  }
};

/** Each unit of work is one database transaction (READ COMMITTED plus explicit row locks). */
export class PostgresUnitOfWork implements UnitOfWork {
  constructor(private readonly db: Kysely<DB>) {}

  run<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    return translated(() => this.db.transaction().execute((trx) => work(repositories(trx))));
  }

  read<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    return translated(() => work(repositories(this.db)));
  }
}
