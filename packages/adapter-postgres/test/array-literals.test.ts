import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from '../src';
import { plainArray, textArray, timeArray } from '../src/repositories/db';

// The array literals the group commit's write sends (db.ts) read back by PostgreSQL (PGlite here,
// the same parser as the server's) exactly as the values they were made of.
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('pglite');
});
afterAll(async () => {
  await db?.drop();
});

/** The array PostgreSQL read from the literal, as JSON (PGlite's own array reader shows a NULL element as the text NULL). */
const back = async <T>(literal: string, type: string, as = type): Promise<T> =>
  (await sql<{ v: T }>`select array_to_json(${literal}::${sql.raw(type)}::${sql.raw(as)}) as v`.execute(db.db)).rows[0].v;

describe('array literals', () => {
  it('text: quotes, backslashes, commas, braces, blanks, the word NULL, unicode and empty strings survive; null is NULL', async () => {
    const xs = ['plain', 'a "quoted" word', 'back\\slash\\', 'comma, {brace} }', '  blanks  ', 'NULL', 'null', '', 'émoji 🚀', null];
    expect(await back<(string | null)[]>(textArray(xs), 'text[]')).toEqual(xs);
    expect(await back<string[]>(textArray([]), 'text[]')).toEqual([]);
  });

  it('plain: uuids, exact decimals past 2^53, booleans and integers; null is NULL', async () => {
    const ids = ['0193a0c4-7f1e-7a3b-8c2d-1e2f3a4b5c6d', null];
    expect(await back<(string | null)[]>(plainArray(ids), 'uuid[]')).toEqual(ids);
    const big = [123456789012345678901n, 0n, -5n, null];
    expect(await back<(string | null)[]>(plainArray(big), 'text[]')).toEqual(['123456789012345678901', '0', '-5', null]);
    expect(await back<(string | null)[]>(plainArray(big), 'numeric[]', 'text[]')).toEqual(['123456789012345678901', '0', '-5', null]);
    expect(await back<boolean[]>(plainArray([true, false, null]), 'boolean[]')).toEqual([true, false, null]);
    expect(await back<number[]>(plainArray([1, -2, 30]), 'integer[]')).toEqual([1, -2, 30]);
    // Text that would need quoting, or would read as NULL, is refused, never sent as it is.
    for (const bad of ['a,b', '{x}', 'NULL', 'null', '', 'a b', 'a"b'])
      expect(() => plainArray(['0193a0c4-7f1e-7a3b-8c2d-1e2f3a4b5c6d', bad])).toThrow(RangeError);
  });

  it('time: instants to the millisecond up to the year 9999, in UTC; null is NULL', async () => {
    const xs = [new Date('2026-11-24T06:35:31.123Z'), new Date(0), null];
    const read = await back<(string | null)[]>(timeArray(xs), 'timestamptz[]');
    expect(read.map((v) => (v === null ? null : new Date(v)))).toEqual(xs);
    const last = new Date('9999-12-31T23:59:59.999Z');
    expect((await back<string[]>(timeArray([last]), 'timestamptz[]')).map((v) => new Date(v))).toEqual([last]);
    // ISO 8601's expanded years are not PostgreSQL's: refused before anything is sent.
    expect(() => timeArray([new Date(last.getTime() + 1)])).toThrow(RangeError);
  });
});
