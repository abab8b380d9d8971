import { encodeCursor, invalid, type License, type LicenseStatus, type Tenant } from '@tollgate/core';
import {
  adHocLicenseRequestSchema,
  arrayOf,
  bodySchema,
  FROM_MEMORY_HEADER,
  parseGrace,
  parseGranteeIds,
  licenseSchema,
  licenseView,
  licenseViews,
  ok,
  parseLicenseStatusFilter,
  querySchema,
  resource,
  route,
  typed,
  v2CheckQuerySchema,
  v2CheckSchema,
  v2CheckView,
  type Route,
} from '@tollgate/http';
import { v1Routes } from '@tollgate/app-v1';
import { extend, planSchema } from '../schemas';
import { planView } from '../views';
import { parseExpandV } from './expand';
import { pageSchema, paged, pageProps, takeOf, type RouteModule, type V2Services } from './support';

const str = { type: 'string' } as const;
const id = { type: 'string', format: 'uuid' } as const;
type LicenseRequest = {
  planUuid: string;
  member: string;
  granteeId: string | null;
  status?: 'ACTIVE' | 'TRIALING';
  endTime?: string;
  cancelAtPeriodEnd?: boolean;
};

/**
 * v2's ad hoc license: v1's request plus what the SDK's `CreateAdhocLicenseInput` declares
 * (`status`, `endTime`, `cancelAtPeriodEnd`). v1 and legacy keep the shared schema, unchanged.
 */
export const adHocLicenseRequestV2 = {
  ...adHocLicenseRequestSchema,
  properties: {
    ...adHocLicenseRequestSchema.properties,
    status: { enum: ['ACTIVE', 'TRIALING'] },
    endTime: { type: 'string', format: 'date-time' },
    cancelAtPeriodEnd: { type: 'boolean' },
  },
};

/**
 * What the SDK's members of an ad hoc license mean here, checked for every request before any is
 * made (all or none): `status` may only be the one the plan starts its licenses in (ACTIVE; an
 * evaluation plan's start EVALUATION), as `POST /subscriptions` takes it, for a status setter
 * would bypass the status table; `endTime` (ahead) is when the license ends; an ad hoc license never
 * renews, so `cancelAtPeriodEnd` may only be false (it ends at its `endTime`, or never).
 */
async function checkLicenseRequests(s: V2Services, tenant: Tenant, requests: LicenseRequest[], many: boolean): Promise<void> {
  const now = s.clock.now();
  for (const [i, r] of requests.entries()) {
    const name = (member: string) => (many ? `[${i}].${member}` : member);
    if (r.endTime !== undefined) {
      // The schema's date-time admits a leap second (…T23:59:60Z), which a Date cannot hold.
      const end = new Date(r.endTime).getTime();
      if (!Number.isFinite(end)) invalid(name('endTime'), 'must be a date-time a clock can show (no leap second)');
      if (end <= now.getTime()) invalid(name('endTime'), 'must lie in the future');
    }
    if (r.cancelAtPeriodEnd === true)
      invalid(name('cancelAtPeriodEnd'), 'an ad hoc license does not renew: it ends at its endTime (or never), so it may only be false');
    if (r.status !== undefined) {
      const { plan } = await s.core.queries.getPlan(tenant, r.planUuid);
      const starts = plan.evaluation && plan.evalDays > 0 ? 'EVALUATION' : 'ACTIVE';
      if (r.status !== starts) invalid(name('status'), `an ad hoc license of this plan starts ${starts}`);
    }
  }
}

/** v1's license operations v2 answers the same way (batch grantees, count, purchaser, cancel). */
const SAME_AS_V1 = new Set(['updateLicenses', 'countLicenses', 'getPurchaserLicenses', 'cancelLicenses', 'deleteLicense']);

const licenseWithPlan = extend(licenseSchema, {});
licenseWithPlan.properties.plan = planSchema('v2');

