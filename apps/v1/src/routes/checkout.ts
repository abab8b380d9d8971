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

/**
 * `GET /checkout/start/:token` (no API key: the customer's browser follows it): creates the
 * checkout for a deferred link and answers 303 to the provider's checkout page.
 */
export function checkoutStartRoutes({ core, links, clock }: Pick<V1Services, 'core' | 'links' | 'clock'>): Route[] {
  return resource(checkoutTag, [
    route({
      method: 'get',
      path: '/checkout/start/:token',
      operationId: 'startCheckout',
      summary: "Follow a pricing table's checkout link",
      description: 'Creates the checkout session of a deferred link when the customer follows it, and redirects to it.',
      textParams: ['token'],
      response: { status: 303, description: 'to the checkout page' },
      async handle({ params }) {
        const link = links.verify<DeferredCheckout>(params.token, clock.now());
        if (!link) {
          return {
            status: 404,
            body: { error: 'this checkout link is not valid or has expired; reload the pricing page', code: 'NOT_FOUND' },
          };
        }
        const { url } = await core.checkout.checkoutLink(
          { organisationId: link.organisationId, isTest: link.isTest },
          link.planId,
          link.request,
        );
        return { status: 303, headers: { Location: url } };
      },
    }),
  ]);
}
