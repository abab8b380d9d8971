import fs from 'node:fs';
import path from 'node:path';
import { dataDirError, ensureDataDir, sleepSync } from './config';

/** Who holds the embedded database: written into the lock file, shown to whoever is refused. */
export interface LockHolder {
  pid: number;
  command: string;
  since: string;
}

/** The embedded database is open in another process; the message names it. */
export class DataDirLockedError extends Error {
  readonly code = 'DATA_DIR_LOCKED';
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
  ) {
    super(
      `the embedded database in ${dataDir} is in use by process ${holder.pid} (${holder.command}, since ${holder.since}); ` +
        'stop it first, or point DATABASE_URL at a PostgreSQL server to share one database between processes',
    );
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

const readHolder = (file: string): LockHolder | undefined => {
  try {
    const h = JSON.parse(fs.readFileSync(file, 'utf8')) as LockHolder;
    return Number.isSafeInteger(h.pid) ? h : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Takes the embedded database's exclusive lock (`<dataDir>/tollgate.lock`): PGlite is a single
 * process database, and two processes on one data directory neither see each other's writes nor
 * keep the files whole. The lock file names its holder; a holder that no longer runs (killed, the
 * machine restarted) leaves a stale lock that the next process takes over. Returns the release.
 */
export function lockDataDir(dataDir: string, command = describeCommand()): () => void {
  ensureDataDir(dataDir);
  const file = path.join(dataDir, 'tollgate.lock');
  const me: LockHolder = { pid: process.pid, command, since: new Date().toISOString() };
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, JSON.stringify(me), { flag: 'wx', mode: 0o600 });
      break;
    } catch (e) {
      // A directory this user may not write to (or a full disk): one line naming DATA_DIR.
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw dataDirError(dataDir, `cannot write ${file}`, e);
      const holder = readHolder(file);
      // A lock being written this instant reads empty: look again before judging it stale.
      if (!holder && attempt < 3) {
        sleepSync(20);
        continue;
      }
      if (holder && holder.pid !== process.pid && alive(holder.pid)) throw new DataDirLockedError(dataDir, holder);
      if (attempt >= 3) throw new DataDirLockedError(dataDir, holder ?? { pid: 0, command: 'unknown', since: 'unknown' });
      // Stale: its process is gone. Renaming it away first means only one taker removes it.
      const stale = `${file}.${process.pid}.stale`;
      try {
        fs.renameSync(file, stale);
        const moved = readHolder(stale);
        // Another process took the stale lock over between our read and the rename: give it back.
        if (moved && moved.pid !== holder?.pid && alive(moved.pid)) fs.renameSync(stale, file);
        else fs.rmSync(stale, { force: true });
      } catch {
        // Another process removed it first; the next attempt sees its lock.
      }
    }
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.removeListener('exit', release);
    if (readHolder(file)?.pid === process.pid) fs.rmSync(file, { force: true });
  };
  process.on('exit', release);
  return release;
}

/** How the holder is named to a refused process: the script and its arguments, e.g. `tollgate keys create`. */
function describeCommand(): string {
  const [, script = 'node', ...args] = process.argv;
  const name = /tollgate|cli/.test(script) ? 'tollgate' : path.relative(process.cwd(), script) || script;
  return [name, ...args.filter((a) => !a.startsWith('-')).slice(0, 2)].join(' ');
}
