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

/** Problems one check lists at most; a last entry then says more were left out. */
export const CATALOG_FILE_MAX_PROBLEMS = 100;

/**
 * Values of a bad file (list items and object members, in the file's order) the problem report
 * reads in full. Past them it reads only the members the schema names and the first item of each
 * list: ajv's every-error pass (an error object per problem, and a problem per bad item) then works
 * on a bounded part of any file, while whether a file is good is always decided on all of it.
 */
export const CATALOG_FILE_REPORT_VALUES = 20_000;

/** Deeper than the schema reaches (its deepest value, a tier's `upTo`, is 10 levels down). */
const SCHEMA_DEPTH = 12;

type JsonObject = Record<string, unknown>;

interface Validators {
  /** Stops at the first problem: what decides whether the file is good, in time linear in its size. */
  first: ValidateFunction;
  /** Every problem (`allErrors`): run on a bounded view of a bad file only. */
  all: ValidateFunction;
  /** Every member name the schema knows: a bounded view keeps them all (so no `required` is lost). */
  names: Set<string>;
  /** Where a `$ref` was inlined (schema path -> definition name), to read an error's path as before. */
  refs: Map<string, string>;
}

const validators = new Map<boolean, Validators>();
const validatorsFor = (organisationOptional: boolean): Validators => {
  const known = validators.get(organisationOptional);
  if (known) return known;
  const schema = JSON.parse(fs.readFileSync(CATALOG_FILE_SCHEMA_PATH, 'utf8')) as JsonObject;
  const refs = new Map<string, string>();
  // Every `$ref` inlined (the schema has no cycle): ajv compiles a referenced schema as a function
  // whose errors it concatenates onto the caller's (quadratic over many items), and checks
  // uniqueItems of `$ref` items pair by pair; inlined, both are linear.
  const inlined = inlineRefs(schema, schema.definitions as Record<string, JsonObject>, '#', refs) as JsonObject;
  delete inlined.definitions;
  delete inlined.$id;
  // Over HTTP the API key decides the organisation: the file may leave it out.
  if (organisationOptional) inlined.required = (inlined.required as string[]).filter((r) => r !== 'organisation');
  // strictNumbers: `strict: false` would let Infinity (YAML `.inf`, JSON `1e400`) pass as a number.
  const options = { verbose: true, strict: false, strictNumbers: true };
  const made: Validators = {
    first: new Ajv({ ...options, allErrors: false }).compile(inlined),
    all: new Ajv({ ...options, allErrors: true }).compile(inlined),
    names: memberNames(inlined),
    refs,
  };
  validators.set(organisationOptional, made);
  return made;
};

/** The schema with each `#/definitions/NAME` reference replaced by the definition (marked `x-ref: NAME`). */
function inlineRefs(
  node: unknown,
  definitions: Record<string, JsonObject>,
  at: string,
  refs: Map<string, string>,
  inlining: readonly string[] = [],
): unknown {
  if (Array.isArray(node)) return node.map((n, i) => inlineRefs(n, definitions, `${at}/${i}`, refs, inlining));
  if (node === null || typeof node !== 'object') return node;
  const { $ref, ...rest } = node as JsonObject;
  if (typeof $ref === 'string' && $ref.startsWith('#/definitions/')) {
    const name = $ref.slice('#/definitions/'.length);
    // Beside a `$ref`, draft-07 reads annotations only (`description`): the definition stands alone.
    const rules = Object.keys(rest).filter((k) => !['description', 'title', '$comment'].includes(k));
    if (rules.length) throw new Error(`catalog-file schema: ${at} has keywords beside its $ref`);
    // A misspelt name would inline a schema that accepts anything; a recursive one would never end.
    if (!definitions[name]) throw new Error(`catalog-file schema: ${at} refers to a missing definition ${name}`);
    if (inlining.includes(name)) throw new Error(`catalog-file schema: ${at} refers to ${name} within itself`);
    refs.set(at, name);
    return { ...(inlineRefs(definitions[name], definitions, at, refs, [...inlining, name]) as JsonObject), 'x-ref': name };
  }
  return Object.fromEntries(
    Object.entries(node as JsonObject).map(([k, v]) => [
      k,
      k === 'definitions' ? v : inlineRefs(v, definitions, `${at}/${k}`, refs, inlining),
    ]),
  );
}

