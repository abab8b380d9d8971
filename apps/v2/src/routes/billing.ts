import { arrayOf, ok, resource, route, type RouteDef } from '@tollgate/http';
import { paymentLinkRoute, paymentMethodRoute, subscriptionInvoicesRoute } from '@tollgate/app-v1';
import { extend, fullPlanSchema } from '../schemas';
import { fullPlanView } from '../views';
import type { RouteModule } from './support';

const tag = { name: 'billing', description: "A subscription's invoices, payment method, payment links and the plans it can move to" };

/** What the payment provider keeps of a subscription, as v1 shows it (the same shapes in v2 and v3). */
export const billingRoutes: RouteModule = ({ core: { subscriptions } }, version) => {
  const v3 = version === 'v3';
  const link = paymentLinkRoute(subscriptions);
  const v2Only: RouteDef[] = v3
    ? []
    : [
        route({
          method: 'get',
          path: '/subscriptions/:subscriptionUuid/updateplan/listplans',
          operationId: 'getSwitchablePlans',
          summary: 'Plans a subscriber can switch to',
          description: 'The active public plans of the same product and interval, with their features and currencies.',
          scope: ['subscriptions', 'read'],
          response: { status: 200, schema: arrayOf(extend(fullPlanSchema('v2'), {})) },
          async handle({ tenant, params }) {
            const { plans, product, currencies } = await subscriptions.switchablePlans(tenant, params.subscriptionUuid);
            return ok(plans.map((p) => fullPlanView('v2', p, { product, currencies })));
          },
        }),
      ];
  return resource(tag, [
    subscriptionInvoicesRoute(subscriptions),
    link(v3 ? 'update-payment-link' : 'updatepaymentlink', 'getUpdatePaymentLink', 'Update-payment link', 'updatePayment'),
    link('customer-portal', 'getCustomerPortalLink', 'Customer portal link', 'portal'),
    link(v3 ? 'cancel-payment-link' : 'cancelpaymentlink', 'getCancelSubscriptionLink', 'Cancel-subscription link', 'cancel'),
    paymentMethodRoute(subscriptions),
    ...v2Only,
  ]);
};
