import { createTestCore, describeCacheCoherenceContract, InMemoryUnitOfWork, type MemoryChangeFeed } from '../src/testing';

describeCacheCoherenceContract('in-memory', async () => {
  const uow = new InMemoryUnitOfWork();
  const a = createTestCore({ uow });
  const b = createTestCore({ uow });
  await a.listen();
  await b.listen();
  const feed = b.changes as MemoryChangeFeed;
  return {
    a,
    b,
    dropB: async () => feed.drop(),
    restoreB: async () => feed.restore(),
    settle: async () => undefined,
    close: async () => undefined,
  };
});
