import type { Core, GrantSource } from '@tollgate/core';
import { resource, route, typed, type Route } from '@tollgate/http';
import { object, objectOf } from '../response-schemas';
import { objectEnvelope } from '../views';
import { answerProps, answerView, quantitySchema, targetProps } from './usage-views';

export const grantBody = typed<{
  owner: string;
  meterSlug: string;
  amount: number;
  expiresAt?: string | null;
  priority?: number;
  source?: GrantSource;
}>({
  type: 'object',
  properties: {
    ...targetProps,
    amount: quantitySchema,
    expiresAt: { type: ['string', 'null'], format: 'date-time' },
    priority: { type: 'integer' },
    source: { enum: ['plan', 'purchase', 'promotion', 'adjustment'] },
  },
  required: ['owner', 'meterSlug', 'amount'],
  additionalProperties: false,
});

const grantSchema = object({
  id: { type: 'string' },
  ...answerProps,
  amount: { type: 'number' },
  priority: { type: 'integer' },
  source: { type: 'string' },
  expiresAt: { type: ['string', 'null'] },
});

/** Credit grants: units given to an owner's balance of a meter (an unknown owner gets one). */
export const creditRoutes = ({ usage }: Pick<Core, 'usage'>): Route[] =>
  resource({ name: 'credits', description: "Credit grants: units added to an owner's balance, drawn by priority then expiry" }, [
    route({
      method: 'post',
      path: '/api/credits/grants',
      operationId: 'grantCredits',
      summary: 'Grant credits to an owner (priority: lower is drawn first; expiresAt: when the unused rest lapses)',
      description: "Adds units to the owner's balance of the meter; the answer is the balance after the grant.",
      scope: ['usage', 'write'],
      ownIdempotency: true,
      body: grantBody,
      response: { status: 201, schema: objectOf(grantSchema) },
      handle: async ({ req, tenant, body }) => {
        const a = await usage.grant(
          tenant,
          { ...body, expiresAt: body.expiresAt ? new Date(body.expiresAt) : null },
          req.get('idempotency-key') ?? undefined,
        );
        return {
          status: 201,
          body: objectEnvelope({
            id: a.grantId as string,
            ...answerView(a),
            amount: body.amount,
            priority: body.priority ?? 50,
            source: body.source ?? 'adjustment',
            expiresAt: body.expiresAt ?? null,
          }),
        };
      },
    }),
  ]);