function memberNames(node: unknown, names = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const n of node) memberNames(n, names);
  else if (node !== null && typeof node === 'object') {
    const { properties } = node as { properties?: unknown };
    if (properties && typeof properties === 'object') for (const k of Object.keys(properties)) names.add(k);
    for (const v of Object.values(node)) memberNames(v, names);
  }
  return names;
}

/**
 * The file as the report reads it: itself while it has at most `CATALOG_FILE_REPORT_VALUES` values;
 * past them, each list keeps its first item and each object the members the schema names and its
 * first other one. Nothing is added or reordered, and no object loses a member the schema requires
 * nor a list or map its only entry, so every problem of the view is one of the file.
 */
function reportView(file: unknown, names: Set<string>): { view: unknown; cut: boolean; originals: WeakMap<object, object> } {
  let left = CATALOG_FILE_REPORT_VALUES;
  let cut = false;
  // Each shortened list or object -> the file's own, which messages describe (`got 40000`).
  const originals = new WeakMap<object, object>();
  const walk = (value: unknown, depth: number): unknown => {
    if (value === null || typeof value !== 'object' || depth > SCHEMA_DEPTH) return value;
    if (Array.isArray(value)) {
      const items: unknown[] = [];
      let changed = false;
      for (const item of value) {
        if (left <= 0 && items.length) {
          cut = changed = true;
          break;
        }
        left--;
        const seen = walk(item, depth + 1);
        changed ||= seen !== item;
        items.push(seen);
      }
      if (!changed) return value;
      originals.set(items, value);
      return items;
    }
    const members: [string, unknown][] = [];
    let changed = false;
    let others = 0;
    for (const [k, v] of Object.entries(value)) {
      const named = names.has(k);
      if (left <= 0 && !named && others) {
        cut = changed = true;
        continue;
      }
      if (!named) others++;
      left--;
      const seen = walk(v, depth + 1);
      changed ||= seen !== v;
      members.push([k, seen]);
    }
    if (!changed) return value;
    // defineProperty: a member named `__proto__` stays a member.
    const copy: JsonObject = {};
    for (const [k, v] of members) Object.defineProperty(copy, k, { value: v, enumerable: true, writable: true, configurable: true });
    originals.set(copy, value);
    return copy;
  };
  const view = walk(file, 0);
  return { view, cut, originals };
}

/** How an entry point reads a file: over HTTP the API key decides the organisation, which the file may leave out. */
export interface CatalogFileCheck {
  organisationOptional?: boolean;
}

/**
 * The problems of a parsed catalog file against the schema (none: it has the file's shape), in
 * ajv's order: at most `CATALOG_FILE_MAX_PROBLEMS`, then one entry on the file (`(the file)`)
 * saying more were left out. Whether the file is good is decided on all of it; a bad file larger
 * than `CATALOG_FILE_REPORT_VALUES` values is reported from a bounded view of it (see reportView),
 * with its first problem always named.
 */
