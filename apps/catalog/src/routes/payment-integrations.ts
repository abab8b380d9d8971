import { DomainError, ErrorCodes, type Core, type PaymentIntegration } from '@tollgate/core';
import { bodySchema, date, iso, nstr, resource, route, str, uuid, type Route } from '@tollgate/http';
import { listOf, object, objectOf } from '../response-schemas';
import { pageQuery } from '../schemas';

const integrationSchema = object({
  id: uuid,
  accountId: nstr,
  country: nstr,
  status: { enum: ['pending', 'active', 'cancelled'] },
  organisation: uuid,
  accountType: { enum: ['oauth', 'standard'] },
  provider: str,
  accountName: str,
  createdAt: date,
  updatedAt: date,
});
const createBody = bodySchema({
  type: 'object',
  properties: { emailAddress: { type: 'string', format: 'email', maxLength: 320, example: 'billing@vendor.example.com' } },
  required: ['emailAddress'],
});

const integrationView = (i: PaymentIntegration) => ({
  id: i.id,
  accountId: i.accountId,
  country: null,
  status: 'active' as const,
  organisation: i.organisationId,
  accountType: 'standard' as const,
  provider: i.integrationName,
  accountName: i.accountName,
  createdAt: iso(i.updatedAt),
  updatedAt: iso(i.updatedAt),
});

/** Why the API does not change payment integrations here: they are the deployment's configuration. */
const configured = (what: string) =>
  new DomainError(
    ErrorCodes.VALIDATION_FAILED,
    `${what}: payment providers are this deployment's configuration (the built-in sandbox, and Stripe with STRIPE_SECRET_KEY), not changed through the API`,
  );

export const paymentIntegrationRoutes = ({ paymentIntegrations }: Pick<Core, 'paymentIntegrations'>): Route[] =>
  resource({ name: 'payment-integrations', description: "The deployment's payment providers as the organisation's integrations" }, [
    route({
      method: 'get',
      path: '/api/payment-integrations',
      operationId: 'listPaymentIntegrations',
      summary: 'List payment integrations',
      description: 'The sandbox (always) and the configured provider (Stripe when a key is set), each active; one page holds them all.',
      scope: ['payment-integrations', 'read'],
      query: pageQuery,
      response: { status: 200, schema: listOf(integrationSchema) },
      handle: async ({ tenant }) => ({
        status: 200,
        body: {
          type: 'list',
          data: (await paymentIntegrations.list(tenant)).map(integrationView),
          nextCursor: null,
          previousCursor: null,
          hasMore: false,
        },
      }),
    }),
    route({
      method: 'post',
      path: '/api/payment-integrations',
      operationId: 'createPaymentIntegration',
      summary: 'Create a payment integration (already there: 204)',
      description:
        'The published API opens a Stripe account here; in Tollgate the providers are the deployment’s, so this records the organisation’s integrations and answers 204.',
      scope: ['payment-integrations', 'write'],
      body: createBody,
      response: { status: 204 },
      async handle({ tenant }) {
        await paymentIntegrations.list(tenant);
        return { status: 204 };
      },
    }),
    route({
      method: 'delete',
      path: '/api/payment-integrations/:id',
      operationId: 'deletePaymentIntegration',
      summary: 'Delete a payment integration (refused: 400)',
      description: 'The providers are the deployment’s configuration: an integration cannot be removed through the API (400 saying so).',
      scope: ['payment-integrations', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await paymentIntegrations.get(tenant, params.id);
        throw configured('deletePaymentIntegration');
      },
    }),
    route({
      method: 'post',
      path: '/api/payment-integrations/:id/onboarding',
      operationId: 'createOnboardingLink',
      summary: 'Create an onboarding link (nothing to onboard: 400)',
      description: 'Every integration is active from the start (its keys are the deployment’s), so there is no onboarding: 400 saying so.',
      scope: ['payment-integrations', 'write'],
      response: { status: 200, schema: objectOf(object({ url: str })) },
      async handle({ tenant, params }) {
        const i = await paymentIntegrations.get(tenant, params.id);
        throw new DomainError(ErrorCodes.VALIDATION_FAILED, `the ${i.integrationName} integration is active: there is nothing to onboard`);
      },
    }),
  ]);
