import { exactNumber, type Core } from '@tollgate/core';
import { arrayOf, num, object, resource, route, typed, uniqueKeyOf, uuid, type Route } from '@tollgate/http';

/** Units of one usage feature used under a license (the real v1 API's usage record). */
export const licenseUsageSchema = object({ licenseUuid: uuid, featureUuid: uuid, planUuid: uuid, unitCount: num });

export const usageBody = typed<{ licenseUuid: string; featureVariableName: string; countOptions: { increment: number } }>({
  type: 'object',
  properties: {
    licenseUuid: { type: 'string', format: 'uuid' },
    featureVariableName: { type: 'string', minLength: 1, maxLength: 255 },
    countOptions: { type: 'object', properties: { increment: { type: 'number' } }, required: ['increment'], additionalProperties: false },
  },
  required: ['licenseUuid', 'featureVariableName', 'countOptions'],
  additionalProperties: false,
});

const usageAnswerSchema = {
  type: 'object',
  properties: { licenseUuid: { type: 'string' }, featureVariableName: { type: 'string' }, unitCount: { type: 'number' } },
  required: ['licenseUuid', 'featureVariableName', 'unitCount'],
  additionalProperties: false,
};

/**
 * Usage as the real v1 clients send it (`PUT /usage` with header `unique-key`) and read it
 * (`GET /licenses/:licenseUuid/usage`), on the same exact core as the catalog's usage routes.
 */
export const v1UsageRoutes = ({ usage }: Pick<Core, 'usage'>): Route[] =>
  resource({ name: 'usage', description: 'Usage of usage features, recorded by license' }, [
    route({
      method: 'put',
      path: '/usage',
      operationId: 'updateUsage',
      summary: "Record usage of a license's usage feature; `unique-key` makes a retry count once",
      description:
        "Adds `countOptions.increment` units to the feature's usage by the license's holder (its subscription, or the ad hoc license). A `unique-key` header makes a retry count once (a client without a key may send the literal `undefined`: that is read as no key).",
      scope: ['usage', 'write'],
      body: usageBody,
      meta: { parameters: [{ name: 'unique-key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } }] },
      response: { status: 200, schema: usageAnswerSchema },
      handle: async ({ req, tenant, body }) => {
        const a = await usage.recordForLicense(
          tenant,
          { licenseId: body.licenseUuid, featureVariableName: body.featureVariableName, increment: body.countOptions.increment },
          uniqueKeyOf(req),
        );
        return {
          status: 200,
          body: { licenseUuid: body.licenseUuid, featureVariableName: body.featureVariableName, unitCount: exactNumber(a.used) },
        };
      },
    }),
    route({
      method: 'get',
      path: '/licenses/:licenseUuid/usage',
      operationId: 'getLicenseUsage',
      summary: "Units used this period per usage feature by the license's holder",
      description: 'The units recorded against the license (its subscription, or the ad hoc license itself), per usage feature.',
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
  ]);