export function catalogFileProblems(file: unknown, options: CatalogFileCheck = {}): CatalogFileProblem[] {
  const v = validatorsFor(options.organisationOptional === true);
  if (v.first(file)) return [];
  const firstErrors = v.first.errors ?? [];
  // ajv keeps a call's errors (and through them the file) on the function until its next call.
  v.first.errors = null;
  const { view, cut, originals } = reportView(file, v.names);
  const problems: CatalogFileProblem[] = [];
  const said = new Set<string>();
  let more = false;
  const take = (errors: ErrorObject[]) => {
    for (const e of errors) {
      const data: unknown = e.data;
      const problem = problemOf(
        data !== null && typeof data === 'object' && originals.has(data) ? { ...e, data: originals.get(data) } : e,
        v.refs,
      );
      if (!problem) continue;
      // One value out of a range can break two keywords (`type` and `minimum`): said once.
      const id = `${problem.property}\u0000${problem.error}`;
      if (said.has(id)) continue;
      if (problems.length >= CATALOG_FILE_MAX_PROBLEMS) {
        more = true;
        return;
      }
      said.add(id);
      problems.push(problem);
    }
  };
  // The view may have left the first problem out (past its values): it is named first, as ajv
  // finds it first on the whole file.
  if (cut) take(firstErrors);
  v.all(view);
  const allErrors = v.all.errors ?? [];
  v.all.errors = null;
  take(allErrors);
  if (!problems.length) {
    // Only errors the report reads through (an anyOf's branches): the first one as ajv words it.
    const e = firstErrors[firstErrors.length - 1];
    problems.push({ property: renderPath(pathOf(e)), error: e?.message ?? 'is not valid', at: pathOf(e) });
  }
  if (more || cut)
    problems.push({
      property: renderPath([]),
      error: more
        ? `more problems left out: the first ${CATALOG_FILE_MAX_PROBLEMS} are listed`
        : `the file is large: only its first ${CATALOG_FILE_REPORT_VALUES} values were checked for every problem; fix these and check it again`,
      at: [],
    });
  return problems;
}

/** An error's instance path as segments (`['products', 0, 'plans', 1]`). */
const pathOf = (e: ErrorObject | undefined): (string | number)[] =>
  (e?.instancePath ?? '')
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));

/** The error's schema path as it read before the `$ref`s were inlined (`#/definitions/units/minimum`). */
function refPath(schemaPath: string, refs: Map<string, string>): string {
  let best = '';
  for (const at of refs.keys()) if ((schemaPath === at || schemaPath.startsWith(`${at}/`)) && at.length > best.length) best = at;
  return best ? `#/definitions/${refs.get(best) as string}${schemaPath.slice(best.length)}` : schemaPath;
}

/** An ajv error as a problem, or undefined when another error says it better. */
function problemOf(e: ErrorObject, refs: Map<string, string>): CatalogFileProblem | undefined {
  if (e.keyword === 'if' || e.keyword === '$ref') return undefined;
  // An anyOf's or oneOf's branches' own errors repeat what the anyOf or oneOf says (a branch's
  // `$ref` had its own path, and its errors are kept).
  if (/\/(oneOf|anyOf)\/\d+\//.test(refPath(e.schemaPath, refs))) return undefined;
  // A key's own pattern error repeats the propertyNames error that names the key.
  if (e.propertyName !== undefined && e.keyword !== 'propertyNames') return undefined;
  const at = pathOf(e);
  const { key, message } = describe(e);
  const shownAt = at.map((s) => (typeof s === 'string' ? clip(s) : s));
  const property = renderPath(key === undefined ? shownAt : [...shownAt, clip(key)]);
  return { property, error: message, at, ...(key === undefined ? {} : { key }) };
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
  /** The definition an inlined `$ref` named. */
  'x-ref'?: string;
};

/** Characters of a value or key a message repeats: a long one is cut (`…`), so an answer stays short. */
const SHOWN_MAX = 100;
const clip = (text: string) => (text.length > SHOWN_MAX ? `${text.slice(0, SHOWN_MAX)}…` : text);
const shown = (v: unknown) => (v === undefined ? 'nothing' : clip(JSON.stringify(v)));
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
  if (s['x-ref'] ?? s.$ref) return s['x-ref'] ?? (s.$ref?.split('/').pop() as string);
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
      const near = known.find((k) => Math.abs(k.length - key.length) <= 2 && distance(k.toLowerCase(), key.toLowerCase()) <= 2);
      return { key, message: `unknown key ${clip(key)}${near ? ` (did you mean ${near}?)` : ''}; allowed: ${known.join(', ')}` };
    }
    case 'propertyNames':
      return { key: String(p.propertyName), message: `${clip(String(p.propertyName))} is not allowed here` };
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
    case 'maxItems':
      return { message: `may hold at most ${String(p.limit)} items, got ${(e.data as unknown[]).length}` };
    case 'maxProperties':
      return { message: `may hold at most ${String(p.limit)} entries, got ${Object.keys(e.data as object).length}` };
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
