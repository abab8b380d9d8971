export {
  anySealedSecret,
  openDatabase,
  migrateToLatest,
  pendingMigrations,
  pingDatabase,
  type DatabaseHandle,
  type DatabaseOptions,
} from './database';
export { PostgresUnitOfWork } from './unit-of-work';
export { PGlitePool } from './pglite-pool';
export type { DB as Database } from './schema';
export { createTestDatabase, type TestDatabase } from './test-database';
export { PostgresChangeFeed, PGliteChangeFeed, parseChange, CHANGE_CHANNEL, type ChangeFeedTiming } from './change-feed';
export { FaultProxy, type FaultProxyFaults } from './fault-proxy';
