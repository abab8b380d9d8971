import { ConfigError } from './config';
import { DataDirLockedError } from './data-lock';

type SystemError = Error & { code?: string; port?: number; address?: string; errors?: unknown[]; syscall?: string; path?: string };

/** The system error under a wrapper (a connection to `localhost` tries each address and fails with them all). */
const root = (e: unknown): SystemError | undefined => {
  // By shape, not `instanceof`: an error made in another realm (a VM context, a worker) is one too.
  if (typeof e !== 'object' || e === null || typeof (e as { message?: unknown }).message !== 'string') return undefined;
  const s = e as SystemError;
  if (!s.code && Array.isArray(s.errors) && s.errors.length) return root(s.errors[0]);
  return s;
};

const UNREACHABLE: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name does not resolve',
  ETIMEDOUT: 'the connection timed out',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ECONNRESET: 'the connection was reset',
};

/** PostgreSQL's own refusals at connection time (SQLSTATE). */
const REFUSED: Record<string, string> = {
  '28P01': 'the password was refused',
  '28000': 'the user may not connect',
  '3D000': 'the database does not exist',
  '57P03': 'the server is starting up or shutting down',
};

/**
 * What a process prints when it cannot start: one clear line per problem, never a stack trace
 * (one line per bad variable of the configuration). `port` names the port a listen failed on.
 */
export function startFailure(e: unknown, context: { port?: number } = {}): string {
  if (e instanceof ConfigError) return e.problems.map((p) => `configuration error: ${p}`).join('\n');
  if (e instanceof DataDirLockedError) return `cannot start: ${e.message}`;
  const s = root(e);
  const code = s?.code ?? '';
  if (s?.syscall === 'listen' && code === 'EADDRINUSE')
    return `cannot start: port ${s.port ?? context.port ?? ''} is in use by another process; stop it or set PORT to a free port`;
  if (s?.syscall === 'listen' && code === 'EACCES')
    return `cannot start: port ${s.port ?? context.port ?? ''} needs privileges this user lacks; set PORT to 1024 or above`;
  if (UNREACHABLE[code]) {
    const where = s?.address ? ` at ${s.address}${s.port ? `:${s.port}` : ''}` : '';
    return `cannot reach the database${where}: ${UNREACHABLE[code]}; check DATABASE_URL and that PostgreSQL is running`;
  }
  if (REFUSED[code]) return `the database refused the connection: ${REFUSED[code]} (${s?.message}); check DATABASE_URL`;
  const message = s?.message ?? String(e);
  return `cannot start: ${message.split('\n').find((l) => l.trim()) ?? 'unknown error'}`;
}
