import { invalid } from '../errors';

/** A string the service can store and echo: no NUL (PostgreSQL text refuses it), no lone UTF-16 surrogate. */
const BAD_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Refuses the first string under `value` (keys included) that the service cannot keep, naming where it is. */
export function assertCleanText(value: unknown, where: string): void {
  const stack: [unknown, string][] = [[value, where]];
  while (stack.length) {
    const [v, path] = stack.pop() as [unknown, string];
    if (typeof v === 'string') {
      if (BAD_TEXT.test(v)) invalid(path, 'contains a NUL character or broken UTF-16');
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => stack.push([item, `${path}[${i}]`]));
    } else if (v && typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) {
        if (BAD_TEXT.test(k)) invalid(path, 'has a key with a NUL character or broken UTF-16');
        stack.push([item, path === 'body' || path === 'query' ? k : `${path}.${k}`]);
      }
    }
  }
}

/** Whether a string is a UUID (ids are; a lookup by anything else finds nothing without asking the database). */
export const isUuid = (s: string): boolean => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);
