import type { Kysely } from 'kysely';
import type { Repositories, UnitOfWork } from '@tollgate/core';
import type { Database } from './schema';
import { repositories } from './repositories';
import type { AnyDb } from './sql-helpers';

/** Each unit of work is one database transaction (READ COMMITTED plus explicit row locks). */
export class PostgresUnitOfWork implements UnitOfWork {
  constructor(private readonly db: Kysely<Database>) {}

  run<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => work(repositories(trx as unknown as AnyDb)));
  }

  read<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    return work(repositories(this.db as unknown as AnyDb));
  }
}
