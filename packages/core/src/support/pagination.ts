import { invalid } from '../errors';
import type { Id, Page } from '../model';

/** Position of a record in (createdAt, id) order, opaque to callers. */
export interface CursorKey {
  createdAt: Date;
  id: Id;
  /**
   * The creation instant as the database keeps it, when finer than a millisecond (PostgreSQL keeps
   * microseconds): a cursor must name the exact position, or the row at a page boundary repeats.
   */
  at?: string;
}

export const encodeCursor = (k: CursorKey): string =>
  Buffer.from(JSON.stringify([k.at ?? k.createdAt.toISOString(), k.id]), 'utf8').toString('base64url');

export function decodeCursor(cursor: string, name = 'cursor'): CursorKey {
  try {
    const [t, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    const createdAt = new Date(t);
    if (typeof t !== 'string' || typeof id !== 'string' || Number.isNaN(createdAt.getTime())) throw new Error('bad cursor');
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/.test(t) || id.length > 100) throw new Error('bad cursor');
    return { createdAt, id, at: t };
  } catch {
    return invalid(name, 'is not a cursor this service issued');
  }
}

export const compareKeys = (a: CursorKey, b: CursorKey): number =>
  a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * One page of `all` (any order) by keyset: `after` gives the items following the cursor, `before`
 * those preceding it. Used by the in-memory adapter; SQL adapters do the same in the query.
 */
export function pageOf<T extends CursorKey>(all: T[], q: { limit: number; after?: string; before?: string }): Page<T> {
  const sorted = [...all].sort(compareKeys);
  let start = 0;
  let end = sorted.length;
  if (q.after) {
    const k = decodeCursor(q.after, 'after');
    start = sorted.findIndex((x) => compareKeys(x, k) > 0);
    if (start < 0) start = sorted.length;
    end = Math.min(sorted.length, start + q.limit);
  } else if (q.before) {
    const k = decodeCursor(q.before, 'before');
    end = sorted.findIndex((x) => compareKeys(x, k) >= 0);
    if (end < 0) end = sorted.length;
    start = Math.max(0, end - q.limit);
  } else {
    end = Math.min(sorted.length, q.limit);
  }
  const items = sorted.slice(start, end);
  const hasMore = end < sorted.length;
  return {
    items,
    hasMore,
    nextCursor: hasMore && items.length ? encodeCursor(items[items.length - 1]) : null,
    previousCursor: start > 0 && items.length ? encodeCursor(items[0]) : null,
  };
}

/** The keyset that lies past every record: where a newest-first list starts. */
export const PAST_END = encodeCursor({ createdAt: new Date('9999-12-31T23:59:59.999Z'), id: 'ffffffff-ffff-4fff-bfff-ffffffffffff' });

/**
 * A page in the order asked, from a source that pages oldest first. Newest first (`desc`): the
 * caller's `after` (its `nextCursor`, towards older records) is the source's `before`, its `before`
 * (towards newer) the source's `after`; the items come reversed, and the cursors swap so that
 * `nextCursor`/`hasMore` still lead on in the caller's order.
 */
export async function pageInOrder<T>(
  sort: 'asc' | 'desc',
  q: { limit: number; after?: string; before?: string },
  fetch: (q: { limit: number; after?: string; before?: string }) => Promise<Page<T>>,
): Promise<Page<T>> {
  if (sort === 'asc') return fetch(q);
  const page = await fetch(q.before !== undefined ? { limit: q.limit, after: q.before } : { limit: q.limit, before: q.after ?? PAST_END });
  return {
    items: [...page.items].reverse(),
    hasMore: page.previousCursor !== null,
    nextCursor: page.previousCursor,
    previousCursor: page.nextCursor,
  };
}
