import { createHash } from 'node:crypto';
import { canonicalJson } from '@tollgate/core';
import { object, ok, querySchema, resource, route, type Route } from '@tollgate/http';
import type { DeferredCheckout } from '../links';
import { linkRequest } from '../params';
import { checkoutOptionProps, type V1Services } from './support';

export const checkoutLinkSchema = object({ checkoutUrl: { type: 'string', format: 'uri' } });

const str = { type: 'string' } as const;
const nonEmpty = { type: 'string', minLength: 1 } as const;

export const checkoutLinkQuery = querySchema(
  {
    ...checkoutOptionProps,
    successUrl: str,
    cancelUrl: str,
    granteeId: nonEmpty,
    member: nonEmpty,
    owner: nonEmpty,
    quantity: str,
    changeQuantity: str,
  },
  // `member` or `owner`: checked when the request is read (core names `member` when both lack).
  ['successUrl', 'cancelUrl', 'granteeId'],
);

const checkoutTag = { name: 'checkout', description: 'Checkout links that send a customer to pay for a plan' };

export const checkoutRoutes = ({ core: { checkout } }: V1Services): Route[] =>
  resource(checkoutTag, [
    route({
      method: 'get',
      path: '/plans/:planUuid/checkoutlink',
      operationId: 'getCheckoutLink',
      summary: 'Get a checkout link',
      description: "A checkout session for the plan at the payment provider: send the customer's browser to `checkoutUrl`.",
      scope: ['plans', 'read'],
      query: checkoutLinkQuery,
      response: { status: 200, schema: checkoutLinkSchema },
      handle: async ({ tenant, params, query }) =>
        ok({ checkoutUrl: (await checkout.checkoutLink(tenant, params.planUuid, linkRequest(query))).url }),
    }),
  ]);

/** A verified payload that is a deferred checkout link (not another link signed with the same secret). */
const isDeferredCheckout = (p: unknown): p is DeferredCheckout => {
  const o = p as Partial<DeferredCheckout> & { kind?: unknown };
  return (
    !!o &&
    typeof o === 'object' &&
    o.kind === undefined &&
    typeof o.organisationId === 'string' &&
    typeof o.isTest === 'boolean' &&
    typeof o.planId === 'string' &&
    !!o.request &&
    typeof o.request === 'object'
  );
};

/**
 * The reuse key of a deferred link: what it grants (organisation, mode, plan, request), without its
 * expiry, so that the links of every view of a pricing table (each signed anew) for the same
 * customer and plan share one checkout session, as do the spellings of one link.
 */
export const deferredLinkKey = (link: DeferredCheckout): string =>
  createHash('sha256')
    .update(canonicalJson({ organisationId: link.organisationId, isTest: link.isTest, planId: link.planId, request: link.request }))
    .digest('base64url');

/**
 * `GET /checkout/start/:token` (no API key: the customer's browser follows it): creates the
 * checkout for a deferred link, once per link and customer (later follows, and the links of later
 * views of the same table for the same request, reuse it while it is open and on the same terms),
 * and answers 303 to the provider's checkout page.
 */
export function checkoutStartRoutes({ core, links, clock }: Pick<V1Services, 'core' | 'links' | 'clock'>): Route[] {
  return resource(checkoutTag, [
    route({
      method: 'get',
      path: '/checkout/start/:token',
      operationId: 'startCheckout',
      summary: "Follow a pricing table's checkout link",
      description:
        "Creates the checkout session of a deferred link the first time the customer follows it (later follows, and links of later views of the table for the same plan and request, reuse it while it is open, under a day old and on the same terms: once paid, canceled or expired, or after the plan's price, names or seat terms changed, a new session is made), and redirects to it.",
      textParams: ['token'],
      response: { status: 303, description: 'to the checkout page' },
      async handle({ params }) {
        const link = links.verify<unknown>(params.token, clock.now());
        if (!isDeferredCheckout(link)) {
          return {
            status: 404,
            body: { error: 'this checkout link is not valid or has expired; reload the pricing page', code: 'NOT_FOUND' },
          };
        }
        const { url } = await core.checkout.followDeferredLink(
          { organisationId: link.organisationId, isTest: link.isTest },
          link.planId,
          link.request,
          deferredLinkKey(link),
        );
        return { status: 303, headers: { Location: url } };
      },
    }),
  ]);
}
