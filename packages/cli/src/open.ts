import { createRuntime, loadConfig, redactDatabaseUrl, type Config, type Runtime } from '@tollgate/runtime';

/**
 * Opens the runtime a command runs on, and says on stderr which database that is (stdout stays the
 * command's output, JSON or keys): a PostgreSQL server by its URL (password masked), or the
 * embedded database's directory, plainly marked when it was made just now. A command run without
 * the server's DATABASE_URL would otherwise write to a fresh `./data` and look like it worked.
 */
export async function openRuntime(argv: string[], env: NodeJS.ProcessEnv, err: (line: string) => void): Promise<Runtime> {
  // A command answers no checks: no in-memory index of every license to read at start.
  const config = { ...loadConfig(env), checkIndexMaxLicenses: 0 };
  // Whether the embedded database is new is told by the runtime, which looks under the data
  // directory's lock (a look before it could race another process making it).
  const runtime = await createRuntime(config, {
    skipMigrations: argv[0] === 'migrate',
    // A command reads nothing from the read replica: an outage of it stops no operator.
    skipReplicaCheck: true,
    lockAs: ['tollgate', ...argv.filter((a) => !a.startsWith('-')).slice(0, 2)].join(' '),
    logger: { info: () => undefined, error: (m: string) => err(`tollgate: ${m}`) },
  });
  err(`tollgate: ${databaseLine(config, runtime.createdEmbeddedDatabase)}`);
  return runtime;
}

/** The one line naming the database a command used. */
export function databaseLine(config: Pick<Config, 'databaseUrl' | 'dataDir'>, fresh: boolean): string {
  if (config.databaseUrl) return `database: PostgreSQL ${redactDatabaseUrl(config.databaseUrl)}`;
  if (fresh)
    return `database: NEW embedded database created in ${config.dataDir}: DATABASE_URL is not set, so this is no existing server's database`;
  return `database: embedded PGlite in ${config.dataDir} (DATABASE_URL is not set)`;
}
