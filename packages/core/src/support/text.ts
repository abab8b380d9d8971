import { invalid } from '../errors';

/** A string the service can store and echo: no NUL (PostgreSQL text refuses it), no lone UTF-16 surrogate. */
const BAD_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/**
 * `text` if at most `max` characters long, else its start and end around `…` (at most `max`
 * characters in all): what an error message repeats of a caller's key or path. Never cuts a
 * surrogate pair in half (an emoji stays whole or goes whole).
 */
export function shortenText(text: string, max = 200): string {
  if (text.length <= max) return text;
  let head = Math.ceil((max - 1) / 2);
  let tail = text.length - (max - 1 - head);
  if (isHighSurrogate(text.charCodeAt(head - 1))) head--;
  if (isLowSurrogate(text.charCodeAt(tail))) tail++;
  return `${text.slice(0, head)}…${text.slice(tail)}`;
}

/** `text` cut to at most `max` characters, ending in `…` when cut (a surrogate pair kept whole). */
export function truncateText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  if (isHighSurrogate(text.charCodeAt(end - 1))) end--;
  return `${text.slice(0, end)}…`;
}

/** Refuses the first string under `value` (keys included) that the service cannot keep, naming where it is (cut to 200 characters). */
export function assertCleanText(value: unknown, where: string): void {
  const stack: [unknown, string][] = [[value, where]];
  while (stack.length) {
    const [v, path] = stack.pop() as [unknown, string];
    if (typeof v === 'string') {
      if (BAD_TEXT.test(v)) invalid(shortenText(path), 'contains a NUL character or broken UTF-16');
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => stack.push([item, `${path}[${i}]`]));
    } else if (v && typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) {
        if (BAD_TEXT.test(k)) invalid(shortenText(path), 'has a key with a NUL character or broken UTF-16');
        stack.push([item, path === 'body' || path === 'query' ? k : `${path}.${k}`]);
      }
    }
  }
}

/** Whether a string is a UUID (ids are; a lookup by anything else finds nothing without asking the database). */
export const isUuid = (s: string): boolean => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);
