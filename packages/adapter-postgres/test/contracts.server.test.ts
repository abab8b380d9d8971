import { describeRepositoryContracts, describeUsageRepositoryContract } from '@tollgate/core/testing';
import { createTestDatabase, type TestDatabase } from '../src';

// The same contract suites against a PostgreSQL server; collected only with TEST_DATABASE_URL (jest.config.js), which CI sets.
describe('PostgreSQL server', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('postgres');
  });
  afterAll(async () => {
    await db?.drop();
  });
  describeRepositoryContracts('PostgreSQL server', () => db.uow);
  describeUsageRepositoryContract('PostgreSQL server', () => db.uow);
});
