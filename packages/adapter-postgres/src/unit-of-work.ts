import type { Kysely } from 'kysely';
import { DomainError, ErrorCodes, MAY_HAVE_BEEN_APPLIED, type Repositories, type UnitOfWork } from '@tollgate/core';
import type { DB } from './schema';
import { repositories } from './repositories';

/**
 * PostgreSQL's refusals that a racing or odd request can cause, as domain errors: a row this change
 * refers to was removed meanwhile (a product deleted while its plans are written), a unique value
 * taken meanwhile, a serialization failure, or text PostgreSQL cannot store. The database's own
 * message never reaches a client (it names tables and values); it goes to the log with the 500 of
 * anything else.
 *
 * An outage's message says "nothing was changed" only where that is known: a transaction that
 * failed before its COMMIT was sent (`writing`). A read cannot know what the request it serves
 * committed before it (a write's answer read afterwards), so it claims nothing.
 */
export function domainErrorOf(e: unknown, writing = true): DomainError | undefined {
  const changed = writing ? 'nothing was changed, ' : '';
  if (isPoolExhausted(e)) return new DomainError(ErrorCodes.BUSY, `every database connection stayed in use; ${changed}retry shortly`);
  if (isUnavailable(e)) return new DomainError(ErrorCodes.DATABASE_UNAVAILABLE, `the database is unavailable; ${changed}retry later`);
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
 * Failures of taking a connection from the pool (`openDatabase` marks them): whatever the server
 * answered while connecting (it is shutting down or starting, it takes no more clients, the
 * database does not accept connections or is gone, the login is refused), the request could not
 * reach the database at all, so nothing of it ran: an outage, never a 500.
 */
const connectFailures = new WeakSet<object>();

/** Marks an error as thrown while connecting (acquiring a pool connection); returns it. */
export function markConnectFailure<E>(e: E): E {
  if (typeof e === 'object' && e !== null) connectFailures.add(e);
  return e;
}

/**
 * PostgreSQL's codes that mean the connection is gone or refused, on an error that was not marked
 * at connect: connection_exception (08000), connection_does_not_exist (08003),
 * connection_failure (08006), too_many_connections (53300, max_connections or a role's CONNECTION
 * LIMIT), and the shutdown class (57P01 admin_shutdown, 57P02 crash_shutdown, 57P03
 * cannot_connect_now, 57P04 database_dropped, 57P05 idle_session_timeout: the server ends the
 * session). Not the rest of class 08: 08P01 (protocol_violation, unless FATAL: see isUnavailable) is what the server answers a
 * client's bug (a Bind with more parameters than it can count) on a working connection, and a
 * bug is a 500, never a retried 503 that starts the checks' answers from memory; 08001 and 08004
 * come only while connecting, which is marked.
 * 57014 (a statement canceled, by its timeout) is a refusal of that statement, not an outage.
 */
const OUTAGE_CODES = /^(0800[036]|57P0[1-5]|53300)$/;

/**
 * Whether the error says the database cannot be reached or is going away (an outage, a restart, a
 * failover), as opposed to refusing this statement: any failure while connecting, sockets that
 * fail, pg's own "terminated" and "timeout" errors, PostgreSQL's lost-connection, shutdown and
 * connection-refusal codes (OUTAGE_CODES), and object_not_in_prerequisite_state
 * (55000) when it is the refusal of a database that does not accept connections (ALLOW_CONNECTIONS
 * false; 55000 otherwise refuses a statement). Such a request changed nothing it can see committed
 * (a transaction whose COMMIT was never answered is the one exception: `PostgresUnitOfWork.run`
 * answers it as `commitInDoubt`).
 */
export function isUnavailable(e: unknown): boolean {
  if (typeof e === 'object' && e !== null && connectFailures.has(e) && !isPoolExhausted(e)) return true;
  const err = e as { code?: unknown; message?: unknown } | undefined;
  const code = typeof err?.code === 'string' ? err.code : '';
  const message = typeof err?.message === 'string' ? err.message : '';
  if (SOCKET_CODES.has(code) || OUTAGE_CODES.test(code)) return true;
  if (code === '55000' && /not (currently )?accepting connections/.test(message)) return true;
  // A protocol violation the server (or a pooler: PgBouncer's "server conn crashed?",
  // "query_wait_timeout") ends the session with is the connection gone; a client's bug (a Bind with
  // too many parameters) comes back as an ERROR on a connection that still works.
  if (code === '08P01' && (e as { severity?: unknown }).severity === 'FATAL') return true;
  return /^(Connection terminated|Client has encountered a connection error|Client was closed|Connection ended)/.test(message);
}

/**
 * pg-pool's "timeout exceeded when trying to connect" is a request that waited too long in the
 * pool's queue (every connection checked out), not an unreachable server: a connection attempt
 * that times out fails as "Connection terminated due to connection timeout" instead. A healthy,
 * crowded database is BUSY, never reported down (nor does it start the checks' outage grace).
 */
export function isPoolExhausted(e: unknown): boolean {
  const message = (e as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' && message.startsWith('timeout exceeded when trying to connect');
}

/**
 * A transaction whose COMMIT was sent but never answered (the connection broke, the server went
 * away): PostgreSQL may have made it durable before it could say so. The outage's usual "nothing
 * was changed" would be a lie that invites a duplicate, so the client is told the truth: it may
 * have been applied, and how to find out. (A transaction that only read has nothing to apply; the
 * message holds for it too.)
 */
export const commitInDoubt = () =>
  new DomainError(
    ErrorCodes.DATABASE_UNAVAILABLE,
    `the database became unreachable while this change was being committed, so it ${MAY_HAVE_BEEN_APPLIED}: ` +
      'read it back before writing it again (or retry with the same idempotency-key, on the catalog API)',
  );

/** pg refused to send on a connection that had already failed or closed: the statement never left. */
const neverSent = (e: unknown) =>
  /^Client (has encountered a connection error|was closed) and is not queryable/.test((e as Error)?.message ?? '');

const translated = async <T>(work: () => Promise<T>, writing: boolean): Promise<T> => {
  try {
    return await work();
  } catch (e) {
    throw domainErrorOf(e, writing) ?? e;
  }
};

/**
 * Each unit of work is one database transaction, READ COMMITTED plus explicit row locks. The level
 * is named on every BEGIN, whatever the server's or role's `default_transaction_isolation`: the
 * writers count on each statement seeing what committed before it (a find-or-create's read after
 * its insert waited, a seat writer's read after its lock was granted); under REPEATABLE READ those
 * would fail as serialization errors.
 */
export class PostgresUnitOfWork implements UnitOfWork {
  constructor(private readonly db: Kysely<DB>) {}

  async run<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    const trx = await translated(() => this.db.startTransaction().setIsolationLevel('read committed').execute(), true);
    let result: T;
    try {
      result = await work(repositories(trx));
    } catch (e) {
      // Rolled back (or the connection is gone, which rolls it back): nothing of it was committed.
      await trx
        .rollback()
        .execute()
        .catch(() => undefined);
      throw domainErrorOf(e) ?? e;
    }
    try {
      await trx.commit().execute();
      return result;
    } catch (e) {
      await trx
        .rollback()
        .execute()
        .catch(() => undefined);
      // A COMMIT PostgreSQL refused (a deferred constraint) was rolled back and says why; one on a
      // connection already dead was never sent. A connection lost while COMMIT was on its way or
      // being answered leaves it in doubt.
      throw (isUnavailable(e) && !neverSent(e) ? commitInDoubt() : domainErrorOf(e)) ?? e;
    }
  }

  read<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    return translated(() => work(repositories(this.db)), false);
  }
}
