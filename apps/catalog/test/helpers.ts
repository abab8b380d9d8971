import request from 'supertest';
import type { Express } from 'express';

/** A catalog client: every call carries `Authorization: Bearer <key>`; writes may carry an `idempotency-key`. */
export function catalogApi(app: Express, key: string) {
  const as = (r: request.Test) => r.set('authorization', `Bearer ${key}`);
  const write = (r: request.Test, body?: object, idem?: string) => {
    if (idem !== undefined) r.set('idempotency-key', idem);
    return r.send(body);
  };
  return {
    get: (p: string) => as(request(app).get(p)),
    post: (p: string, body?: object, idem?: string) => write(as(request(app).post(p)), body, idem),
    put: (p: string, body?: object, idem?: string) => write(as(request(app).put(p)), body, idem),
    del: (p: string) => as(request(app).delete(p)),
  };
}
