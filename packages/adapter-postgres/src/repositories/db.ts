import { sql, type Insertable, type Kysely, type SelectQueryBuilder, type Transaction } from 'kysely';
import { decodeCursor, DomainError, encodeCursor, ErrorCodes, type CursorKey, type Page, type Tenant } from '@tollgate/core';
import type { DB } from '../schema';

/** The typed handle every repository works on: the database or one transaction of it. */
export type Db = Kysely<DB> | Transaction<DB>;
export type Table = keyof DB & string;

/**
 * The same handle seen as a database of untyped tables: only for the generic helpers below, whose
 * table is a parameter (kysely infers columns per literal table name). Their signatures take the
 * typed rows of that table, so every caller is still checked.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- columns of a table chosen at run time
type Untyped = Kysely<Record<string, Record<string, any>>>;
const untyped = (db: Db) => db as unknown as Untyped;

/** JSON for a jsonb parameter (pg would send a JS array as a PostgreSQL array). */
export const json = (v: unknown): string => JSON.stringify(v);

/**
 * PostgreSQL array literals for array parameters, written here rather than by pg (whose generic
 * encoder escapes every element and formats every Date by hand: a fifth of the server's CPU in the
 * group commit's write). `plainArray` is for elements whose text needs no quoting (uuids, numbers,
 * booleans, decimal text: a string with anything but letters, digits and `.:+-`, or the word
 * NULL, is refused); `textArray` quotes each element; `timeArray` writes instants as ISO 8601
 * (UTC). A null element is NULL.
 */
export const plainArray = (xs: readonly (string | number | boolean | bigint | null)[]): string => {
  let out = '{';
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i];
    // A string here is an id or an instant: anything that would need quoting is refused, never sent.
    if (typeof x === 'string' && (!PLAIN.test(x) || NULL_WORD.test(x)))
      throw new RangeError(`not a plain array element: ${JSON.stringify(x)}`);
    out += (i ? ',' : '') + (x === null ? 'NULL' : String(x));
  }
  return out + '}';
};
const PLAIN = /^[0-9A-Za-z.:+-]+$/;
const NULL_WORD = /^null$/i;
const QUOTED = /["\\]/g;
export const textArray = (xs: readonly (string | null)[]): string => {
  let out = '{';
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i];
    out += (i ? ',' : '') + (x === null ? 'NULL' : `"${x.replace(QUOTED, '\\$&')}"`);
  }
  return out + '}';
};
export const timeArray = (xs: readonly (Date | null)[]): string => {
  // A batch's rows mostly share one instant: each distinct one is formatted once.
  let last = NaN;
  let text = '';
  return plainArray(
    xs.map((d) => {
      if (d === null) return null;
      if (d.getTime() !== last) {
        last = d.getTime();
        text = d.toISOString();
        // ISO 8601's expanded years (+010000-...) are not PostgreSQL's: refused here rather than sent.
        if (text[0] === '+' || text[0] === '-') throw new RangeError(`instant outside the years 0000-9999: ${text}`);
      }
      return text;
    }),
  );
};

/** The tenant filter of an owned row: organisation and mode. */
export const tenantOf = (t: Tenant) => ({ organisation_id: t.organisationId, is_test: t.isTest });

/**
 * PostgreSQL takes at most 65 535 parameters per statement; multi-row writes are cut into
 * statements of at most this many parameters.
 */
export const MAX_PARAMETERS = 30_000;

/** Slices of `items` such that each slice times `perItem` parameters stays within MAX_PARAMETERS. */
export function* chunks<T>(items: readonly T[], perItem: number): Generator<T[]> {
  const size = Math.max(1, Math.floor(MAX_PARAMETERS / Math.max(1, perItem)));
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/**
 * Inserts rows, or on `conflict` updates every other column from the new values (one statement
 * per chunk). The table is a parameter, so kysely's per-table types are widened here, once.
 */
export async function upsert<T extends Table>(db: Db, table: T, rows: Insertable<DB[T]>[], conflict: string[] = ['id']): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]).filter((c) => !conflict.includes(c));
  const update = Object.fromEntries(columns.map((c) => [c, sql.ref(`excluded.${c}`)]));
  for (const chunk of chunks(rows, Object.keys(rows[0]).length)) {
    const q = untyped(db)
      .insertInto(table as string)
      .values(chunk)
      .onConflict((oc) => (columns.length ? oc.columns(conflict).doUpdateSet(update) : oc.columns(conflict).doNothing()));
    await q.execute();
  }
}

/** Makes the children of `parentId` exactly `rows`: upserts them by id and deletes the others. */
export async function syncChildren<T extends Table>(
  db: Db,
  table: T,
  parentColumn: string,
  parentId: string,
  rows: (Insertable<DB[T]> & { id: string })[],
): Promise<void> {
  const ids = rows.map((r) => r.id);
  let del = untyped(db)
    .deleteFrom(table as string)
    .where(parentColumn, '=', parentId);
  if (ids.length) del = del.where('id', 'not in', ids);
  await del.execute();
  await upsert(db, table, rows);
}

