import fs from 'node:fs';
import path from 'node:path';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { ErrorCodes, fail, type CatalogFile, type ErrorDetail } from '@tollgate/core';

/**
 * The catalog file's JSON Schema: the one statement of the file's shape (types, required members,
 * unknown keys, enumerations and ranges), checked with ajv by both entry points, `tollgate import`
 * and `POST /api/products/import`. Published with this package (`assets/`), so editors can name it
 * in `$schema`. What it cannot say (keys named twice, seats up to the deployment's MAX_SEATS, the
 * records the file refers to) core's import checks.
 */
export const CATALOG_FILE_SCHEMA_PATH = path.join(__dirname, '..', 'assets', 'catalog-file.schema.json');

/** One thing wrong with a catalog file: its path as a vendor reads it, and what. */
export interface CatalogFileProblem extends ErrorDetail {
  /** The instance path's segments (`['products', 0, 'plans', 1]`): where an editor finds the value. */
  at: (string | number)[];
  /** The key of the object at `at` the problem is about (an unknown or misnamed key), when it is one. */
  key?: string;
}

let compiled: ValidateFunction | undefined;
const validator = (): ValidateFunction => {
  if (compiled) return compiled;
  const schema = JSON.parse(fs.readFileSync(CATALOG_FILE_SCHEMA_PATH, 'utf8')) as object;
  // strictNumbers: `strict: false` would let Infinity (YAML `.inf`, JSON `1e400`) pass as a number.
  compiled = new Ajv({ allErrors: true, verbose: true, strict: false, strictNumbers: true }).compile(schema);
  return compiled;
};

/** How an entry point reads a file: over HTTP the API key decides the organisation, which the file may leave out. */
export interface CatalogFileCheck {
  organisationOptional?: boolean;
}