/** Licenses with the capabilities of their plans, and their plan when `expand=plan`. */
async function viewsOf(s: V2Services, tenant: Tenant, ls: License[], expand: unknown) {
  const withPlan = parseExpandV(expand, ['plan']).has('plan');
  const caps = await s.core.licenses.capabilitiesOf(ls);
  const plans = new Map<string, unknown>();
  if (withPlan)
    for (const planId of new Set(ls.map((l) => l.planId))) {
      const { plan, catalog } = await s.core.queries.getPlan(tenant, planId);
      plans.set(planId, planView('v2', plan, catalog));
    }
  return ls.map((l) => ({ ...licenseView(l, caps.get(l.planId) ?? []), ...(withPlan ? { plan: plans.get(l.planId) } : {}) }));
}

/** v2 licenses (v3 has none): a page of them, one or many created, one with its plan, a grantee's; the rest as v1. */
export const licenseRoutes: RouteModule = (s, version) => {
  if (version === 'v3') return [];
  const { licenses } = s.core;
  // v2 answers v1's 409s as 400 (app.ts, VERSION_ERROR_STATUS): the summaries say so.
  const sameAsV1: Route[] = v1Routes(s)
    .filter((r) => SAME_AS_V1.has(r.operationId))
    .map((r) => ({ ...r, summary: r.summary.replace('is 409', 'is 400') }));
  const tag = sameAsV1[0].tag;
  return [
    ...resource(tag, [
      route({
        method: 'post',
        path: '/licenses',
        operationId: 'createLicenses',
        summary: 'Create a license (an object) or licenses (an array)',
        description:
          'Ad hoc licenses on free or evaluation plans, without a subscription: one object answers the license, an array the list (all or none). `endTime` (ahead) sets when a license ends; `status` may only be the one the plan starts its licenses in (ACTIVE; an evaluation plan: EVALUATION, so none); `cancelAtPeriodEnd` only false (an ad hoc license never renews).',
        scope: ['licenses', 'write'],
        body: typed<LicenseRequest | LicenseRequest[]>({
          anyOf: [adHocLicenseRequestV2, { type: 'array', minItems: 1, maxItems: 100, items: adHocLicenseRequestV2 }],
        }),
        response: { status: 200, schema: { anyOf: [licenseSchema, arrayOf(licenseSchema)] } },
        async handle({ tenant, body }) {
          const requests = Array.isArray(body) ? body : [body];
          await checkLicenseRequests(s, tenant, requests, Array.isArray(body));
          // Each asked end is set in the creation's transaction (checked above, named per member).
          const made = await licenses.createAdHoc(
            tenant,
            requests.map(({ planUuid, member, granteeId, endTime }) => ({
              planUuid,
              member,
              granteeId,
              ...(endTime === undefined ? {} : { endTime: new Date(endTime) }),
            })),
            { many: Array.isArray(body) },
          );
          const created = licenseViews(made);
          return ok(Array.isArray(body) ? created : created[0]);
        },
      }),
      route({
        method: 'get',
        path: '/licenses',
        operationId: 'getLicenses',
        summary: 'Get licenses (a page)',
        description:
          'A page of the licenses, oldest first, by status, subscription, grantee, plan or product; `cursor` is the last license of the page before.',
        scope: ['licenses', 'read'],
        query: querySchema({ ...pageProps, status: str, subscriptionUuid: id, granteeId: str, planUuid: id, productUuid: id }),
        response: { status: 200, schema: pageSchema(licenseSchema) },
        async handle({ tenant, query }) {
          const after = query.cursor === undefined ? undefined : encodeCursor(await licenses.get(tenant, query.cursor));
          const filter = {
            status: parseLicenseStatusFilter(query.status) as LicenseStatus | undefined,
            subscriptionId: query.subscriptionUuid,
            granteeId: query.granteeId,
            planId: query.planUuid,
            productId: query.productUuid,
          };
          const items = [];
          for await (const p of licenses.pages(tenant, filter, { after, take: takeOf(query) })) items.push(...licenseViews(p));
          return ok(paged(items));
        },
      }),
      route({
        method: 'get',
        path: '/licenses/granteeId/:granteeId',
        operationId: 'getGranteeLicenses',
        summary: "A grantee's licenses",
        description: 'The licenses assigned to one grantee; `expand=plan` brings each one’s plan.',
        scope: ['licenses', 'read'],
        textParams: ['granteeId'],
        query: querySchema({ expand: str, status: str }),
        response: { status: 200, schema: arrayOf(licenseWithPlan) },
        handle: async ({ tenant, params, query }) =>
          ok(
            await viewsOf(
              s,
              tenant,
              await licenses.list(tenant, {
                granteeId: params.granteeId,
                status: parseLicenseStatusFilter(query.status) as LicenseStatus | undefined,
              }),
              query.expand,
            ),
          ),
      }),
    ]),
    ...sameAsV1.filter((r) => r.path !== '/licenses/:licenseUuid'),
    ...resource(tag, [
      route({
        method: 'get',
        path: '/licenses/check',
        operationId: 'checkLicenses',
        summary: 'Signed capability check (204: no capability)',
        description:
          "What the grantees may do in a product, signed, in SDK 5's shape: each capability with when it ends (`expiry`, its latest end) and a DER signature of the check, as v3 `/entitlements/check` signs it. `grace` (days > 0) counts licenses ended that many days ago, as v1. 204 when the grantees have no capability.",
        scope: ['checks', 'read'],
        // The schema, the shape and the body are the check fast path's own (packages/http/src/check.ts):
        // it answers SDK 5's call with these bytes outside express.
        query: v2CheckQuerySchema,
        response: { status: 200, schema: v2CheckSchema },
        otherResponses: [{ status: 204, description: 'no capability' }],
        async handle({ tenant, query }) {
          let headers: Record<string, string> | undefined;
          const c = await s.core.checks.check(
            tenant,
            {
              productId: query.productUuid,
              granteeIds: parseGranteeIds(query.granteeIds),
              graceDays: parseGrace(query.grace),
              encoding: 'der',
            },
            // Answered from memory in an outage: marked as v1's check marks it (docs/reliability.md).
            { fromMemory: () => (headers = { [FROM_MEMORY_HEADER]: 'database-unavailable' }) },
          );
          return c ? { status: 200, body: v2CheckView(c), headers } : { status: 204, headers };
        },
      }),
      route({
        method: 'get',
        path: '/licenses/:licenseUuid',
        operationId: 'getLicense',
        summary: 'Get a license',
        description: 'One license with the capabilities of its plan; `expand=plan` brings the plan.',
        scope: ['licenses', 'read'],
        query: querySchema({ expand: str }),
        response: { status: 200, schema: licenseWithPlan },
        handle: async ({ tenant, params, query }) =>
          ok((await viewsOf(s, tenant, [await licenses.get(tenant, params.licenseUuid)], query.expand))[0]),
      }),
      route({
        method: 'put',
        path: '/licenses/:licenseUuid',
        operationId: 'updateLicense',
        summary: "Set a license's grantee (null: unassign) and an ad hoc license's end",
        description:
          'Gives the license to a grantee, or with null takes it back; `endTime` moves when an ad hoc license ends (a seat ends with its subscription: 400). A seat may not go to a grantee that holds another seat of its subscription (400 naming `granteeId`).',
        scope: ['licenses', 'write'],
        body: bodySchema({
          type: 'object',
          properties: {
            granteeId: { type: ['string', 'null'], minLength: 1, maxLength: 320 },
            endTime: { type: 'string', format: 'date-time' },
          },
          required: ['granteeId'],
          additionalProperties: false,
        }),
        response: { status: 200, schema: licenseSchema },
        async handle({ tenant, params, body }) {
          const written = await licenses.update(tenant, params.licenseUuid, {
            granteeId: body.granteeId,
            endTime: body.endTime === undefined ? undefined : new Date(body.endTime),
          });
          return ok(licenseViews(written)[0]);
        },
      }),
    ]),
    ...sameAsV1.filter((r) => r.path === '/licenses/:licenseUuid'),
  ];
};
