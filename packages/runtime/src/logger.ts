import pino, { type DestinationStream, type Level } from 'pino';
import type { Logger } from '@tollgate/core';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Field names whose values never reach a log line, wherever they sit in the fields (keys, secrets,
 * card details): pino's redaction censors them before the line is written.
 */
export const LOG_SECRET_FIELDS = [
  'apiKey',
  'key',
  'plaintext',
  'secret',
  'password',
  'token',
  'authorization',
  'cookie',
  'x-api-key',
  'card',
  'cardNumber',
  'cvc',
  'masterSecret',
];
const SECRET = new Set(LOG_SECRET_FIELDS);

/**
 * Whether redaction cannot change these fields' line: no secret-named field at the top and no
 * object value (the wildcard paths reach one and two levels down only through objects). The
 * request lines (`requestId`, `method`, `path`, `status`, `ms`) are such fields: they skip the
 * per-line wildcard redaction, which cost about as much as the check itself (issue 22).
 */
export function redactionFree(fields: Record<string, unknown>): boolean {
  for (const k in fields) {
    if (SECRET.has(k)) return false;
    const v = fields[k];
    if (typeof v === 'object' && v !== null) return false;
  }
  return true;
}

/** The process's logger; `flush` writes what is buffered (shutdown awaits it). */
export type ProcessLogger = Logger & { flush(): Promise<void> };

/** Bytes buffered before a write to stdout (and at most a second's wait: a quiet process's lines still show). */
const STDOUT_MIN_LENGTH = 2048;
/**
 * Bytes one write takes at most. sonic-boom measures the byte length of its last pending chunk on
 * every line it is given while a write is in flight, so the chunk's bound sets the cost of a line:
 * with its default (16 KiB) a request line cost about 2.5 us of CPU, with 4 KiB about 1.4 us
 * (docs/decisions.md, "Less CPU per fresh check answer").
 */
const STDOUT_MAX_WRITE = 4096;
const STDOUT_FLUSH_MS = 1000;

type Boom = DestinationStream & { flush(cb?: (e?: Error) => void): void; flushSync(): void };
let stdout: Boom | undefined;

/**
 * Stdout, asynchronous and buffered (writes of 2 to 4 KiB, not one per line), once per process:
 * flushed every second and by `flush` at shutdown; pino's own exit hook (`pino.destination`
 * registers one for asynchronous destinations) writes the rest synchronously on exit, so no line
 * is lost (`logger.test.ts` ends processes both ways).
 */
function stdoutDestination(): Boom {
  if (stdout) return stdout;
  const dest = pino.destination({ dest: 1, sync: false, minLength: STDOUT_MIN_LENGTH, maxWrite: STDOUT_MAX_WRITE }) as unknown as Boom;
  const timer = setInterval(() => dest.flush(), STDOUT_FLUSH_MS);
  timer.unref();
  stdout = dest;
  return dest;
}

/**
 * The process's logger: pino, JSON lines (`level`, `time`, `msg`, then the fields), at `level`
 * (`LOG_LEVEL`). Secret-looking fields are censored at any depth up to two levels; fields that
 * redaction cannot change (`redactionFree`) are written by a twin logger without it, to the same
 * destination, in the same form. Without `destination`: stdout, buffered.
 */
export function createLogger(level: LogLevel = 'info', destination?: DestinationStream): ProcessLogger {
  const paths = LOG_SECRET_FIELDS.flatMap((f) => [`["${f}"]`, `*["${f}"]`, `*.*["${f}"]`]);
  const dest = destination ?? stdoutDestination();
  const options = { level, base: undefined, formatters: { level: (label: string) => ({ level: label as Level }) } };
  const redacting = pino({ ...options, redact: { paths, censor: '[redacted]' } }, dest);
  const plain = pino(options, dest);
  const of = (fields: Record<string, unknown> | undefined) => (fields === undefined || redactionFree(fields) ? plain : redacting);
  return {
    info: (message, fields) => of(fields).info(fields ?? {}, message),
    error: (message, fields) => of(fields).error(fields ?? {}, message),
    flush: () =>
      new Promise<void>((resolve) => {
        const boom = dest as Partial<Boom>;
        if (typeof boom.flush !== 'function') return resolve();
        try {
          boom.flush(() => resolve());
        } catch {
          resolve();
        }
      }),
  };
}
