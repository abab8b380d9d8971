import type { LicenseService } from '@tollgate/core';
import { route, type Route } from './routes';
import { checkSchema } from './schemas';
import { checkView } from './views';
import { parseGrace, parseGranteeIds } from './params';

/** The check's query string (productUuid a UUID; the rest parsed by the edge parsers). */
export const checkQuerySchema = {
  type: 'object',
  properties: {
    productUuid: { type: 'string', format: 'uuid' },
    granteeIds: { type: 'string', minLength: 1 },
    grace: { type: 'string' },
    sigEncode: { enum: ['DER', 'der', 'P1363', 'p1363'] },
  },
  required: ['productUuid', 'granteeIds'],
};

/**
 * `GET /licenses/check` for legacy and v1: `productUuid`, `granteeIds` (`a,b` or `[a,b]`), `grace`
 * (days > 0), `sigEncode=P1363` for a raw r||s ECDSA signature. 204 when there is no capability.
 */
export function checkRoute(licenses: Pick<LicenseService, 'check'>): Route {
  return route<{ productUuid: string; granteeIds: string; grace?: string; sigEncode?: string }>({
    method: 'get',
    path: '/licenses/check',
    summary: 'Signed capability check (204: no capability)',
    scope: ['licenses', 'read'],
    query: checkQuerySchema,
    response: { status: 200, schema: checkSchema },
    async handle({ query: q, tenant }) {
      const result = await licenses.check(tenant, {
        productId: q.productUuid,
        granteeIds: parseGranteeIds(q.granteeIds),
        graceDays: parseGrace(q.grace),
        encoding: q.sigEncode?.toLowerCase() === 'p1363' ? 'p1363' : 'der',
      });
      return result ? { status: 200, body: checkView(result) } : { status: 204 };
    },
  });
}
