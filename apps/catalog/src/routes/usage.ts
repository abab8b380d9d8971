import type { Core, UsageRecordStatus } from '@tollgate/core';
import { resource, route, typed, type Route } from '@tollgate/http';
import { listOf, object, objectOf } from '../response-schemas';
import { listEnvelope, objectEnvelope } from '../views';
import {
  answerProps,
  answerSchema,
  answerView,
  quantitySchema,
  targetProps,
  USAGE_TAG,
  usageRecordSchema,
  usageRecordView,
} from './usage-views';

/** RFC 7240: `Prefer: return=representation` asks for the balance instead of the published 204. */
const wantsRepresentation = (req: { get(h: string): string | undefined }) => /\breturn=representation\b/i.test(req.get('prefer') ?? '');
const keyOf = (req: { get(h: string): string | undefined }) => req.get('idempotency-key') ?? undefined;
const usageBody = <T>(extra: Record<string, object>, required: string[]) =>
  typed<T>({
    type: 'object',
    properties: { ...targetProps, ...extra },
    required: ['owner', 'meterSlug', ...required],
    additionalProperties: false,
  });

export const recordBody = usageBody<{ owner: string; meterSlug: string; increment: number }>({ increment: quantitySchema }, ['increment']);
export const consumeBody = usageBody<{ owner: string; meterSlug: string; quantity: number }>({ quantity: quantitySchema }, ['quantity']);
export const reserveBody = usageBody<{ owner: string; meterSlug: string; quantity: number; ttlSeconds: number }>(
  { quantity: quantitySchema, ttlSeconds: { type: 'integer' } },
  ['quantity', 'ttlSeconds'],
);
export const commitBody = typed<{ quantity: number }>({
  type: 'object',
  properties: { quantity: quantitySchema },
  required: ['quantity'],
  additionalProperties: false,
});
const recordsQuery = typed<{
  limit?: string;
  after?: string;
  before?: string;
  owner?: string;
  meterSlug?: string;
  status?: string;
  sort?: 'asc' | 'desc';
}>({
  type: 'object',
  properties: {
    limit: { type: 'string', pattern: '^(100|[1-9][0-9]?)$' },
    after: { type: 'string', maxLength: 500 },
    before: { type: 'string', maxLength: 500 },
    owner: { type: 'string', minLength: 1, maxLength: 255 },
    meterSlug: { type: 'string', minLength: 1, maxLength: 64 },
    // The published csv of recorded, current and final (default: recorded).
    status: { type: 'string', pattern: '^(recorded|current|final)(,(recorded|current|final))*$' },
    // Oldest first (default) or newest first; `nextCursor` (as `after`) leads on in the order asked.
    sort: { enum: ['asc', 'desc'] },
  },
  additionalProperties: false,
});
const reservationSchema = objectOf(
  object({ id: { type: 'string' }, expiresAt: { type: 'string' }, quantity: { type: 'number' }, ...answerProps }),
);

/**
 * Usage operations (DESIGN section 14): record, consume, reserve -> commit | release, and the
 * records. Each write takes `idempotency-key`, claimed in the transaction of the operation itself.
 */
