import type { Core } from '@tollgate/core';
import { arrayOf, route, type Route } from '@tollgate/http';
import { licenseUsageSchema } from '../schemas';

interface UsageBody {
  licenseUuid: string;
  featureVariableName: string;
  countOptions: { increment: number };
}

/**
 * Usage as the real v1 clients send it (`PUT /usage` with header `unique-key`) and read it
 * (`GET /licenses/:licenseUuid/usage`), on the same exact core as the catalog's usage routes.
 */
export function v1UsageRoutes({ usage }: Pick<Core, 'usage'>): Route[] {
  return [
    route<Record<string, string>, UsageBody>({
      method: 'put',
      path: '/usage',
      summary: "Record usage of a license's usage feature; `unique-key` makes a retry count once",
      scope: ['usage', 'write'],
      body: {
        type: 'object',
        properties: {
          licenseUuid: { type: 'string', format: 'uuid' },
          featureVariableName: { type: 'string', minLength: 1, maxLength: 255 },
          countOptions: {
            type: 'object',
            properties: { increment: { type: 'integer' } },
            required: ['increment'],
            additionalProperties: false,
          },
        },
        required: ['licenseUuid', 'featureVariableName', 'countOptions'],
        additionalProperties: false,
      },
      meta: { parameters: [{ name: 'unique-key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } }] },
      response: {
        status: 200,
        schema: {
          type: 'object',
          properties: { licenseUuid: { type: 'string' }, featureVariableName: { type: 'string' }, unitCount: { type: 'integer' } },
          required: ['licenseUuid', 'featureVariableName', 'unitCount'],
        },
      },
      handle: async ({ req, tenant, body }) => {
        const a = await usage.recordForLicense(
          tenant,
          { licenseId: body.licenseUuid, featureVariableName: body.featureVariableName, increment: body.countOptions.increment },
          req.get('unique-key') ?? undefined,
        );
        return {
          status: 200,
          body: { licenseUuid: body.licenseUuid, featureVariableName: body.featureVariableName, unitCount: Number(a.used) },
        };
      },
    }),
    route({
      method: 'get',
      path: '/licenses/:licenseUuid/usage',
      summary: "Units used this period per usage feature by the license's holder (its subscription, or the ad hoc license)",
      scope: ['licenses', 'read'],
      response: { status: 200, schema: arrayOf(licenseUsageSchema) },
      handle: async ({ tenant, params }) => ({
        status: 200,
        body: (await usage.licenseUsage(tenant, params.licenseUuid)).map((u) => ({
          licenseUuid: u.licenseId,
          featureUuid: u.featureId,
          planUuid: u.planId,
          unitCount: u.unitCount,
        })),
      }),
    }),
  ];
}
