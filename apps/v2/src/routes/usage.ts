import { iso } from '@tollgate/core';
import { date, nstr, num, object, ok, querySchema, resource, route, typed, uniqueKeyOf, uuid } from '@tollgate/http';
import { paged, pageProps, pageSchema, takeOf, type RouteModule } from './support';

export const usageRecordSchema = object({
  uuid,
  unitCount: num,
  type: { enum: ['recorded', 'current', 'final'] },
  recordedAt: { anyOf: [date, { type: 'null' }] },
  resetAt: nstr,
  planUuid: uuid,
  licenseUuid: uuid,
  createdAt: date,
  updatedAt: date,
});
export const currentUsageSchema = object({ unitCount: num, updatedAt: date });

const granteeId = { type: 'string', minLength: 1, maxLength: 320 } as const;
const planUuid = { type: 'string', format: 'uuid' } as const;

export const usageBody = typed<{ granteeId: string; planUuid: string; countOptions: { increment: number } }>({
  type: 'object',
  properties: {
    granteeId,
    planUuid,
    countOptions: { type: 'object', properties: { increment: { type: 'number' } }, required: ['increment'], additionalProperties: false },
  },
  required: ['granteeId', 'planUuid', 'countOptions'],
  additionalProperties: false,
});

/**
 * Usage by grantee and plan (v2 and v3 alike): `PUT /usage` counts units under the grantee's
 * license of the plan (`unique-key` makes a retry count once), `GET /usage` lists what was
 * recorded, `GET /usage/current` the units of the period so far.
 */
export const usageRoutes: RouteModule = ({ core: { granteeUsage } }) =>
  resource({ name: 'usage', description: "Usage of a plan's usage feature by a grantee" }, [
    route({
      method: 'put',
      path: '/usage',
      operationId: 'updateLicenseUsage',
      summary: 'Record usage',
      description:
        "Adds `countOptions.increment` units to the usage of the grantee's license of the plan (its usage feature, else its first numerical one): a whole number, or a decimal of at most the meter's scale of places on a meter with decimal places. A `unique-key` header makes a retry count once (the SDK sends the literal `undefined` when it has none: that is read as no key).",
      scope: ['usage', 'write'],
      body: usageBody,
      meta: { parameters: [{ name: 'unique-key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } }] },
      response: { status: 200 },
      async handle({ req, tenant, body }) {
        await granteeUsage.record(
          tenant,
          { granteeId: body.granteeId, planId: body.planUuid, increment: body.countOptions.increment },
          uniqueKeyOf(req),
        );
        return { status: 200 };
      },
    }),
    route({
      method: 'get',
      path: '/usage',
      operationId: 'getAllUsageRecords',
      summary: 'Get usage records (a page)',
      description:
        "The units recorded for the holders of the grantee's licenses (of one plan with `planUuid`, one subscription with `subscriptionUuid`): its ad hoc licenses' own, and the usage of each subscription it holds a seat of, whichever seat recorded it (a subscription's seats count into one balance). Oldest first, or newest first with `sort=desc`; `cursor` is the last record of the page before. Every record is of `type` `recorded`; `licenseUuid` is the ad hoc license the units were recorded on, or for a subscription's usage the grantee's own seat of it, whichever seat recorded them (the ledger keeps the subscription, not the seat).",
      scope: ['usage', 'read'],
      query: querySchema(
        { ...pageProps, granteeId, planUuid, type: { type: 'string' }, status: { type: 'string' }, subscriptionUuid: planUuid },
        ['granteeId'],
      ),
      response: { status: 200, schema: pageSchema(usageRecordSchema) },
      async handle({ tenant, query }) {
        // Every record Tollgate keeps is a `recorded` one; `status` (of the real service's billing) is not kept.
        if (query.type !== undefined && query.type !== 'recorded') return ok(paged([]));
        const records = await granteeUsage.records(tenant, {
          granteeId: query.granteeId,
          planId: query.planUuid,
          subscriptionId: query.subscriptionUuid,
          take: takeOf(query),
          cursor: query.cursor,
          sort: query.sort === 'desc' ? 'desc' : 'asc',
        });
        const data = records.map((r) => ({
          uuid: r.id,
          unitCount: r.unitCount,
          type: 'recorded' as const,
          recordedAt: iso(r.createdAt),
          resetAt: null,
          planUuid: r.planId,
          licenseUuid: r.licenseId,
          createdAt: iso(r.createdAt),
          updatedAt: iso(r.createdAt),
        }));
        return ok(paged(data));
      },
    }),
    route({
      method: 'get',
      path: '/usage/current',
      operationId: 'getCurrentUsageRecord',
      summary: 'Current usage',
      description:
        "The units used so far this period under the grantee's license of the plan; `updatedAt` is when they last changed (none used yet: when the license started).",
      scope: ['usage', 'read'],
      query: querySchema({ granteeId, planUuid }, ['granteeId', 'planUuid']),
      response: { status: 200, schema: currentUsageSchema },
      async handle({ tenant, query }) {
        const { unitCount, updatedAt } = await granteeUsage.current(tenant, query.granteeId, query.planUuid);
        return ok({ unitCount, updatedAt: iso(updatedAt) });
      },
    }),
  ]);
