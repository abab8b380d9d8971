import {
  adHocLicenseRequestSchema,
  arrayOf,
  checkRoute,
  licenseSchema,
  licenseViews,
  int,
  object,
  noContent,
  ok,
  parseLicenseStatusFilter,
  querySchema,
  resource,
  route,
  bodySchema,
  typed,
  uuid,
  type Route,
} from '@tollgate/http';
import { licenseViewPages, licenseViewsOf, type V1Services } from './support';

export const licenseCountSchema = object({ count: int, assigned: int, unassigned: int });

const str = { type: 'string' } as const;
const granteeId = { type: ['string', 'null'], minLength: 1, maxLength: 320 } as const;
type LicenseRequest = { planUuid: string; member: string; granteeId: string | null };

export const createLicensesBody = typed<LicenseRequest | LicenseRequest[]>({
  anyOf: [adHocLicenseRequestSchema, { type: 'array', minItems: 1, maxItems: 100, items: adHocLicenseRequestSchema }],
});
export const batchUpdateBody = bodySchema({
  type: 'array',
  minItems: 1,
  maxItems: 500,
  items: {
    type: 'object',
    properties: { uuid, granteeId },
    required: ['uuid', 'granteeId'],
    additionalProperties: false,
  },
});
export const licenseUpdateBody = bodySchema({
  type: 'object',
  properties: { granteeId },
  required: ['granteeId'],
  additionalProperties: false,
});
export const licenseCancelBody = bodySchema({
  type: 'object',
  properties: { uuids: { type: 'array', minItems: 1, maxItems: 500, items: uuid } },
  required: ['uuids'],
  additionalProperties: false,
});
export const licenseCountQuery = querySchema({ status: str, subscriptionUuid: uuid });
/** `cursor` (from `x-next-cursor`) and `take` (1..1000) page the list; without them it is streamed whole. */
export const licenseListQuery = querySchema({
  status: str,
  subscriptionUuid: uuid,
  cursor: { type: 'string', minLength: 1, maxLength: 200 },
  take: { type: 'string', pattern: '^(1000|[1-9][0-9]{0,2})$' },
});
export const purchaserQuery = querySchema({ purchaser: { type: 'string', minLength: 1, maxLength: 320 }, productUuid: uuid, status: str }, [
  'purchaser',
]);
export const licenseStatusQuery = querySchema({ status: str });

const licenses$ = arrayOf(licenseSchema);

