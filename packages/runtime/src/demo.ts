import { demoCatalog, type Core, type CreatedApiKey, type ImportResult } from '@tollgate/core';

export interface DemoSetup {
  organisation: string;
  live: ImportResult;
  test: ImportResult;
  liveKey: CreatedApiKey;
  testKey: CreatedApiKey;
}

/** The demo organisation, its catalog in live and test mode, and one key of each mode. */
export async function setUpDemo({ apiKeys, importer }: Pick<Core, 'apiKeys' | 'importer'>, organisation = 'demo'): Promise<DemoSetup> {
  await apiKeys.ensureOrganisation(organisation);
  const live = await importer.apply(demoCatalog(organisation, false));
  const test = await importer.apply(demoCatalog(organisation, true));
  const liveKey = await apiKeys.create({ organisation, name: 'demo live', scopes: ['*'], isTest: false });
  const testKey = await apiKeys.create({ organisation, name: 'demo test', scopes: ['*'], isTest: true });
  return { organisation, live, test, liveKey, testKey };
}

/** The demo organisation, catalog and keys, on an empty database only (never next to real organisations). */
export async function seedDemoIfEmpty(core: Pick<Core, 'apiKeys' | 'importer'>): Promise<DemoSetup | undefined> {
  if (await core.apiKeys.anyOrganisation()) return undefined;
  return setUpDemo(core);
}
