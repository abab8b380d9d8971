import type { Core, GrantSource } from '@tollgate/core';
import { route, type Route } from '@tollgate/http';
import { objectEnvelope } from '../views';
import { answerSchema, answerView, objectOf, quantitySchema, targetProps } from './usage-views';

interface GrantBody {
  owner: string;
  meterSlug: string;
  amount: number;
  expiresAt?: string | null;
  priority?: number;
  source?: GrantSource;
}

/** Credit grants: units given to an owner's balance of a meter (an unknown owner gets one). */
export function creditRoutes({ usage }: Pick<Core, 'usage'>): Route[] {
  return [
    route<Record<string, string>, GrantBody>({
      method: 'post',
      path: '/api/credits/grants',
      summary: 'Grant credits to an owner (priority: lower is drawn first; expiresAt: when the unused rest lapses)',
      scope: ['usage', 'write'],
      ownIdempotency: true,
      body: {
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
      },
      response: { status: 201, schema: objectOf({ ...answerSchema, properties: { ...answerSchema.properties, id: { type: 'string' } } }) },
      handle: async ({ req, tenant, body }) => {
        const a = await usage.grant(
          tenant,
          { ...body, expiresAt: body.expiresAt ? new Date(body.expiresAt) : null },
          req.get('idempotency-key') ?? undefined,
        );
        return {
          status: 201,
          body: objectEnvelope({
            id: a.grantId,
            ...answerView(a),
            amount: body.amount,
            priority: body.priority ?? 50,
            source: body.source ?? 'adjustment',
            expiresAt: body.expiresAt ?? null,
          }),
        };
      },
    }),
  ];
}