/** Replaces the link rows of `parentId` (rows without identity of their own). */
export async function replaceLinks<T extends Table>(
  db: Db,
  table: T,
  parentColumn: string,
  parentId: string,
  rows: Insertable<DB[T]>[],
): Promise<void> {
  await untyped(db)
    .deleteFrom(table as string)
    .where(parentColumn, '=', parentId)
    .execute();
  for (const chunk of chunks(rows, rows.length ? Object.keys(rows[0]).length : 1))
    await untyped(db)
      .insertInto(table as string)
      .values(chunk)
      .execute();
}

/** Groups rows by a key, keeping their order. */
export function groupBy<T>(rows: readonly T[], key: (r: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const k = key(r);
    const list = out.get(k);
    if (list) list.push(r);
    else out.set(k, [r]);
  }
  return out;
}

export const byPosition = (a: { position: number }, b: { position: number }) => a.position - b.position;

/** `%text%` for ilike, with the pattern characters of `text` escaped. */
export const containing = (text: string) => `%${text.replace(/[\\%_]/g, (m) => `\\${m}`)}%`;

/**
 * Keyset page over (created_at, id) of the rows `base` selects (it must select from `alias` and
 * apply every filter). Stable under concurrent inserts: a cursor names a position, not an offset.
 */
export async function keysetPage<R extends { created_at: Date; id: string }>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any aliased source of rows R
  base: () => SelectQueryBuilder<DB, any, R>,
  alias: string,
  q: { limit: number; after?: string; before?: string },
): Promise<Page<R>> {
  const col = (c: string) => sql.ref(`${alias}.${c}`);
  // The exact instant (microseconds) as text, so that a cursor names the position exactly.
  const exact = sql<string>`to_char(${col('created_at')} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('cursor_at');
  const pos = (k: CursorKey) => sql`(${k.at ?? k.createdAt.toISOString()}::timestamptz, ${k.id}::uuid)`;
  const key = sql`(${col('created_at')}, ${col('id')})`;
  const exists = async (cmp: 'gt' | 'lt', k: CursorKey) =>
    (
      await base()
        .where(sql<boolean>`${key} ${sql.raw(cmp === 'gt' ? '>' : '<')} ${pos(k)}`)
        .clearSelect()
        .select(sql`1`.as('one'))
        .limit(1)
        .execute()
    ).length > 0;
  const page = (b: SelectQueryBuilder<DB, any, R>) => b.select(exact) as unknown as SelectQueryBuilder<DB, any, R & { cursor_at: string }>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const toKey = (r: R & { cursor_at: string }): CursorKey => ({ createdAt: r.created_at, id: r.id, at: r.cursor_at });

  let rows: (R & { cursor_at: string })[];
  let hasMore: boolean;
  let hasPrevious: boolean;
  if (q.before) {
    const k = decodeCursor(q.before, 'before');
    const found = await page(base().where(sql<boolean>`${key} < ${pos(k)}`))
      .orderBy(col('created_at'), 'desc')
      .orderBy(col('id'), 'desc')
      .limit(q.limit + 1)
      .execute();
    hasPrevious = found.length > q.limit;
    rows = found.slice(0, q.limit).reverse();
    hasMore = rows.length ? await exists('gt', toKey(rows[rows.length - 1])) : false;
  } else {
    let query = base();
    if (q.after) query = query.where(sql<boolean>`${key} > ${pos(decodeCursor(q.after, 'after'))}`);
    const found = await page(query)
      .orderBy(col('created_at'), 'asc')
      .orderBy(col('id'), 'asc')
      .limit(q.limit + 1)
      .execute();
    hasMore = found.length > q.limit;
    rows = found.slice(0, q.limit);
    hasPrevious = q.after && rows.length ? await exists('lt', toKey(rows[0])) : false;
  }
  return {
    items: rows.map(({ cursor_at: _drop, ...r }) => r as unknown as R),
    hasMore,
    nextCursor: hasMore && rows.length ? encodeCursor(toKey(rows[rows.length - 1])) : null,
    previousCursor: hasPrevious && rows.length ? encodeCursor(toKey(rows[0])) : null,
  };
}

/**
 * A find-or-create that cannot lose a race: `insert` is an `on conflict do nothing` that waits for
 * a transaction inserting the same identity and then inserts nothing; the `find` after it is a new
 * statement, which (READ COMMITTED) sees that row committed. A row removed meanwhile lets the next
 * round insert; a row taken and removed again by other transactions three rounds in a row (or one
 * it conflicts with but cannot see) answers 409 CONFLICT: the request may simply be sent again.
 */
export async function findOrInsert<T>(what: string, find: () => Promise<T | undefined>, insert: () => Promise<T | undefined>): Promise<T> {
  for (let round = 0; ; round++) {
    const existing = await find();
    if (existing) return existing;
    const inserted = await insert();
    if (inserted) return inserted;
    if (round === 2)
      throw new DomainError(ErrorCodes.CONFLICT, `the ${what} was being created and removed by other requests meanwhile; retry`);
  }
}
