import type { PGlite } from '@electric-sql/pglite';
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';

/**
 * Presents an embedded PGlite database as the pool kysely's PostgresDialect expects. PGlite is one
 * session, so a connection is lent to one user at a time (a transaction keeps it until release).
 */
export class PGlitePool implements PostgresPool {
  private waiters: (() => void)[] = [];
  private busy = false;
  private readonly client: PostgresPoolClient;

  constructor(private readonly db: PGlite) {
    this.client = {
      query: (async (sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<unknown>> => {
        const result = await this.db.query(sql, parameters as unknown[]);
        const command = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() as PostgresQueryResult<unknown>['command'];
        return { command, rowCount: result.affectedRows ?? result.rows.length, rows: result.rows };
      }) as PostgresPoolClient['query'],
      release: () => this.release(),
    };
  }

  async connect(): Promise<PostgresPoolClient> {
    if (this.busy) await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.busy = true;
    return this.client;
  }

  private release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.busy = false;
  }

  async end(): Promise<void> {
    await this.db.close();
  }
}
