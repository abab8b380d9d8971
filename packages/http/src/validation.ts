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

/** A compiled check that throws VALIDATION_FAILED naming every offending property. */
export function compile<T>(schema: JSONSchemaType<T> | object): (value: unknown) => T {
  const validate = ajv.compile(schema) as ValidateFunction<T>;
  return (value: unknown) => {
    if (validate(value)) return value;
    const details = (validate.errors ?? []).map(detail);
    throw new DomainError(ErrorCodes.VALIDATION_FAILED, details.map((d) => `${d.property} ${d.error}`).join('; '), details);
  };
}