export function licenseRoutes({ core: { licenses, checks } }: V1Services): Route[] {
  const viewsOf = (ls: Parameters<typeof licenseViewsOf>[1]) => licenseViewsOf(licenses, ls);
  return resource({ name: 'licenses', description: 'Licenses of grantees, their seats, and the signed capability check' }, [
    route({
      method: 'post',
      path: '/licenses',
      operationId: 'createLicenses',
      summary: 'Create licenses',
      description: 'Ad hoc licenses on free or evaluation plans, without a subscription (one or a list, all or none).',
      scope: ['licenses', 'write'],
      body: createLicensesBody,
      response: { status: 200, schema: licenses$ },
      handle: async ({ tenant, body }) =>
        ok(licenseViews(await licenses.createAdHoc(tenant, Array.isArray(body) ? body : [body], { many: Array.isArray(body) }))),
    }),
    route({
      method: 'put',
      path: '/licenses',
      operationId: 'updateLicenses',
      summary: 'Batch update grantees',
      description:
        'Assigns (or with null unassigns) the grantee of several licenses at once, all or none. Every item is applied, then the result is checked: a grantee holds at most one seat of each plan of a subscription (400 `VALIDATION_FAILED` naming `[i].granteeId`). A swap or a move in one batch passes.',
      scope: ['licenses', 'write'],
      body: batchUpdateBody,
      response: { status: 200, schema: licenses$ },
      handle: async ({ tenant, body }) => ok(licenseViews(await licenses.batchUpdate(tenant, body))),
    }),
    route({
      method: 'get',
      path: '/licenses',
      operationId: 'getLicenses',
      summary: 'Get licenses (the whole list, streamed; or a page with cursor and take, the next cursor in x-next-cursor)',
      description: "The key's licenses, by status or subscription: streamed whole, or a page at a time with `cursor` and `take`.",
      scope: ['licenses', 'read'],
      query: licenseListQuery,
      list: true,
      response: { status: 200, schema: licenses$ },
      async handle({ tenant, query }) {
        const filter = { status: parseLicenseStatusFilter(query.status), subscriptionId: query.subscriptionUuid };
        if (query.cursor === undefined && query.take === undefined)
          return { status: 200, stream: licenseViewPages(licenses.pages(tenant, filter)) };
        const take = query.take ? Number(query.take) : 100;
        const items: unknown[] = [];
        let next: string | null = null;
        for await (const p of licenses.pages(tenant, filter, { after: query.cursor, take, batch: take })) {
          items.push(...licenseViews(p));
          next = p.nextCursor;
        }
        return { status: 200, body: items, headers: next ? { 'x-next-cursor': next } : undefined };
      },
    }),
    route({
      method: 'get',
      path: '/licenses/count',
      operationId: 'countLicenses',
      summary: 'Count licenses',
      description: 'How many licenses there are, assigned and unassigned, by status or subscription.',
      scope: ['licenses', 'read'],
      query: licenseCountQuery,
      response: { status: 200, schema: licenseCountSchema },
      handle: async ({ tenant, query }) =>
        ok(await licenses.count(tenant, { status: parseLicenseStatusFilter(query.status), subscriptionId: query.subscriptionUuid })),
    }),
    checkRoute(checks),
    route({
      method: 'get',
      path: '/licenses/purchaser',
      operationId: 'getPurchaserLicenses',
      summary: "A purchaser's licenses (streamed), optionally of one product and status",
      description: 'The licenses a customer bought, streamed.',
      scope: ['licenses', 'read'],
      query: purchaserQuery,
      list: true,
      response: { status: 200, schema: licenses$ },
      handle: ({ tenant, query }) => ({
        status: 200,
        stream: licenseViewPages(
          licenses.pages(tenant, {
            purchaser: query.purchaser,
            productId: query.productUuid,
            status: parseLicenseStatusFilter(query.status),
          }),
        ),
      }),
    }),
    route({
      method: 'get',
      path: '/licenses/granteeId/:granteeId',
      operationId: 'getGranteeLicenses',
      summary: "A grantee's licenses (streamed)",
      description: 'The licenses assigned to one grantee (a user of the vendor’s app), streamed.',
      scope: ['licenses', 'read'],
      textParams: ['granteeId'],
      query: licenseStatusQuery,
      list: true,
      response: { status: 200, schema: licenses$ },
      handle: ({ tenant, params, query }) => ({
        status: 200,
        stream: licenseViewPages(licenses.pages(tenant, { granteeId: params.granteeId, status: parseLicenseStatusFilter(query.status) })),
      }),
    }),
    route({
      method: 'post',
      path: '/licenses/cancel',
      operationId: 'cancelLicenses',
      summary: 'Cancel ad hoc licenses (all or none; a seat of a subscription is 409)',
      description: 'Ends ad hoc licenses at once; a license that is a seat of a subscription is changed through its subscription.',
      scope: ['licenses', 'write'],
      body: licenseCancelBody,
      response: { status: 204 },
      async handle({ tenant, body }) {
        await licenses.cancel(tenant, body.uuids);
        return noContent;
      },
    }),
    // After every fixed /licenses/... path: a UUID here is checked as one.
    route({
      method: 'get',
      path: '/licenses/:licenseUuid',
      operationId: 'getLicense',
      summary: 'Get a license',
      description: 'One license with the capabilities of its plan.',
      scope: ['licenses', 'read'],
      response: { status: 200, schema: licenseSchema },
      handle: async ({ tenant, params }) => ok((await viewsOf([await licenses.get(tenant, params.licenseUuid)]))[0]),
    }),
    route({
      method: 'put',
      path: '/licenses/:licenseUuid',
      operationId: 'updateLicense',
      summary: 'Assign (or unassign, null) the grantee of a license',
      description:
        'Gives the license to a grantee, or with null takes it back (the seat stays). A grantee holds at most one seat of each plan of a subscription: a seat for a grantee holding another seat of that subscription and plan is 400 `VALIDATION_FAILED` naming `granteeId`.',
      scope: ['licenses', 'write'],
      body: licenseUpdateBody,
      response: { status: 200, schema: licenseSchema },
      handle: async ({ tenant, params, body }) =>
        ok(licenseViews(await licenses.update(tenant, params.licenseUuid, { granteeId: body.granteeId }))[0]),
    }),
    route({
      method: 'delete',
      path: '/licenses/:licenseUuid',
      operationId: 'deleteLicense',
      summary: 'Cancel an ad hoc license (a seat of a subscription is 409)',
      description: 'Ends one ad hoc license at once.',
      scope: ['licenses', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await licenses.cancel(tenant, [params.licenseUuid]);
        return noContent;
      },
    }),
  ]);
}
