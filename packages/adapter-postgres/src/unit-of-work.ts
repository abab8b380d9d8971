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
  if (isUnavailable(e))
    return new DomainError(ErrorCodes.DATABASE_UNAVAILABLE, 'the database is unavailable; nothing was changed, retry later');
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

/** Connection codes of Node's sockets that mean "the server cannot be reached". */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Whether the error says the database cannot be reached or is going away (an outage, a restart, a
 * failover), as opposed to refusing this statement: sockets that fail, pg's own "terminated" and
 * "timeout" errors, and PostgreSQL's connection-exception (08) and shutdown (57P0x) classes. Such
 * a request changed nothing it can see committed (a transaction whose COMMIT was never answered is
 * the one exception, and idempotency keys exist for it).
 */
export function isUnavailable(e: unknown): boolean {
  const err = e as { code?: unknown; message?: unknown } | undefined;
  const code = typeof err?.code === 'string' ? err.code : '';
  if (SOCKET_CODES.has(code) || code.startsWith('08') || /^57P0[1-3]$/.test(code)) return true;
  const message = typeof err?.message === 'string' ? err.message : '';
  return /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended)/.test(
    message,
  );
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
