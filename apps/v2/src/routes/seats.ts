import { encodeCursor, invalid, type Proration, type SeatGranteeChange } from '@tollgate/core';
import { noContent, object, int, ok, resource, route, typed, uuid, type RouteDef } from '@tollgate/http';
import { pageSchema, paged, pageQuery, takeOf, type RouteModule } from './support';
import { seatSchema } from '../schemas';
import { seatView } from '../views';

const tag = { name: 'seats', description: "A subscription's seats: who holds them, how many, adding and removing them" };

export const seatCountSchema = object({ count: int, assigned: int, unassigned: int });
export const eventUuidSchema = object({ eventUuid: uuid });

const proration = { enum: ['create_prorations', 'none', 'always_invoice'] } as const;
const count = { type: 'integer', minimum: 1, maximum: 10000 } as const;
const grantee = { type: 'string', minLength: 1, maxLength: 320 } as const;

type SeatChangeBody = { increment?: number; decrement?: number; proration?: Proration };
const seatChangeBody = (required: ('increment' | 'decrement')[], oneOf: boolean) =>
  typed<SeatChangeBody>({
    type: 'object',
    properties: {
      ...(required.includes('increment') || oneOf ? { increment: count } : {}),
      ...(required.includes('decrement') || oneOf ? { decrement: count } : {}),
      proration,
    },
    ...(oneOf ? { oneOf: [{ required: ['increment'] }, { required: ['decrement'] }] } : { required }),
    additionalProperties: false,
  });

export const manageSeatsBody = typed<SeatGranteeChange[]>({
  type: 'array',
  minItems: 1,
  maxItems: 500,
  items: {
    oneOf: [
      {
        type: 'object',
        properties: { type: { enum: ['assign', 'unassign'] }, granteeId: grantee },
        required: ['type', 'granteeId'],
        additionalProperties: false,
      },
      {
        type: 'object',
        properties: { type: { const: 'replace' }, granteeId: grantee, newGranteeId: grantee },
        required: ['type', 'granteeId', 'newGranteeId'],
        additionalProperties: false,
      },
    ],
  },
});

/**
 * Seats (licenses of a subscription): a page of them, their count, who holds them (`manage-seats`),
 * and adding or removing them (202 with the event that applies it; v2 removes with `PUT`, v3 sends
 * both through `POST`).
 */
export const seatRoutes: RouteModule = ({ core: { licenses, seats, subscriptionAdmin } }, version) => {
  const change = (method: 'post' | 'put', operationId: string, summary: string, body: ReturnType<typeof seatChangeBody>): RouteDef =>
    route({
      method,
      path: '/subscriptions/:subscriptionUuid/seats',
      operationId,
      summary,
      description: `${summary} of a per-seat subscription: accepted at once (202) and applied in order; \`GET /events/{eventUuid}\` tells how it went.`,
      scope: ['subscriptions', 'write'],
      body,
      response: { status: 202, schema: eventUuidSchema },
      async handle({ tenant, params, body: b }) {
        const increment = b.increment !== undefined;
        const e = await seats.request(tenant, params.subscriptionUuid, {
          type: increment ? 'seats.increment' : 'seats.decrement',
          count: (increment ? b.increment : b.decrement) as number,
          proration: b.proration ?? 'create_prorations',
        });
        return { status: 202, body: { eventUuid: e.id } };
      },
    });
  return resource(tag, [
    route({
      method: 'get',
      path: '/subscriptions/:subscriptionUuid/seats',
      operationId: 'getSeats',
      summary: 'Get seats (a page)',
      description:
        "A page of the subscription's seats, oldest first, without the canceled ones (as the SDK says of `getSeats`); `cursor` is the last seat of the page before, `take` 1..100 (default 20). A v2 seat shows its plan's capabilities.",
      scope: ['subscriptions', 'read'],
      query: pageQuery,
      response: { status: 200, schema: pageSchema(seatSchema(version)) },
      async handle({ tenant, params, query }) {
        let after: string | undefined;
        if (query.cursor !== undefined) {
          const at = await licenses.get(tenant, query.cursor);
          // A seat of another subscription would start the page at its place in time: not this list's.
          if (at.subscriptionId !== params.subscriptionUuid) invalid('cursor', 'names no seat of this subscription');
          after = encodeCursor(at);
        }
        const take = takeOf(query);
        const items = [];
        // One page of the live seats (status not CANCELED): one query, however many seats are canceled.
        for await (const p of licenses.pages(tenant, { subscriptionId: params.subscriptionUuid, live: true }, { after, take, batch: take }))
          items.push(...p.licenses.map((l) => seatView(version, l, p.capabilities.get(l.planId) ?? [])));
        // Seats found are the key's (the page reads the tenant's only), so is their subscription; an
        // empty page asks whether the subscription is the key's (another's, or none, is not an empty list).
        if (items.length === 0) await licenses.count(tenant, { subscriptionId: params.subscriptionUuid, live: true });
        return ok(paged(items));
      },
    }),
    route({
      method: 'get',
      path: '/subscriptions/:subscriptionUuid/seats/count',
      operationId: 'getSeatCount',
      summary: 'Count seats',
      description:
        'How many seats the subscription has, assigned to a grantee and not; canceled seats are not counted (as the SDK says of `getSeatCount`).',
      scope: ['subscriptions', 'read'],
      response: { status: 200, schema: seatCountSchema },
      async handle({ tenant, params }) {
        // One read of the live seats (status not CANCELED).
        const { count, assigned } = await licenses.count(tenant, { subscriptionId: params.subscriptionUuid, live: true });
        return ok({ count, assigned, unassigned: count - assigned });
      },
    }),
    route({
      method: 'put',
      path: '/subscriptions/:subscriptionUuid/manage-seats',
      operationId: 'manageSeats',
      summary: 'Assign, unassign or replace seat holders',
      description:
        "Each change in order, all or none; a grantee holds at most one seat of each plan of the subscription. `assign` gives the grantee an unassigned seat of each plan it holds no seat of, `unassign` takes back every seat the grantee holds (of every plan), `replace` moves the grantee's seat of each plan to `newGranteeId` (who may hold none of those plans) and frees any other seat of the same plan the grantee held.",
      scope: ['subscriptions', 'write'],
      body: manageSeatsBody,
      response: { status: 204 },
      async handle({ tenant, params, body }) {
        await subscriptionAdmin.manageSeats(tenant, params.subscriptionUuid, body);
        return noContent;
      },
    }),
    ...(version === 'v3'
      ? [change('post', 'updateSeatCount', 'Add or remove seats', seatChangeBody([], true))]
      : [
          change('post', 'addSeats', 'Add seats', seatChangeBody(['increment'], false)),
          change('put', 'removeSeats', 'Remove seats', seatChangeBody(['decrement'], false)),
        ]),
  ]);
};
