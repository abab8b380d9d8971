import Ajv, { type ErrorObject, type JSONSchemaType, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { DomainError, ErrorCodes, shortenText, truncateText, type ErrorDetail } from '@tollgate/core';

/**
 * One ajv instance for the process that tells every error of a value: schemas are compiled once,
 * when a route is defined. It builds an error object per offending value before anything is
 * refused, so `compile` asks it only about values small enough (see `report`).
 */
export const ajv = new Ajv({ allErrors: true, coerceTypes: false, useDefaults: true, strict: false });
addFormats(ajv);

/** The same rules stopping at the first error: what `compile` asks first (its work is bounded by the value, not by its errors). */
const firstErrorAjv = new Ajv({ allErrors: false, coerceTypes: false, useDefaults: true, strict: false });
addFormats(firstErrorAjv);

/**
 * Weight a refused value may have for every one of its errors to be looked for: each value (array
 * item, object member, scalar) weighs 1, plus 1 for every `PATH_CHARS_PER_WEIGHT` characters of its
 * path (an error repeats the keys on its path). A maximum-size v2 `manage-seats` body weighs 2 001.
 */
export const FULL_REPORT_VALUES = 5_000;
/** Characters of a value's path that weigh as much as one value (ordinary paths weigh nothing more). */
const PATH_CHARS_PER_WEIGHT = 200;
/** Items of each list checked for the report of a refused value larger than that. */
export const REPORTED_LIST_ITEMS = 50;
/** Errors told at most in one answer; the rest are counted in a last detail. */
export const REPORTED_ERRORS = 50;
/** Errors explained at most (`explainAnyOf` groups a union's branch errors): the rest are only counted. */
export const EXPLAINED_ERRORS = 400;
/** Characters of a detail's `property` (and `error`) told at most: a longer one keeps its start and end around `…`. */
export const REPORTED_PROPERTY_CHARS = 200;
/** Characters of the whole message told at most. */
export const REPORTED_MESSAGE_CHARS = 16_384;
/** Shortened lists named in the closing note at most. */
const NAMED_CUT_LISTS = 5;

/** `text` if at most `max` characters long, else its start and end around `…` (`max` characters in all). */
export function shorten(text: string, max = REPORTED_PROPERTY_CHARS): string {
  return shortenText(text, max);
}

/** ajv's instance path (a JSON pointer) as a detail's `property`, shortened before it is unescaped. */
const propertyOf = (instancePath: string, key?: unknown): string => {
  const path = shorten(instancePath.replace(/^\//, '')).replace(/\//g, '.');
  return shorten([path, key === undefined ? '' : shorten(String(key))].filter(Boolean).join('.'));
};

const detail = (e: ErrorObject): ErrorDetail => {
  if (e.keyword === 'required') return { property: propertyOf(e.instancePath, e.params.missingProperty), error: 'is required' };
  if (e.keyword === 'additionalProperties')
    return { property: propertyOf(e.instancePath, e.params.additionalProperty), error: 'is not allowed' };
  return { property: propertyOf(e.instancePath) || 'body', error: shorten(e.message ?? 'is not valid') };
};

const ARTICLE: Record<string, string> = { object: 'an object', array: 'an array', integer: 'an integer', null: 'null' };
const typeWords = (type: unknown): string[] =>
  (Array.isArray(type) ? type : String(type).split(',')).map((t) => ARTICLE[String(t)] ?? `a ${String(t)}`);

/**
 * ajv's errors of a failed `anyOf`, told as the branch the value's type picks: a body that is an
 * array is told what is wrong with the array, not also "must be object" and "must match a schema in
 * anyOf"; a value of no branch's type is told the types it may be ("must be an object or an array").
 */
function explainAnyOf(errors: ErrorObject[]): ErrorObject[] {
  let out = errors;
  for (const union of errors.filter((e) => e.keyword === 'anyOf')) {
    const prefix = `${union.schemaPath}/`;
    // An error at or under the union's value that is not under one of its branches' schema paths (a
    // `$ref` branch: ajv reports the referenced schema's path; a sibling keyword): which branch it
    // belongs to is not known, so ajv's own errors are kept.
    const under = (e: ErrorObject) => e.instancePath === union.instancePath || e.instancePath.startsWith(`${union.instancePath}/`);
    if (out.some((e) => e !== union && under(e) && !e.schemaPath.startsWith(prefix))) continue;
    // Only this union's own branch errors: the same schema path is every item's of a list.
    const branches = new Map<number, ErrorObject[]>();
    for (const e of out) {
      const m = under(e) && e.schemaPath.startsWith(prefix) ? /^(\d+)\//.exec(e.schemaPath.slice(prefix.length)) : null;
      if (m) {
        const i = Number(m[1]);
        const es = branches.get(i);
        if (es) es.push(e);
        else branches.set(i, [e]);
      }
    }
    const misfit = (i: number) =>
      (branches.get(i) ?? []).find(
        (e) => e.keyword === 'type' && e.schemaPath === `${prefix}${i}/type` && e.instancePath === union.instancePath,
      );
    const fitting = [...branches.keys()].filter((i) => !misfit(i));
    if (branches.size === 0 || fitting.length === branches.size) continue;
    const dropped = new Set<ErrorObject>([...branches.entries()].filter(([i]) => !fitting.includes(i)).flatMap(([, es]) => es));
    if (fitting.length === 1) dropped.add(union);
    if (fitting.length === 0) {
      const types = [...branches.keys()].flatMap((i) => typeWords(misfit(i)?.params.type));
      const told = `must be ${[...new Set(types)].join(' or ')}`;
      out = out.map((e) => (e === union ? { ...union, keyword: 'type', message: told } : e));
    }
    out = out.filter((e) => !dropped.has(e));
  }
  return out;
}

/**
 * The weight of `value` (see `FULL_REPORT_VALUES`: each value it holds, itself included, and the
 * characters of their paths), counted up to `limit + 1` (no more is walked); with `listItems`, as if
 * every list were cut to that many items.
 */
function countValues(value: unknown, limit: number, listItems = Infinity): number {
  let count = 1;
  // Each object or list still to walk, with the characters of its path.
  const stack: [unknown, number][] = [[value, 0]];
  const visit = (v: unknown, pathChars: number) => {
    count += 1 + Math.floor(pathChars / PATH_CHARS_PER_WEIGHT);
    if (v !== null && typeof v === 'object') stack.push([v, pathChars]);
    return count > limit;
  };
  while (stack.length > 0) {
    const [v, pathChars] = stack.pop()!;
    if (Array.isArray(v)) {
      const items = Math.min(v.length, listItems);
      for (let i = 0; i < items; i++) if (visit(v[i], pathChars + 1 + String(i).length)) return limit + 1;
    } else if (v !== null && typeof v === 'object') {
      for (const k in v) {
        if (!Object.hasOwn(v, k)) continue;
        if (visit((v as Record<string, unknown>)[k], pathChars + 1 + k.length)) return limit + 1;
      }
    }
  }
  return count;
}

const pointerPart = (key: string | number) => String(key).replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * A copy of the value with every list cut to its first `REPORTED_LIST_ITEMS` items (objects without
 * a prototype, as the query parser's), and the instance paths (ajv's JSON pointers) of the lists cut.
 */
function firstItems(value: unknown, path: string, cut: Set<string>): unknown {
  if (Array.isArray(value)) {
    if (value.length > REPORTED_LIST_ITEMS) cut.add(path);
    return value.slice(0, REPORTED_LIST_ITEMS).map((v, i) => firstItems(v, `${path}/${i}`, cut));
  }
  if (value === null || typeof value !== 'object') return value;
  const out = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of Object.entries(value)) out[k] = firstItems(v, `${path}/${pointerPart(k)}`, cut);
  return out;
}

/** Keywords a list cut short may fail that the whole list passes. */
const CUT_KEYWORDS = new Set(['minItems', 'contains', 'minContains']);

const sameError = (a: ErrorObject, b: ErrorObject) =>
  a.instancePath === b.instancePath && a.schemaPath === b.schemaPath && a.keyword === b.keyword;

/** Why a report may not hold every error: nothing said, the lists cut short, or only the first error was looked for. */
type Unchecked = { lists: string[] } | 'all-but-first' | undefined;

/**
 * The errors told of a refused value, in ajv's order: every one when the value is light enough
 * (`FULL_REPORT_VALUES`); else those of its lists' first items (with the first error found in the
 * whole value), or when even that is too heavy, the first error alone. `unchecked`: what was not.
 */
function report(full: () => ValidateFunction, firstErrors: ErrorObject[], value: unknown): { errors: ErrorObject[]; unchecked: Unchecked } {
  if (countValues(value, FULL_REPORT_VALUES) <= FULL_REPORT_VALUES) {
    const validate = full();
    validate(value);
    return { errors: validate.errors ?? firstErrors, unchecked: undefined };
  }
  if (countValues(value, FULL_REPORT_VALUES, REPORTED_LIST_ITEMS) > FULL_REPORT_VALUES)
    return { errors: firstErrors, unchecked: 'all-but-first' };
  const cut = new Set<string>();
  const shortened = firstItems(value, '', cut);
  const validate = full();
  validate(shortened);
  const found = (validate.errors ?? []).filter((e) => !(CUT_KEYWORDS.has(e.keyword) && cut.has(e.instancePath)));
  // The first error of the whole value (a list's `maxItems`, an item past those checked) is told too.
  const missed = firstErrors.filter((e) => !found.some((f) => sameError(e, f)));
  return { errors: [...missed, ...found], unchecked: { lists: [...cut] } };
}

/** The closing detail of a report that does not tell every error, if any. */
function closingNote(told: number, explained: number, uncounted: boolean, unchecked: Unchecked): ErrorDetail | undefined {
  if (unchecked === 'all-but-first')
    return { property: 'body', error: 'may have more errors, left out: the value is too large to check for more than its first error' };
  if (unchecked) {
    const named = unchecked.lists.slice(0, NAMED_CUT_LISTS).map((l) => propertyOf(l) || 'body');
    const others = unchecked.lists.length - named.length;
    const lists = `${named.join(', ')}${others > 0 ? ` and ${others} more list${others === 1 ? '' : 's'}` : ''}`;
    return {
      property: 'body',
      error: `may have more errors, left out: the value is too large to check for every one (only the first ${REPORTED_LIST_ITEMS} items of ${lists} were checked)`,
    };
  }
  const leftOut = explained - told;
  if (uncounted) return { property: 'body', error: `has at least ${Math.max(leftOut, 1)} more error${leftOut > 1 ? 's' : ''}, left out` };
  if (leftOut > 0) return { property: 'body', error: `has ${leftOut} more error${leftOut === 1 ? '' : 's'}, left out` };
  return undefined;
}

/** `details` as one message, at most `REPORTED_MESSAGE_CHARS` characters. */
const messageOf = (details: ErrorDetail[]): string => {
  const message = details.map((d) => `${d.property} ${d.error}`).join('; ');
  return truncateText(message, REPORTED_MESSAGE_CHARS);
};

/**
 * A compiled check that throws VALIDATION_FAILED naming every offending property (at most
 * `REPORTED_ERRORS` of them, then how many more). A value is first checked up to its first error:
 * only a refused one is checked again for the report, which is bounded (`report`), so no value
 * the body limit lets through makes validation build an error per item of a huge list. At most
 * `EXPLAINED_ERRORS` errors are explained and made details, each property and error shortened.
 */
export function compile<T>(schema: JSONSchemaType<T> | object): (value: unknown) => T {
  const first = firstErrorAjv.compile(schema) as ValidateFunction<T>;
  let fullValidate: ValidateFunction | undefined;
  // Compiled on the first refusal: a route that is never refused never pays for it.
  const full = () => (fullValidate ??= ajv.compile(schema));
  return (value: unknown) => {
    if (first(value)) return value;
    const { errors, unchecked } = report(full, first.errors ?? [], value);
    const explained = explainAnyOf(errors.slice(0, EXPLAINED_ERRORS));
    const details = explained.slice(0, REPORTED_ERRORS).map(detail);
    // Past those explained, an error is one detail unless a union's (`anyOf`) might group it.
    const rest = errors.slice(EXPLAINED_ERRORS);
    const uncounted = rest.some((e) => e.keyword === 'anyOf');
    const note = closingNote(details.length, explained.length + (uncounted ? 0 : rest.length), uncounted, unchecked);
    if (note) details.push(note);
    throw new DomainError(ErrorCodes.VALIDATION_FAILED, messageOf(details), details);
  };
}
