import { describeRepositoryContracts, InMemoryUnitOfWork } from '../src/testing';

const uow = new InMemoryUnitOfWork();
describeRepositoryContracts('in-memory', () => uow);
