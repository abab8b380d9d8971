/* A find-or-create that neither finds nor inserts its row three rounds in a row (rows made and
   removed again by other requests each time) answers 409 CONFLICT saying to retry, never a plain
   error (a 500). Reproduced on PGlite by a trigger that drops every insert of the table. */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { ErrorCodes, type DomainError } from '@tollgate/core';
import { rejectionOf } from '@tollgate/core/testing';
import { createTestDatabase, type TestDatabase } from '../src';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('pglite');
  await sql`create function drop_insert() returns trigger language plpgsql as $$ begin return null; end $$`.execute(db.db);
  for (const table of ['customers', 'grantees'])
    await sql`create trigger drop_insert before insert on ${sql.table(table)} for each row execute function drop_insert()`.execute(db.db);
});
afterAll(() => db?.drop());

const tenant = { organisationId: randomUUID(), isTest: false };
const stamp = { createdAt: new Date(), updatedAt: new Date() };
const outcome = (e: DomainError) => ({ code: e.code, retry: /retry$/.test(e.message) });

describe('find-or-create after three rounds', () => {
  it('a customer: 409 CONFLICT, retry', async () => {
    const e = await rejectionOf(
      db.uow.run((r) =>
        r.customers.findOrCreate({ id: randomUUID(), ...tenant, value: 'o', emailAddress: null, paymentCustomerId: null, ...stamp }),
      ),
    );
    expect(outcome(e)).toEqual({ code: ErrorCodes.CONFLICT, retry: true });
  });

  it('a grantee: 409 CONFLICT, retry', async () => {
    const e = await rejectionOf(
      db.uow.run((r) => r.people.findOrCreateGrantee({ id: randomUUID(), ...tenant, granteeId: 'g', name: null, ...stamp })),
    );
    expect(outcome(e)).toEqual({ code: ErrorCodes.CONFLICT, retry: true });
  });
});
