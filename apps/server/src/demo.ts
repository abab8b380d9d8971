import type { Container } from 'inversify';
import type { ApiKeyService, CatalogFileImport, UnitOfWork } from '@tollgate/core';
import { setUpDemo, TOKENS, type DemoSetup } from '@tollgate/runtime';

/** The demo organisation, catalog and keys, on an empty database only (never next to real organisations). */
export async function seedDemoIfEmpty(container: Container): Promise<DemoSetup | undefined> {
  const uow = container.get<UnitOfWork>(TOKENS.UnitOfWork);
  if (await uow.run((r) => r.organisations.any())) return undefined;
  return setUpDemo(container.get<ApiKeyService>(TOKENS.ApiKeys), container.get<CatalogFileImport>(TOKENS.CatalogImport));
}
