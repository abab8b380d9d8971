import type { Core, Customer, Plan, Receipt } from '@tollgate/core';
import { date, int, iso, nstr, querySchema, resource, route, str, uuid, type Route } from '@tollgate/http';
import { lineItemBaseProps, lineItemView } from '../pricing-views';
import { listOf, nestedListOf, object, objectOf } from '../response-schemas';
import { pageProps } from '../schemas';
import { listEnvelope, nestedList, objectEnvelope, pageQueryOf } from '../views';
import { expandOf } from './products';

const listQuery = {
  ...querySchema({
    ...pageProps,
    subscriptionId: { type: 'string', format: 'uuid' },
    search: { type: 'string', maxLength: 200 },
    owner: { type: 'string', maxLength: 4000 },
    lineItems: { type: 'string', maxLength: 4000 },
    sort: { type: 'string', pattern: '^(asc|desc|ASC|DESC)$' },
    expand: { type: 'string' },
  }),
  additionalProperties: false,
};
const detailQuery = { ...querySchema({ expand: { type: 'string' } }), additionalProperties: false };

export const ownerSchema = object({
  id: uuid,
  organisation: uuid,
  value: str,
  paymentCustomerId: nstr,
  emailAddress: nstr,
  createdAt: date,
  updatedAt: date,
});
const receiptItemSchema = object({
  id: str,
  quantity: int,
  organisation: uuid,
  lineItemPaymentProductId: str,
  receiptId: uuid,
  createdAt: date,
  updatedAt: date,
  lineItem: object(lineItemBaseProps),
});
const receiptProps = {
  id: uuid,
  organisation: uuid,
  ownerId: { anyOf: [uuid, { type: 'null' }] },
  subscriptionId: { anyOf: [uuid, { type: 'null' }] },
  createdAt: date,
  updatedAt: date,
};
export const receiptSchema = object(receiptProps, { owner: ownerSchema, receiptItems: nestedListOf(receiptItemSchema) });

export const ownerView = (c: Customer) => ({
  id: c.id,
  organisation: c.organisationId,
  value: c.value,
  paymentCustomerId: c.paymentCustomerId,
  emailAddress: c.emailAddress,
  createdAt: iso(c.createdAt),
  updatedAt: iso(c.updatedAt),
});

export const receiptView = (x: Receipt, expand: Set<string>) => ({
  id: x.session.id,
  organisation: x.session.organisationId,
  ownerId: x.customer?.id ?? null,
  subscriptionId: x.session.subscriptionId,
  createdAt: iso(x.session.createdAt),
  updatedAt: iso(x.session.completedAt ?? x.session.createdAt),
  ...(expand.has('owner') && x.customer ? { owner: ownerView(x.customer) } : {}),
});

const csv = (raw: string | undefined) =>
  raw === undefined
    ? undefined
    : raw
        .replace(/^\[|\]$/g, '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);

/** Receipts: completed purchases (a checkout that was paid), with their owner and what was bought. */
export const receiptRoutes = ({ receipts }: Pick<Core, 'receipts'>): Route[] =>
  resource({ name: 'receipts', description: 'Completed purchases: who paid, for which subscription, and what was bought' }, [
    route({
      method: 'get',
      path: '/api/receipts',
      operationId: 'listReceipts',
      summary: 'List receipts',
      description:
        'A page of completed purchases, oldest first (`sort=desc`: newest first, the cursors leading on in that order): of one subscription, of owners (`owner=id,id`), that bought one of some line items (`lineItems=id,id`: receipts of the plans they belong to), or whose owner value contains `search`; `expand=owner`.',
      scope: ['subscriptions', 'read'],
      query: listQuery,
      response: { status: 200, schema: listOf(receiptSchema) },
      handle: async ({ tenant, query }) => {
        const expand = expandOf(query.expand, ['owner']);
        const page = await receipts.list(tenant, {
          ...pageQueryOf(query),
          subscriptionId: query.subscriptionId,
          ownerIds: csv(query.owner),
          search: query.search,
          lineItemIds: csv(query.lineItems),
          sort: query.sort?.toLowerCase() === 'desc' ? 'desc' : 'asc',
        });
        return { status: 200, body: listEnvelope(page, (x) => receiptView(x, expand)) };
      },
    }),
    route({
      method: 'get',
      path: '/api/receipts/:id',
      operationId: 'retrieveReceipt',
      summary: 'Receipt detail',
      description: 'One completed purchase; `expand=owner,receiptItems` brings the owner and the line items bought with their quantities.',
      scope: ['subscriptions', 'read'],
      query: detailQuery,
      response: { status: 200, schema: objectOf(receiptSchema) },
      handle: async ({ tenant, params, query }) => {
        const expand = expandOf(query.expand, ['owner', 'receiptItems']);
        const x = await receipts.get(tenant, params.id);
        const bought = x.plan
          ? x.plan.lineItems.filter((li) => !x.subscription?.lineItemIds.length || x.subscription.lineItemIds.includes(li.id))
          : [];
        const seats = x.subscription?.quantity ?? x.session.options.quantity;
        // The plan bought, then the others bought with it (a cart's), each with its seats.
        const lines = [
          ...bought.map((li) => ({ li, plan: x.plan as Plan, seats })),
          ...x.extra.flatMap((e) => e.plan.lineItems.map((li) => ({ li, plan: e.plan, seats: e.quantity }))),
        ];
        const items = nestedList(lines, `/api/receipts/${x.session.id}?expand=receiptItems`, ({ li, plan, seats }) => ({
          id: `${x.session.id}:${li.id}`,
          quantity: li.priceType === 'per_seat' ? seats : 1,
          organisation: x.session.organisationId,
          lineItemPaymentProductId: li.paymentProductId,
          receiptId: x.session.id,
          createdAt: iso(x.session.createdAt),
          updatedAt: iso(x.session.completedAt ?? x.session.createdAt),
          lineItem: lineItemView({ item: li, plan, lineItemId: li.id, priceId: '', currencyOptionId: '' }),
        }));
        return {
          status: 200,
          body: objectEnvelope({ ...receiptView(x, expand), ...(expand.has('receiptItems') ? { receiptItems: items } : {}) }),
        };
      },
    }),
  ]);
