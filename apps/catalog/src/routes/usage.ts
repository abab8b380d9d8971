import type { Core } from '@tollgate/core';
import { route, type Route } from '@tollgate/http';
import { listEnvelope, objectEnvelope } from '../views';
import { answerSchema, answerView, listOf, objectOf, quantitySchema, targetProps, usageRecordView } from './usage-views';

const keyOf = (req: { get(h: string): string | undefined }) => req.get('idempotency-key') ?? undefined;
const usageBody = (extra: Record<string, object>, required: string[]) => ({
  type: 'object',
  properties: { ...targetProps, ...extra },
  required: ['owner', 'meterSlug', ...required],
  additionalProperties: false,
});
const reservationSchema = objectOf({
  ...answerSchema,
  properties: { ...answerSchema.properties, id: { type: 'string' }, expiresAt: { type: 'string' } },
});
const recordSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    organisation: { type: 'string' },
    owner: { type: 'string' },
    meterSlug: { type: ['string', 'null'] },
    type: { enum: ['record', 'consume', 'commit'] },
    count: { type: 'integer' },
    idempotencyKey: { type: ['string', 'null'] },
    recordedAt: { type: 'string' },
    createdAt: { type: 'string' },
  },
  required: ['id', 'organisation', 'owner', 'meterSlug', 'type', 'count', 'idempotencyKey', 'recordedAt', 'createdAt'],
};

/**
 * Usage operations (DESIGN section 14): record, consume, reserve -> commit | release, and the
 * records. Each takes `idempotency-key`, claimed in the transaction of the operation itself.
 */
export function usageRoutes({ usage }: Pick<Core, 'usage'>): Route[] {
  return [
    route<Record<string, string>, { owner: string; meterSlug: string; increment: number }>({
      method: 'post',
      path: '/api/usage/record',
      summary: 'Record usage that happened (counted even over a cap, billed as overage)',
      scope: ['usage', 'write'],
      ownIdempotency: true,
      body: usageBody({ increment: quantitySchema }, ['increment']),
      response: { status: 200, schema: objectOf(answerSchema) },
      handle: async ({ req, tenant, body }) => ({
        status: 200,
        body: objectEnvelope(
          answerView(await usage.record(tenant, { owner: body.owner, meterSlug: body.meterSlug, quantity: body.increment }, keyOf(req))),
        ),
      }),
    }),
    route<Record<string, string>, { owner: string; meterSlug: string; quantity: number }>({
      method: 'post',
      path: '/api/usage/consume',
      summary: 'Check and take in one step; a denial is an answer (allowed: false) with nothing taken',
      scope: ['usage', 'write'],
      ownIdempotency: true,
      body: usageBody({ quantity: quantitySchema }, ['quantity']),
      response: { status: 200, schema: objectOf(answerSchema) },
      handle: async ({ req, tenant, body }) => ({
        status: 200,
        body: objectEnvelope(answerView(await usage.consume(tenant, body, keyOf(req)))),
      }),
    }),
    route<Record<string, string>, { owner: string; meterSlug: string; quantity: number; ttlSeconds: number }>({
      method: 'post',
      path: '/api/usage/reservations',
      summary: 'Hold units for work in progress (at most 24 h); 201 with the hold, or 200 with allowed: false',
      scope: ['usage', 'write'],
      ownIdempotency: true,
      body: usageBody({ quantity: quantitySchema, ttlSeconds: { type: 'integer' } }, ['quantity', 'ttlSeconds']),
      response: { status: 201, schema: reservationSchema },
      handle: async ({ req, tenant, body }) => {
        const a = await usage.reserve(tenant, body, keyOf(req));
        if (!a.allowed) return { status: 200, body: objectEnvelope(answerView(a)) };
        return {
          status: 201,
          body: objectEnvelope({ id: a.holdId, expiresAt: a.holdExpiresAt, quantity: body.quantity, ...answerView(a) }),
        };
      },
    }),
    route<Record<string, string>, { quantity: number }>({
      method: 'post',
      path: '/api/usage/reservations/:id/commit',
      summary: 'Use the actual amount of a hold (at most the hold); the rest returns',
      scope: ['usage', 'write'],
      ownIdempotency: true,
      body: { type: 'object', properties: { quantity: quantitySchema }, required: ['quantity'], additionalProperties: false },
      response: { status: 200, schema: objectOf(answerSchema) },
      handle: async ({ req, tenant, params, body }) => ({
        status: 200,
        body: objectEnvelope(answerView(await usage.commit(tenant, params.id, body, keyOf(req)))),
      }),
    }),
    route({
      method: 'post',
      path: '/api/usage/reservations/:id/release',
      summary: 'Return a hold whole',
      scope: ['usage', 'write'],
      ownIdempotency: true,
      response: { status: 204 },
      handle: async ({ req, tenant, params }) => {
        await usage.release(tenant, params.id, keyOf(req));
        return { status: 204 };
      },
    }),
    route({
      method: 'get',
      path: '/api/usage-records',
      summary: 'List usage records (what used units), oldest first; filter by owner and meterSlug',
      scope: ['usage', 'read'],
      query: {
        type: 'object',
        properties: {
          limit: { type: 'string', pattern: '^(100|[1-9][0-9]?)$' },
          after: { type: 'string', maxLength: 500 },
          owner: { type: 'string', minLength: 1, maxLength: 255 },
          meterSlug: { type: 'string', minLength: 1, maxLength: 64 },
        },
        additionalProperties: false,
      },
      response: { status: 200, schema: listOf(recordSchema) },
      list: true,
      handle: async ({ tenant, query }) => {
        const { page, meters } = await usage.records(tenant, {
          limit: query.limit ? Number(query.limit) : 25,
          after: query.after,
          owner: query.owner,
          meterSlug: query.meterSlug,
        });
        return { status: 200, body: listEnvelope(page, usageRecordView(meters)) };
      },
    }),
  ];
}
