import { describeRepositoryContracts } from '@tollgate/core/testing';
import { createTestDatabase, type TestDatabase } from '../src';

// The same contract suites against a PostgreSQL server; CI sets TEST_DATABASE_URL.
const server = process.env.TEST_DATABASE_URL ? describe : describe.skip;

server('PostgreSQL server', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('postgres');
  });
  afterAll(async () => {
    await db?.drop();
  });
  describeRepositoryContracts('PostgreSQL server', () => db.uow);
});
