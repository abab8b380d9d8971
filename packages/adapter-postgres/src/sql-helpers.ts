import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { decodeCursor, encodeCursor, type Page } from '@tollgate/core';

/* eslint-disable @typescript-eslint/no-explicit-any */
export type AnyDb = Kysely<any>;

/** JSON for a jsonb parameter (pg would send a JS array as a PostgreSQL array). */
export const json = (v: unknown): string => JSON.stringify(v);

/** pg returns int8 and numeric as strings on some paths; every number we keep fits a JS number. */
export const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));

/** Inserts rows, or on `conflict` updates every other column from the new values. */
export async function upsert(db: AnyDb, table: string, rows: Record<string, unknown>[], conflict: string[] = ['id']): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]).filter((c) => !conflict.includes(c));
  await db
    .insertInto(table)
    .values(rows)
    .onConflict((oc) =>
      columns.length
        ? oc.columns(conflict as any).doUpdateSet(Object.fromEntries(columns.map((c) => [c, sql.ref(`excluded.${c}`)])) as any)
        : oc.columns(conflict as any).doNothing(),
    )
    .execute();
}

/** Makes the children of `parentId` exactly `rows`: upserts them by id and deletes the others. */
export async function syncChildren(db: AnyDb, table: string, parentColumn: string, parentId: string, rows: Record<string, unknown>[]): Promise<void> {
  const ids = rows.map((r) => r.id as string);
  let del = db.deleteFrom(table).where(parentColumn, '=', parentId);
  if (ids.length) del = del.where('id', 'not in', ids);
  await del.execute();
  await upsert(db, table, rows);
}

/** Replaces the link rows of `parentId` (rows without identity of their own). */
export async function replaceLinks(db: AnyDb, table: string, parentColumn: string, parentId: string, rows: Record<string, unknown>[]): Promise<void> {
  await db.deleteFrom(table).where(parentColumn, '=', parentId).execute();
  if (rows.length) await db.insertInto(table).values(rows).execute();
}

/** Groups rows by a key, keeping their order. */
export function groupBy<T>(rows: T[], key: (r: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const k = key(r);
    const list = out.get(k);
    if (list) list.push(r);
    else out.set(k, [r]);
  }
  return out;
}

/**
 * Keyset page over (created_at, id) of the rows `base` selects (it must select from `alias` and
 * apply every filter). Stable under concurrent inserts: a cursor names a position, not an offset.
 */
export async function keysetPage<R extends { created_at: Date; id: string }>(
  base: () => SelectQueryBuilder<any, any, R>,
  alias: string,
  q: { limit: number; after?: string; before?: string },
): Promise<Page<R>> {
  const col = (c: string) => sql.ref(`${alias}.${c}`);
  const pos = (k: { createdAt: Date; id: string }) => sql`(${k.createdAt}::timestamptz, ${k.id}::uuid)`;
  const key = sql`(${col('created_at')}, ${col('id')})`;
  const exists = async (cmp: 'gt' | 'lt', k: { createdAt: Date; id: string }) =>
    (await base().where(sql<boolean>`${key} ${sql.raw(cmp === 'gt' ? '>' : '<')} ${pos(k)}`).select(sql`1`.as('one')).limit(1).execute()).length > 0;
  const toKey = (r: R) => ({ createdAt: r.created_at, id: r.id });

  let items: R[];
  let hasMore: boolean;
  let hasPrevious: boolean;
  if (q.before) {
    const k = decodeCursor(q.before, 'before');
    const rows = await base().where(sql<boolean>`${key} < ${pos(k)}`).orderBy(col('created_at'), 'desc').orderBy(col('id'), 'desc').limit(q.limit + 1).execute();
    hasPrevious = rows.length > q.limit;
    items = rows.slice(0, q.limit).reverse();
    hasMore = items.length ? await exists('gt', toKey(items[items.length - 1])) : false;
  } else {
    let query = base();
    if (q.after) query = query.where(sql<boolean>`${key} > ${pos(decodeCursor(q.after, 'after'))}`);
    const rows = await query.orderBy(col('created_at'), 'asc').orderBy(col('id'), 'asc').limit(q.limit + 1).execute();
    hasMore = rows.length > q.limit;
    items = rows.slice(0, q.limit);
    hasPrevious = q.after && items.length ? await exists('lt', toKey(items[0])) : false;
  }
  return {
    items,
    hasMore,
    nextCursor: hasMore && items.length ? encodeCursor(toKey(items[items.length - 1])) : null,
    previousCursor: hasPrevious && items.length ? encodeCursor(toKey(items[0])) : null,
  };
}
