import type { RequestHandler } from 'express';
import type { LicenseService } from '@tollgate/core';
import { tenantOf } from './auth';
import { sendEmpty, sendJson } from './json';
import { checkView } from './views/legacy';
import { compile } from './validation';

const checkQuery = compile<{ productUuid: string; granteeIds: string; grace?: string; sigEncode?: string }>({
  type: 'object',
  properties: {
    productUuid: { type: 'string', format: 'uuid' },
    granteeIds: { type: 'string', minLength: 1 },
    grace: { type: 'string' },
    sigEncode: { enum: ['DER', 'der', 'P1363', 'p1363'] },
  },
  required: ['productUuid', 'granteeIds'],
});

/**
 * `GET /licenses/check` for legacy and v1: `productUuid`, `granteeIds` (`a,b` or `[a,b]`), `grace`
 * (days > 0), `sigEncode=P1363` for a raw r||s ECDSA signature. 204 when there is no capability.
 */
export function capabilityCheckHandler(licenses: LicenseService): RequestHandler {
  return async (req, res) => {
    const q = checkQuery(req.query);
    const result = await licenses.check(tenantOf(res), {
      productUuid: q.productUuid,
      granteeIds: q.granteeIds,
      grace: q.grace,
      sigEncode: q.sigEncode?.toLowerCase() === 'p1363' ? 'p1363' : 'der',
    });
    if (!result) return sendEmpty(res, 204);
    sendJson(res, 200, checkView(result));
  };
}