/** The problems of a parsed catalog file against the schema (none: it has the file's shape), in ajv's order. */
export function catalogFileProblems(file: unknown, options: CatalogFileCheck = {}): CatalogFileProblem[] {
  const validate = validator();
  if (validate(file)) return [];
  const problems: CatalogFileProblem[] = [];
  for (const e of validate.errors ?? []) {
    if (e.keyword === 'if' || e.keyword === '$ref') continue;
    if (options.organisationOptional && e.keyword === 'required' && e.instancePath === '' && e.params.missingProperty === 'organisation')
      continue;
    // An anyOf's or oneOf's branches' own errors repeat what the anyOf or oneOf says.
    if (/\/(oneOf|anyOf)\/\d+\//.test(e.schemaPath)) continue;
    // A key's own pattern error repeats the propertyNames error that names the key.
    if (e.propertyName !== undefined && e.keyword !== 'propertyNames') continue;
    const at = e.instancePath
      .split('/')
      .slice(1)
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
      .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
    const { key, message } = describe(e);
    const property = renderPath(key === undefined ? at : [...at, key]);
    // One value out of a range can break two keywords (`type` and `minimum`): said once.
    if (problems.some((p) => p.property === property && p.error === message)) continue;
    problems.push({ property, error: message, at, ...(key === undefined ? {} : { key }) });
  }
  return problems;
}

/**
 * Refuses (400 VALIDATION_FAILED naming each path) a parsed catalog file that does not have the
 * schema's shape; what an entry point calls before `importer.apply`.
 */
export function assertCatalogFile(file: unknown, options: CatalogFileCheck = {}): asserts file is CatalogFile {
  const problems = catalogFileProblems(file, options);
  if (problems.length)
    fail(
      ErrorCodes.VALIDATION_FAILED,
      problems.map((p) => `${p.property}: ${p.error}`).join('; '),
      problems.map(({ property, error }) => ({ property, error })),
    );
}

/** `products[0].plans[1].licenseType`: the path as a vendor reads it. */
export const renderPath = (segments: (string | number)[]): string =>
  segments.map((s, i) => (typeof s === 'number' ? `[${s}]` : `${i ? '.' : ''}${s}`)).join('') || '(the file)';

type Schema = {
  type?: string | string[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  enum?: unknown[];
  const?: unknown;
  required?: string[];
  properties?: Record<string, unknown>;
  description?: string;
  anyOf?: Schema[];
  $ref?: string;
};

const shown = (v: unknown) => (v === undefined ? 'nothing' : JSON.stringify(v));
const typesOf = (s: Schema) => (Array.isArray(s.type) ? s.type : s.type ? [s.type] : []);

/** A number's range as words: `a whole number from 1 to 1095 or null`, `a number of at least 0`. */
function rangeOf(s: Schema): string {
  const types = typesOf(s);
  const whole = types.includes('integer');
  const nullable = types.includes('null') ? ' or null' : '';
  if (whole && s.minimum !== undefined && s.maximum !== undefined) return `a whole number from ${s.minimum} to ${s.maximum}${nullable}`;
  const bounds = [
    s.minimum !== undefined ? `of at least ${s.minimum}` : s.exclusiveMinimum !== undefined ? `above ${s.exclusiveMinimum}` : '',
    s.maximum !== undefined ? `at most ${s.maximum}` : '',
  ].filter(Boolean);
  return `a ${whole ? 'whole number' : 'number'}${bounds.length ? ` ${bounds.join(' and ')}` : ''}${nullable}`;
}

/** One branch of an anyOf in words (`none`, `{upTo}`, `a number above 0`). */
function branchOf(s: Schema): string {
  if (s.enum) return s.enum.map(String).join(', ');
  if (s.const !== undefined) return String(s.const);
  if (s.$ref) return s.$ref.split('/').pop() as string;
  const types = typesOf(s);
  if (types.includes('object')) return `{${(s.required ?? Object.keys(s.properties ?? {})).join(', ')}}`;
  if (types.includes('number') || types.includes('integer')) return rangeOf(s);
  return types.join(' or ') || 'valid';
}

/** An ajv error in words a vendor reads; `key` when the problem is a key of the object (unknown, misnamed). */
function describe(e: ErrorObject): { key?: string; message: string } {
  const p = e.params as Record<string, unknown>;
  const parent = (e.parentSchema ?? {}) as Schema;
  switch (e.keyword) {
    case 'additionalProperties': {
      const key = String(p.additionalProperty);
      const known = Object.keys(parent.properties ?? {}).filter((k) => k !== '$schema');
      const near = known.find((k) => distance(k.toLowerCase(), key.toLowerCase()) <= 2);
      return { key, message: `unknown key ${key}${near ? ` (did you mean ${near}?)` : ''}; allowed: ${known.join(', ')}` };
    }
    case 'propertyNames':
      return { key: String(p.propertyName), message: `${String(p.propertyName)} is not allowed here` };
    case 'oneOf':
      return { message: parent.description ?? e.message ?? 'is not valid' };
    case 'anyOf':
      return { message: `must be ${(parent.anyOf ?? []).map(branchOf).join(' or ')}, got ${shown(e.data)}` };
    case 'required':
      return { message: `${String(p.missingProperty)} is required` };
    case 'enum':
      return { message: `must be one of ${(p.allowedValues as unknown[]).join(', ')}, got ${shown(e.data)}` };
    case 'pattern':
      return {
        message: parent.description ? `${shown(e.data)}: ${parent.description}` : `${shown(e.data)} does not match ${String(p.pattern)}`,
      };
    case 'type':
      if (typesOf(parent).every((t) => t === 'integer' || t === 'number' || t === 'null'))
        return { message: `must be ${rangeOf(parent)}, got ${shown(e.data)}` };
      return { message: `must be ${String(p.type).split(',').join(' or ')}, got ${shown(e.data)}` };
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
      return { message: `must be ${rangeOf(parent)}, got ${shown(e.data)}` };
    case 'minLength':
      return { message: p.limit === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters` };
    case 'maxLength':
      return { message: `must be at most ${String(p.limit)} characters` };
    case 'minItems':
      return { message: `needs at least ${String(p.limit)} item(s)` };
    case 'minProperties':
      return { message: `needs at least ${String(p.limit)} entry` };
    case 'uniqueItems': {
      const [first, second] = [Number(p.i), Number(p.j)].sort((a, b) => a - b);
      return { message: `names ${shown((e.data as unknown[])[first])} twice (items ${first} and ${second})` };
    }
    default:
      return { message: e.message ?? 'is not valid' };
  }
}

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
