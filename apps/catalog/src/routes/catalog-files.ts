import { invalid, type CatalogFile, type Core } from '@tollgate/core';
import { assertCatalogFile, int, resource, route, typed, type Route } from '@tollgate/http';
import YAML from 'yaml';
import { object, objectOf } from '../response-schemas';
import { objectEnvelope } from '../views';

const importResultSchema = objectOf(
  object({ created: int, updated: int, unchanged: int, keys: { type: 'object', additionalProperties: { type: 'string' } } }),
);

/** A catalog file (JSON body), or a multipart upload whose `file` part is read as text. */
// A `null` body reaches the handler (`nullBody`), which answers it as "file not provided" (as
// published) rather than "body must be object"; the documented schema stays an object.
const importBody = typed<(Partial<CatalogFile> & { file?: unknown }) | null>({ type: 'object' });

/** Catalog files (`tollgate import` / export): a product, its plans and pricing as one YAML document. */
export const catalogFileRoutes = ({ importer, exporter }: Pick<Core, 'importer' | 'exporter'>): Route[] =>
  resource({ name: 'catalog-files', description: 'A product with its plans and pricing as one YAML or JSON catalog file' }, [
    route({
      method: 'get',
      path: '/api/products/export/:id',
      operationId: 'exportProduct',
      summary: 'Export a product as a catalog file (YAML, the format of `tollgate import`)',
      description: 'The product, its plans, entitlements and pricing as a catalog file another organisation or mode can import.',
      scope: ['products', 'read'],
      response: {
        status: 200,
        contentType: 'application/yaml',
        schema: { type: 'string', example: 'products:\n  - key: notes\n    name: Notes\n' },
        description: 'the catalog file',
      },
      handle: async ({ tenant, params }) => ({
        status: 200,
        text: { contentType: 'application/yaml; charset=utf-8', content: YAML.stringify(await exporter.exportProduct(tenant, params.id)) },
      }),
    }),
    route({
      method: 'post',
      path: '/api/products/import',
      operationId: 'importCatalogFile',
      summary: 'Import a catalog file (JSON body, or multipart with a YAML or JSON `file`) into the key’s organisation and mode',
      description:
        'Creates or updates what the file describes, in one transaction; the answer counts what changed and gives the ids by key.',
      scope: ['products', 'write'],
      body: importBody,
      nullBody: true,
      upload: 'file',
      response: { status: 201, schema: importResultSchema, description: 'created (201 as published), with what changed' },
      async handle({ tenant, body }) {
        // Nothing to import (no body, `null`, `{}`, a body that is not JSON): 400, as published ("file not provided").
        if (body === null || typeof body !== 'object' || (body.file === undefined && Object.keys(body).length === 0))
          return invalid('file', 'not provided: send the catalog file as the multipart part `file` (YAML or JSON) or as a JSON body');
        const file = typeof body.file === 'string' ? parseCatalogFile(body.file) : body;
        // The file's shape is the catalog-file JSON Schema's, as `tollgate import` checks it: a 400
        // naming each path before the import. The key decides the organisation when the file names none.
        assertCatalogFile(file, { organisationOptional: true });
        const result = await importer.applyFor(tenant, file as Partial<CatalogFile>);
        return {
          status: 201,
          body: objectEnvelope({ created: result.created, updated: result.updated, unchanged: result.unchanged, keys: result.keys }),
        };
      },
    }),
  ]);

/** The text of an uploaded catalog file: YAML (JSON is YAML too). */
function parseCatalogFile(text: string): unknown {
  try {
    return YAML.parse(text);
  } catch (e) {
    return invalid('file', `is not valid YAML or JSON: ${(e as Error).message.split('\n')[0]}`);
  }
}