export const usageRoutes = ({ usage }: Pick<Core, 'usage'>): Route[] =>
  resource(USAGE_TAG, [
    route({
      method: 'post',
      path: '/api/usage/record',
      operationId: 'recordUsage',
      summary: 'Record usage that happened (counted even over a limit, billed as overage)',
      description:
        "Adds `increment` units to the owner's usage of the meter, answered once committed: 204 as published, or with `Prefer: return=representation` 200 with the balance after it.",
      scope: ['usage', 'write'],
      ownIdempotency: true,
      body: recordBody,
      meta: { parameters: [{ name: 'prefer', in: 'header', required: false, schema: { type: 'string' } }] },
      response: { status: 204 },
      otherResponses: [
        { status: 200, schema: objectOf(answerSchema), description: 'with `Prefer: return=representation`: the balance after it' },
      ],
      handle: async ({ req, tenant, body }) => {
        const a = await usage.record(
          tenant,
          { owner: body.owner, meterSlug: body.meterSlug, quantity: body.increment },
          keyOf(req),
          'increment',
        );
        return wantsRepresentation(req) ? { status: 200, body: objectEnvelope(answerView(a)) } : { status: 204 };
      },
    }),
    route({
      method: 'post',
      path: '/api/usage/consume',
      operationId: 'consumeUsage',
      summary: 'Check and take in one step; a denial is an answer (allowed: false) with nothing taken',
      description: 'Takes `quantity` units when that many remain; otherwise answers allowed: false and what remains.',
      scope: ['usage', 'write'],
      ownIdempotency: true,
      body: consumeBody,
      response: { status: 200, schema: objectOf(answerSchema) },
      handle: async ({ req, tenant, body }) => ({
        status: 200,
        body: objectEnvelope(answerView(await usage.consume(tenant, body, keyOf(req)))),
      }),
    }),
    route({
      method: 'post',
      path: '/api/usage/reservations',
      operationId: 'reserveUsage',
      summary: 'Hold units for work in progress (at most 24 h); 201 with the hold, or 200 with allowed: false',
      description: 'Sets `quantity` units aside until commit, release or `ttlSeconds` pass (then they return by themselves).',
      scope: ['usage', 'write'],
      ownIdempotency: true,
      body: reserveBody,
      response: { status: 201, schema: reservationSchema },
      otherResponses: [{ status: 200, schema: objectOf(answerSchema), description: 'denied: not that many units remain' }],
      handle: async ({ req, tenant, body }) => {
        const a = await usage.reserve(tenant, body, keyOf(req));
        if (!a.allowed) return { status: 200, body: objectEnvelope(answerView(a)) };
        return {
          status: 201,
          body: objectEnvelope({ id: a.holdId, expiresAt: a.holdExpiresAt, quantity: body.quantity, ...answerView(a) }),
        };
      },
    }),
    route({
      method: 'post',
      path: '/api/usage/reservations/:id/commit',
      operationId: 'commitReservation',
      summary: 'Use the actual amount of a hold (at most the hold); the rest returns',
      description: 'Settles the hold: `quantity` units are used, the rest of the hold returns to the balance.',
      scope: ['usage', 'write'],
      ownIdempotency: true,
      body: commitBody,
      response: { status: 200, schema: objectOf(answerSchema) },
      handle: async ({ req, tenant, params, body }) => ({
        status: 200,
        body: objectEnvelope(answerView(await usage.commit(tenant, params.id, body, keyOf(req)))),
      }),
    }),
    route({
      method: 'post',
      path: '/api/usage/reservations/:id/release',
      operationId: 'releaseReservation',
      summary: 'Return a hold whole',
      description: 'Settles the hold without using any of it.',
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
      operationId: 'listUsageRecords',
      summary: 'List usage records (recorded, current, final), oldest first or newest first; filter by owner and meterSlug',
      description:
        '`recorded`: the record, consume and commit entries of the ledger; `current`: the open period of each balance; `final`: closed periods with what they billed. Page by page by (createdAt, id): oldest first, or newest first with `sort=desc`; `nextCursor` as `after` leads on in the order asked, `previousCursor` as `before` goes back.',
      scope: ['usage', 'read'],
      query: recordsQuery,
      list: true,
      response: { status: 200, schema: listOf(usageRecordSchema) },
      handle: async ({ tenant, query }) => {
        const { page, meters } = await usage.usageRecords(tenant, {
          limit: query.limit ? Number(query.limit) : 25,
          after: query.after,
          before: query.before,
          sort: query.sort ?? 'asc',
          owner: query.owner,
          meterSlug: query.meterSlug,
          statuses: (query.status ?? 'recorded').split(',') as UsageRecordStatus[],
        });
        return { status: 200, body: listEnvelope(page, usageRecordView(meters)) };
      },
    }),
  ]);
