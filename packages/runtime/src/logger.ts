import pino, { type DestinationStream, type Level } from 'pino';
import type { Logger } from '@tollgate/core';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Field names whose values never reach a log line, wherever they sit in the fields (keys, secrets,
 * card details): pino's redaction censors them before the line is written.
 */
const SECRET_FIELDS = [
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

/**
 * The process's logger: pino, JSON lines (`level`, `time`, `msg`, then the fields), at `level`
 * (`LOG_LEVEL`). Secret-looking fields are censored at any depth up to two levels.
 */
export function createLogger(level: LogLevel = 'info', destination?: DestinationStream): Logger {
  const paths = SECRET_FIELDS.flatMap((f) => [`["${f}"]`, `*["${f}"]`, `*.*["${f}"]`]);
  const log = pino(
    {
      level,
      base: undefined,
      formatters: { level: (label: string) => ({ level: label as Level }) },
      redact: { paths, censor: '[redacted]' },
    },
    destination,
  );
  return {
    info: (message, fields) => log.info(fields ?? {}, message),
    error: (message, fields) => log.error(fields ?? {}, message),
  };
}
