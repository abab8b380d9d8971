export { MemoryChangeFeed } from './change-feed';
export { FaultInjectingUnitOfWork, InMemoryUnitOfWork } from './unit-of-work';
