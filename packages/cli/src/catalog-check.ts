import fs from 'node:fs';
import path from 'node:path';
import Ajv, { type ErrorObject } from 'ajv';
import YAML, { isMap, isScalar, LineCounter, type Node } from 'yaml';
import type { CatalogFile } from '@tollgate/core';

/** The catalog file's JSON Schema (published beside the CLI; editors can use it through `$schema`). */
export const CATALOG_FILE_SCHEMA_PATH = path.join(__dirname, '..', 'assets', 'catalog-file.schema.json');

/** One thing wrong with a catalog file: where (a path, and the line when the text shows it) and what. */
export interface FileProblem {
  path: string;
  line?: number;
  message: string;
}

let compiled: ReturnType<Ajv['compile']> | undefined;
const validator = () => {
  if (compiled) return compiled;
  const schema = JSON.parse(fs.readFileSync(CATALOG_FILE_SCHEMA_PATH, 'utf8')) as object;
  compiled = new Ajv({ allErrors: true, verbose: true, strict: false }).compile(schema);
  return compiled;
};

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
  const validate = validator();
  if (!validate(doc)) {
    for (const e of validate.errors ?? []) {
      if (e.keyword === 'if' || e.keyword === '$ref') continue;
      // A oneOf's branches' own errors repeat what the oneOf says (its description).
      if (/\/oneOf\/\d+\//.test(e.schemaPath)) continue;
      const segments = e.instancePath
        .split('/')
        .slice(1)
        .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
        .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
      const { key, message } = describe(e);
      problems.push({ path: render(key === undefined ? segments : [...segments, key]), line: lineOf(segments, key), message });
    }
  } else {
    const file = doc as CatalogFile;
    (file.products ?? []).forEach((p, i) => {
      const declared = p.currencies ?? [];
      (p.plans ?? []).forEach((plan, j) => {
        for (const currency of Object.keys(plan.prices ?? {}))
          if (!declared.includes(currency)) {
            const at = ['products', i, 'plans', j, 'prices'];
            problems.push({
              path: render([...at, currency]),
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

/** An ajv error in words a vendor reads; `key` when the problem is a key of the object (unknown, misnamed). */
function describe(e: ErrorObject): { key?: string; message: string } {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties': {
      const key = String(p.additionalProperty);
      const known = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {}).filter((k) => k !== '$schema');
      const near = known.find((k) => distance(k.toLowerCase(), key.toLowerCase()) <= 2);
      return { key, message: `unknown key ${key}${near ? ` (did you mean ${near}?)` : ''}; allowed: ${known.join(', ')}` };
    }
    case 'propertyNames':
      return { key: String(p.propertyName), message: `${String(p.propertyName)} is not allowed here` };
    case 'oneOf':
      return { message: (e.parentSchema as { description?: string } | undefined)?.description ?? e.message ?? 'is not valid' };
    case 'required':
      return { message: `${String(p.missingProperty)} is required` };
    case 'enum':
      return { message: `must be one of ${(p.allowedValues as unknown[]).join(', ')}, got ${JSON.stringify(e.data)}` };
    case 'pattern':
      return {
        message:
          e.parentSchema && (e.parentSchema as { description?: string }).description
            ? `${JSON.stringify(e.data)}: ${(e.parentSchema as { description: string }).description}`
            : `${JSON.stringify(e.data)} does not match ${String(p.pattern)}`,
      };
    case 'type':
      return { message: `must be ${String(p.type).replace(',', ' or ')}, got ${JSON.stringify(e.data)}` };
    default:
      return { message: e.message ?? 'is not valid' };
  }
}

/** `products[0].plans[1].licenseType`: the path as a vendor reads it. */
const render = (segments: (string | number)[]) =>
  segments.map((s, i) => (typeof s === 'number' ? `[${s}]` : `${i ? '.' : ''}${s}`)).join('') || '(the file)';

/** Levenshtein distance, for "did you mean" on short keys. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length];
}
