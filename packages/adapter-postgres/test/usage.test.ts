import { describeUsageRepositoryContract } from '@tollgate/core/testing';
import { createTestDatabase, type TestDatabase } from '../src';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('pglite');
});
afterAll(async () => {
  await db?.drop();
});

describeUsageRepositoryContract('PGlite', () => db.uow);
