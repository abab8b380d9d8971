import { anySealedSecret, pingDatabase, type DatabaseHandle } from '@tollgate/adapter-postgres';
import { ConfigError } from './config';
import { startFailure } from './start-failure';

/**
 * Start-up refuses a configuration that would start "ready" and then fail every request: a
 * `TOLLGATE_SECRET` that does not open the secrets this database holds (every check would answer
 * 500), and a `DATABASE_READ_URL` that does not answer (every check would answer 503). Each is one
 * line naming its variable (docs/configuration.md).
 */
export async function assertSecretOpensDatabase(database: DatabaseHandle, cipher: { open(sealed: string): Buffer }): Promise<void> {
  const sealed = await anySealedSecret(database.db);
  if (sealed === undefined) return;
  try {
    cipher.open(sealed);
  } catch {
    throw new ConfigError([
      'TOLLGATE_SECRET does not open the signing keys stored in this database: it is not the secret they were sealed with (set the one this database was created with; docs/runbooks.md)',
    ]);
  }
}

export async function assertReplicaAnswers(replica: DatabaseHandle | undefined): Promise<void> {
  if (!replica) return;
  try {
    await pingDatabase(replica.db);
  } catch (e) {
    const why = startFailure(e)
      .replace(/^cannot start: /, '')
      .replace(/; check DATABASE_URL.*$/, '');
    throw new ConfigError([`DATABASE_READ_URL: the read replica does not answer: ${why}`]);
  }
}
