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
const STDOUT_MIN_LENGTH = 4096;
/**
 * Bytes one write takes at most: sonic-boom's default, 16 KiB. sonic-boom writes one such chunk at
 * a time, so this bounds how fast the log drains: a chunk per completed write, and a busy event loop
 * completes a write only now and then. With 4 KiB chunks (cheaper per line, since sonic-boom measures
 * the last pending chunk on every line: about 1.4 us a line against 2.5) the log of a check
 * answering 40 000 a second fell behind without bound, even into a file, and the lines piled up in
 * the heap (docs/decisions.md, "The request log keeps up").
 */
const STDOUT_MAX_WRITE = 16 * 1024;
const STDOUT_FLUSH_MS = 1000;
/**
 * Bytes of lines waiting for stdout at most. A reader slower than the service (a stalled log
 * pipeline, a busy process reading the pipe) would otherwise let them pile up in the heap without
 * bound until the process hits its heap ceiling; past this, lines are dropped and counted
 * (`droppedLogLines`, the metric `tollgate_log_lines_dropped_total`), and stderr says so once a minute.
 */
const STDOUT_MAX_BACKLOG = 8 * 1024 * 1024;
const DROP_NOTICE_MS = 60_000;
let dropped = 0;
let droppedNoticed = 0;
let lastDropNotice = 0;

/** Lines dropped since the start because stdout's reader fell more than STDOUT_MAX_BACKLOG behind. */
export const droppedLogLines = (): number => dropped;

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
  const dest = pino.destination({
    dest: 1,
    sync: false,
    minLength: STDOUT_MIN_LENGTH,
    maxWrite: STDOUT_MAX_WRITE,
    maxLength: STDOUT_MAX_BACKLOG,
  }) as unknown as Boom;
  (dest as unknown as NodeJS.EventEmitter).on('drop', (data: string | Buffer) => {
    let lines = 0;
    for (let i = data.indexOf('\n'); i !== -1; i = data.indexOf('\n', i + 1)) lines++;
    dropped += Math.max(1, lines);
    const now = Date.now();
    if (now - lastDropNotice >= DROP_NOTICE_MS) {
      lastDropNotice = now;
      // Straight to stderr: stdout is what is behind.
      process.stderr.write(
        `${JSON.stringify({ level: 'warn', time: now, msg: 'log lines dropped: stdout is read slower than they are written', dropped: dropped - droppedNoticed })}\n`,
      );
      droppedNoticed = dropped;
    }
  });
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
