import { arrayOf, ok, resource, route, type RouteDef } from '@tollgate/http';
import { invoiceListSchema, paymentMethodSchema, urlSchema } from '@tollgate/app-v1';
import { extend, fullPlanSchema } from '../schemas';
import { fullPlanView } from '../views';
import type { RouteModule } from './support';

const tag = { name: 'billing', description: "A subscription's invoices, payment method, payment links and the plans it can move to" };

/** What the payment provider keeps of a subscription, as v1 shows it (the same shapes in v2 and v3). */
export const billingRoutes: RouteModule = ({ core: { subscriptions } }, version) => {
  const v3 = version === 'v3';
  const link = (path: string, operationId: string, summary: string, kind: 'updatePayment' | 'portal' | 'cancel'): RouteDef =>
    route({
      method: 'get',
      path: `/subscriptions/:subscriptionUuid/${path}`,
      operationId,
      summary,
      description: `${summary} at the payment provider, for the subscriber (open it in their browser).`,
      scope: ['subscriptions', 'read'],
      response: { status: 200, schema: urlSchema },
      handle: async ({ tenant, params }) => ok(await subscriptions.link(tenant, params.subscriptionUuid, kind)),
    });
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
    route({
      method: 'get',
      path: '/subscriptions/:subscriptionUuid/invoices',
      operationId: 'getSubscriptionInvoices',
      summary: 'Get subscription invoices',
      description: "The subscription's invoices at the payment provider, newest first.",
      scope: ['subscriptions', 'read'],
      response: { status: 200, schema: invoiceListSchema },
      handle: async ({ tenant, params }) => ok(await subscriptions.invoices(tenant, params.subscriptionUuid)),
    }),
    link(v3 ? 'update-payment-link' : 'updatepaymentlink', 'getUpdatePaymentLink', 'Update-payment link', 'updatePayment'),
    link('customer-portal', 'getCustomerPortalLink', 'Customer portal link', 'portal'),
    link(v3 ? 'cancel-payment-link' : 'cancelpaymentlink', 'getCancelSubscriptionLink', 'Cancel-subscription link', 'cancel'),
    route({
      method: 'get',
      path: '/subscriptions/:subscriptionUuid/payment-method',
      operationId: 'getPaymentMethod',
      summary: 'Payment method',
      description: 'The card or other method the subscription is charged to (brand and last digits only).',
      scope: ['subscriptions', 'read'],
      response: { status: 200, schema: paymentMethodSchema },
      handle: async ({ tenant, params }) => ok(await subscriptions.paymentMethod(tenant, params.subscriptionUuid)),
    }),
    ...v2Only,
  ]);
};
