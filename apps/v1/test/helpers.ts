import request from 'supertest';
import type { Express } from 'express';
import { ajv } from '@tollgate/http';

export function expectSchema(schema: object, body: unknown): void {
  const validate = ajv.compile(schema);
  if (!validate(body))
    throw new Error(`response does not match the contract: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 2000)}`);
}

export const arrayOf = (items: object) => ({ type: 'array', items });

/** A v1 client: every call carries the key and `version: v1` unless told otherwise. */
export function v1(app: Express, key: string, version: string | null = 'v1') {
  const withHeaders = (r: request.Test) => {
    r.set('x-api-key', key);
    if (version !== null) r.set('version', version);
    return r;
  };
  return {
    get: (path: string) => withHeaders(request(app).get(path)),
    put: (path: string, body?: object) => withHeaders(request(app).put(path)).send(body),
    post: (path: string, body?: object) => withHeaders(request(app).post(path)).send(body),
  };
}
