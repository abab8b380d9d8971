import { describeUsageRepositoryContract, InMemoryUnitOfWork } from '../src/testing';

const uow = new InMemoryUnitOfWork();
describeUsageRepositoryContract('in-memory', () => uow);
