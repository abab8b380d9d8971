import type { Core } from '@tollgate/core';
import {
  adHocLicenseRequestSchema,
  arrayOf,
  checkRoute,
  licenseSchema,
  licenseViews,
  resource,
  route,
  typed,
  type Route,
} from '@tollgate/http';

type LicenseRequest = { planUuid: string; member: string; granteeId: string | null };

/** One request, or up to 100 at once (all or none). */
const licenseRequestBody = typed<LicenseRequest | LicenseRequest[]>({
  anyOf: [adHocLicenseRequestSchema, { type: 'array', minItems: 1, maxItems: 100, items: adHocLicenseRequestSchema }],
});

/** The signed capability check and ad hoc licenses. */
export const licenseRoutes = ({ licenses, checks }: Pick<Core, 'licenses' | 'checks'>): Route[] =>
  resource({ name: 'licenses', description: 'Licenses of grantees and the signed capability check' }, [
    checkRoute(checks),
    route({
      method: 'post',
      path: '/licenses',
      operationId: 'createLicenses',
      summary: 'Create ad hoc license(s): free or evaluation plans',
      description:
        'Licenses on free or evaluation plans, without a subscription: one request answers one license, a list answers a list (all or none).',
      scope: ['licenses', 'write'],
      body: licenseRequestBody,
      response: { status: 201, schema: { anyOf: [licenseSchema, arrayOf(licenseSchema)] } },
      async handle({ tenant, body }) {
        // The views come from the write's own transaction: nothing is read after the commit.
        const views = licenseViews(await licenses.createAdHoc(tenant, Array.isArray(body) ? body : [body], { many: Array.isArray(body) }));
        return { status: 201, body: Array.isArray(body) ? views : views[0] };
      },
    }),
  ]);
