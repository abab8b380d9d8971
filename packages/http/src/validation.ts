import Ajv, { type ErrorObject, type JSONSchemaType, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { DomainError, ErrorCodes, type ErrorDetail } from '@tollgate/core';

/** One ajv instance for the process: schemas are compiled once, when a route is defined. */
export const ajv = new Ajv({ allErrors: true, coerceTypes: false, useDefaults: true, strict: false });
addFormats(ajv);

const detail = (e: ErrorObject): ErrorDetail => {
  const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (e.keyword === 'required') return { property: [path, e.params.missingProperty].filter(Boolean).join('.'), error: 'is required' };
  if (e.keyword === 'additionalProperties')
    return { property: [path, e.params.additionalProperty].filter(Boolean).join('.'), error: 'is not allowed' };
  return { property: path || 'body', error: e.message ?? 'is not valid' };
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
    const branches = new Map<number, ErrorObject[]>();
    for (const e of out) {
      const m = e.schemaPath.startsWith(prefix) ? /^(\d+)\//.exec(e.schemaPath.slice(prefix.length)) : null;
      if (m) branches.set(Number(m[1]), [...(branches.get(Number(m[1])) ?? []), e]);
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

/** A compiled check that throws VALIDATION_FAILED naming every offending property. */
export function compile<T>(schema: JSONSchemaType<T> | object): (value: unknown) => T {
  const validate = ajv.compile(schema) as ValidateFunction<T>;
  return (value: unknown) => {
    if (validate(value)) return value;
    const details = explainAnyOf(validate.errors ?? []).map(detail);
    throw new DomainError(ErrorCodes.VALIDATION_FAILED, details.map((d) => `${d.property} ${d.error}`).join('; '), details);
  };
}
