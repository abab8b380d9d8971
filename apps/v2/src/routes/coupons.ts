import { bodySchema, noContent, resource, route, type RouteDef } from '@tollgate/http';
import type { RouteModule } from './support';

export const couponBody = bodySchema({
  type: 'object',
  properties: { couponUuid: { type: 'string', minLength: 1, maxLength: 255 } },
  required: ['couponUuid'],
  additionalProperties: false,
});

/**
 * Coupons of a subscription through the payment provider (v2 and v3 alike): `POST` applies one,
 * `PUT` removes it (the SDK's spelling; no `DELETE`). `couponUuid` is the provider's code for it.
 */
export const couponRoutes: RouteModule = ({ core: { coupons } }) => {
  const op = (method: 'post' | 'put', apply: boolean): RouteDef =>
    route({
      method,
      path: '/subscriptions/:subscriptionUuid/coupons',
      operationId: apply ? 'addCoupon' : 'removeCoupon',
      summary: apply ? 'Apply a coupon' : 'Remove a coupon',
      description: apply
        ? "Applies the coupon (the payment provider's coupon or promotion code) to the subscription's next invoices; applying it again changes nothing."
        : 'Removes a coupon applied to the subscription (404 when it is not applied).',
      scope: ['subscriptions', 'write'],
      body: couponBody,
      response: { status: 204 },
      async handle({ tenant, params, body }) {
        await (apply ? coupons.apply : coupons.remove).call(coupons, tenant, params.subscriptionUuid, body.couponUuid);
        return noContent;
      },
    });
  return resource({ name: 'coupons', description: 'Coupons on a subscription, kept by the payment provider' }, [
    op('post', true),
    op('put', false),
  ]);
};
