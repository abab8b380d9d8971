import YAML, { isMap, isScalar, LineCounter, type Node } from 'yaml';
import type { CatalogFile } from '@tollgate/core';
import { catalogFileProblems, renderPath } from '@tollgate/http';

/**
 * The catalog file's JSON Schema: one file, kept and checked with ajv by @tollgate/http, so that
 * `tollgate import` and `POST /api/products/import` refuse the same files. Editors can use it
 * through `$schema` (docs/catalog-file.md).
 */
export { CATALOG_FILE_SCHEMA_PATH } from '@tollgate/http';

/** One thing wrong with a catalog file: where (a path, and the line when the text shows it) and what. */
export interface FileProblem {
  path: string;
  line?: number;
  message: string;
}

/**
 * Parses a catalog file (YAML, or JSON by its `.json` name) and checks it against the schema and
 * the file's own cross-references the schema cannot express (a plan's prices only in its product's
 * currencies). Every problem names its path and line. `doc` is undefined when the text does not parse.
 */
export function checkCatalogFile(name: string, text: string): { doc?: CatalogFile; problems: FileProblem[] } {
  const lines = new LineCounter();
  // JSON is YAML too: the YAML parser gives both their node positions.
  const parsed = YAML.parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (parsed.errors.length)
    return { problems: parsed.errors.map((e) => ({ path: '', line: lines.linePos(e.pos[0]).line, message: e.message.split('\n')[0] })) };
  let doc: unknown;
  try {
    doc = name.endsWith('.json') ? JSON.parse(text) : parsed.toJS();
  } catch (e) {
    return { problems: [{ path: '', message: `not valid JSON: ${(e as Error).message}` }] };
  }
  const lineOf = (segments: (string | number)[], key?: string): number | undefined => {
    const node = (segments.length ? parsed.getIn(segments, true) : parsed.contents) as Node | undefined;
    let at = node?.range?.[0];
    if (key !== undefined && isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === key);
      at = (pair?.key as Node | undefined)?.range?.[0] ?? at;
    }
    return at === undefined ? undefined : lines.linePos(at).line;
  };
  const problems: FileProblem[] = [];
  const shape = catalogFileProblems(doc);
  for (const p of shape) problems.push({ path: p.property, line: lineOf(p.at, p.key), message: p.error });
  if (!shape.length) {
    const file = doc as CatalogFile;
    (file.products ?? []).forEach((p, i) => {
      const declared = p.currencies ?? [];
      (p.plans ?? []).forEach((plan, j) => {
        for (const currency of Object.keys(plan.prices ?? {}))
          if (!declared.includes(currency)) {
            const at = ['products', i, 'plans', j, 'prices'];
            problems.push({
              path: renderPath([...at, currency]),
              line: lineOf(at, currency),
              message: declared.length
                ? `${currency} is not one of the product's currencies (${declared.join(', ')}); add it to products[${i}].currencies`
                : `${currency} is not a currency of the product; list it in products[${i}].currencies`,
            });
          }
      });
    });
  }
  // In the file's order, as an editor shows them.
  problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  return { doc: doc as CatalogFile, problems };
}
