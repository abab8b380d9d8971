import { heldPlanIds, invalid, type Core, type PlanItemStep, type SubscriptionStatus } from '@tollgate/core';
import { noContent, querySchema, resource, route, str, uuid, type Route } from '@tollgate/http';
import { batchResultSchema, subscriptionItemSchema, subscriptionSchema } from '../people-schemas';
import { subscriptionRecordView, subscriptionView } from '../people-views';
import { listOf, object, objectOf } from '../response-schemas';
import { pageProps, planIdOf } from '../schemas';
import { listEnvelope, objectEnvelope, pageQueryOf } from '../views';
import { expandOf } from './products';
import { batchBody, createBody, itemsBody, portalBody } from './subscription-requests';

/** The catalog API's subscriptions (published operations #90-99): views of the domain's subscriptions. */

const SUBSCRIPTION_EXPAND = ['owner', 'subscriptionPlans'] as const;
const csvOfIds = { type: 'string', pattern: '^[0-9a-fA-F-]{36}(,[0-9a-fA-F-]{36}){0,99}$' };
const STATUS_WORDS: Record<string, SubscriptionStatus> = {
  active: 'ACTIVE',
  trialing: 'TRIALING',
  past_due: 'PAST_DUE',
  unpaid: 'UNPAID',
  paused: 'PAUSED',
  canceled: 'CANCELED',
  cancelled: 'CANCELED',
};
const statusList = { type: 'string', pattern: '^[A-Za-z_]+(,[A-Za-z_]+)*$' };
/** `active,canceled` -> the domain's statuses (validated first: each word is a status). */
export const statusesOf = (raw: string | undefined): SubscriptionStatus[] | undefined =>
  raw === undefined
    ? undefined
    : [...new Set(raw.split(',').map((w) => STATUS_WORDS[w.toLowerCase()] ?? invalid('status', `${w} is not a subscription status`)))];
export const idsOf = (raw: string | undefined) => (raw === undefined ? undefined : raw.split(',').map((x) => x.toLowerCase()));

const listQuery = {
  ...querySchema({
    ...pageProps,
    owner: { type: 'string', minLength: 1, maxLength: 255 },
    id: uuid,
    products: csvOfIds,
    plans: csvOfIds,
    status: statusList,
    expand: str,
    sort: { type: 'string', pattern: '^(asc|desc|ASC|DESC)$' },
    search: { type: 'string', minLength: 1, maxLength: 255 },
    priceId: uuid,
    stripePriceId: { type: 'string', minLength: 1, maxLength: 255 },
  }),
  additionalProperties: false,
};
type ItemChange =
  | { planId: string; action: 'remove' }
  | { planId: string; action: 'add'; grantee?: string; metadata?: Record<string, { quantity: number }> }
  | { planId: string; action: 'replace'; newPlanId: string };

/**
 * What a published items body asks (docs/decisions.md, "Subscriptions of several plans"): `add`
 * and `remove` items as one change of the subscription's plans (all or none), or `replace` items,
 * each of a plan the subscription holds (its first plan: a plan change, prorated; an added one:
 * that plan removed and the new one added). `replace` mixed with `add`/`remove` is 400 `items`.
 * The replaces of added plans are one change (all or none); the first plan's replace, a plan
 * change with the provider of its own, comes alone (with others: 400 `items`), so that no request
 * is half applied.
 */
export function itemStepsOf(
  items: ItemChange[],
  held: { planIds: string[]; first: string },
): { replaces: { at: string; planId: string; to: string; first: boolean }[]; steps: PlanItemStep[] } {
  const lower = (x: string) => x.toLowerCase();
  const replaces = items.flatMap((x, i) => (x.action === 'replace' ? [{ x, i }] : []));
  if (replaces.length && replaces.length !== items.length)
    invalid('items', 'replace a plan in a request of its own; add and remove plans together in another');
  if (replaces.length) {
    const moves = replaces.map(({ x, i }) => {
      if (!held.planIds.includes(lower(x.planId))) invalid(`items[${i}].planId`, 'is not a plan of this subscription');
      const to = (x as { newPlanId?: string }).newPlanId ?? invalid(`items[${i}].newPlanId`, 'is required to replace the plan');
      return { at: `items[${i}]`, planId: lower(x.planId), to, first: lower(x.planId) === held.first };
    });
    const first = moves.find((m) => m.first);
    if (first && moves.length > 1)
      invalid(
        first.at,
        "replace the subscription's first plan (a plan change) in a request of its own; replace its added plans together in another",
      );
    if (first) return { steps: [], replaces: [first] };
    // Each added plan's replace is that plan removed and the new one added: all of them one change.
    return {
      replaces: [],
      steps: moves.flatMap((m): PlanItemStep[] => [
        { kind: 'add', planId: m.to, at: m.at, field: `${m.at}.newPlanId` },
        { kind: 'remove', planId: m.planId, at: m.at },
      ]),
    };
  }
  return {
    replaces: [],
    steps: items.map((x, i): PlanItemStep => {
      const at = `items[${i}]`;
      if (x.action === 'add') return { kind: 'add', planId: lower(x.planId), at, granteeId: x.grantee, metadata: x.metadata };
      return { kind: 'remove', planId: lower(x.planId), at };
    }),
  };
}

const invoicesSchema = object({
  data: { type: 'array', items: { type: 'object', required: ['id'], properties: { id: str } } },
});

export function subscriptionRoutes({
  subscriptionDirectory: directory,
  subscriptions: lifecycle,
  subscriptionItems: items,
}: Pick<Core, 'subscriptionDirectory' | 'subscriptions' | 'subscriptionItems'>): Route[] {
  return resource({ name: 'subscriptions', description: 'Subscriptions: who pays for which plan, cancelled, renewed and billed' }, [
    route({
      method: 'get',
      path: '/api/subscriptions',
      operationId: 'listSubscriptions',
      summary: 'List subscriptions',
      description:
        "A page of subscriptions in creation order (`sort=desc`: newest first, the cursors leading on in that order), by owner (its value), id, products, plans, status (`active`, `trialing`, `past_due`, `unpaid`, `paused`, `canceled`; comma-separated), `search` (part of the owner's value or e-mail, or a whole subscription id), `priceId` (plans with that price) and `stripePriceId` (the provider's price id; unknown: none); `expand=owner,subscriptionPlans`.",
      scope: ['subscriptions', 'read'],
      query: listQuery,
      list: true,
      response: { status: 200, schema: listOf(subscriptionItemSchema) },
      handle: async ({ tenant, query }) => {
        const statuses = statusesOf(query.status);
        const expand = expandOf(query.expand, SUBSCRIPTION_EXPAND);
        const page = await directory.list(tenant, {
          ...pageQueryOf(query),
          owner: query.owner,
          id: query.id,
          productIds: idsOf(query.products),
          planIds: idsOf(query.plans),
          statuses,
          sort: query.sort?.toLowerCase() === 'desc' ? 'desc' : 'asc',
          search: query.search,
          priceId: query.priceId?.toLowerCase(),
          paymentPriceId: query.stripePriceId,
        });
        return { status: 200, body: listEnvelope(page, subscriptionRecordView(expand)) };
      },
    }),
    route({
      method: 'post',
      path: '/api/subscriptions',
      operationId: 'createSalableOnlySubscription',
      summary: 'Create a subscription without payment',
      description:
        "A subscription of the owner (made when new) to one plan, with nothing to bill: `grantee` gets the first seat (per-seat plans: the largest `metadata` quantity, at least the plan's minimum); it renews by itself until canceled (`cancelAtPeriodEnd`: ends with its first period). `interval`/`intervalCount` must be the plan's; `expiryDate` (in the future) ends its first period and, unless `cancelAtPeriodEnd: false`, the subscription.",
      scope: ['subscriptions', 'write'],
      body: createBody,
      response: { status: 201, schema: objectOf(subscriptionSchema) },
      handle: async ({ tenant, body }) => {
        const expiryDate = body.expiryDate === undefined ? undefined : new Date(body.expiryDate);
        // An expiry is when the subscription stops: its period ends there, and it does not renew unless `cancelAtPeriodEnd: false` says so.
        // Built from the write's own transaction: nothing is read after the commit.
        const { subscription, customer, plan } = await directory.createServiceOnly(tenant, {
          ...body,
          expiryDate,
          cancelAtPeriodEnd: body.cancelAtPeriodEnd ?? expiryDate !== undefined,
        });
        return { status: 201, body: objectEnvelope(subscriptionView(subscription, customer, plan)) };
      },
    }),
    route({
      method: 'get',
      path: '/api/subscriptions/:id',
      operationId: 'retrieveSubscription',
      summary: 'Retrieve a subscription',
      description: 'One subscription; `expand=owner,subscriptionPlans` brings the owner and its subscription plan with the plan.',
      scope: ['subscriptions', 'read'],
      query: { ...querySchema({ expand: str }), additionalProperties: false },
      response: { status: 200, schema: objectOf(subscriptionItemSchema) },
      handle: async ({ tenant, params, query }) => ({
        status: 200,
        body: objectEnvelope(subscriptionRecordView(expandOf(query.expand, SUBSCRIPTION_EXPAND))(await directory.get(tenant, params.id))),
      }),
    }),
    route({
      method: 'delete',
      path: '/api/subscriptions/:id',
      operationId: 'deleteSubscription',
      summary: 'Delete a subscription (test mode only)',
      description: 'Removes a test-mode subscription with its licenses for good; a running one is canceled first. A live key: 400.',
      scope: ['subscriptions', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await directory.delete(tenant, params.id);
        return noContent;
      },
    }),
    route({
      method: 'post',
      path: '/api/subscriptions/:id/cancel',
      operationId: 'cancelSubscription',
      summary: 'Cancel a subscription now',
      description: 'Cancels now with the payment provider; the record stays (status `canceled`). Already canceled: 400.',
      scope: ['subscriptions', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await lifecycle.cancel(tenant, params.id, 'now');
        return noContent;
      },
    }),
    route({
      method: 'put',
      path: '/api/subscriptions/:id/auto-renew',
      operationId: 'updateSubscriptionAutoRenew',
      summary: 'Turn auto-renew on or off',
      description:
        '`status=disable` schedules the cancellation at the end of the period (`cancelAtPeriodEnd`); `status=enable` removes a scheduled one while the period runs.',
      scope: ['subscriptions', 'write'],
      query: { ...querySchema({ status: { enum: ['enable', 'disable'] }, id: uuid }, ['status']), additionalProperties: false },
      response: { status: 204 },
      async handle({ tenant, params, query }) {
        await directory.setAutoRenew(tenant, params.id, query.status === 'enable');
        return noContent;
      },
    }),
    route({
      method: 'put',
      path: '/api/subscriptions/:id/items',
      operationId: 'updateSubscriptionItems',
      summary: "Add, remove or replace a subscription's plans",
      description:
        "`add` gives the subscription another plan (same billing interval and currency; its seats go to the subscription group's members, or to `grantee`; per-seat quantity from `metadata`), `remove` ends one of its plans (not the only one: 400, cancel the subscription instead); the adds and removes of a request apply together or not at all, prorated as `proration` says. `replace` moves one of its plans to `newPlanId`: the replaces of added plans apply together or not at all; the first plan's replace is a plan change and comes in a request of its own (with other items: 400).",
      scope: ['subscriptions', 'write'],
      body: itemsBody,
      response: { status: 204 },
      async handle({ tenant, params, body }) {
        const { subscription } = await directory.get(tenant, params.id);
        // A plan to add or move to that cannot be a plan's id is a plan not found (404 naming it).
        body.items.forEach((x, i) => {
          if (x.action === 'add') planIdOf(x.planId, `items[${i}].planId`);
          if (x.action === 'replace' && x.newPlanId !== undefined) planIdOf(x.newPlanId, `items[${i}].newPlanId`);
        });
        const proration = body.proration ?? 'create_prorations';
        const { replaces, steps } = itemStepsOf(body.items, { planIds: heldPlanIds(subscription), first: subscription.planId });
        if (steps.length) await items.change(tenant, params.id, steps, proration);
        // At most one: the first plan's change (itemStepsOf).
        for (const r of replaces) await lifecycle.changePlan(tenant, params.id, r.to, proration, `${r.at}.newPlanId`);
        return noContent;
      },
    }),
    route({
      method: 'get',
      path: '/api/subscriptions/:id/invoices',
      operationId: 'listSubscriptionInvoices',
      summary: "A subscription's invoices",
      description: "The payment provider's invoices of the subscription, in the provider's own shape, newest first.",
      scope: ['subscriptions', 'read'],
      response: { status: 200, schema: invoicesSchema },
      handle: async ({ tenant, params }) => ({ status: 200, body: { data: (await lifecycle.invoices(tenant, params.id)).data } }),
    }),
    route({
      method: 'post',
      path: '/api/subscriptions/:id/portal',
      operationId: 'createSubscriptionPortal',
      summary: 'A customer portal link',
      description: "A link to the payment provider's customer portal for the subscription's owner.",
      scope: ['subscriptions', 'write'],
      body: portalBody,
      response: { status: 200, schema: objectOf(object({ url: str })) },
      handle: async ({ tenant, params }) => ({ status: 200, body: objectEnvelope(await lifecycle.link(tenant, params.id, 'portal')) }),
    }),
    route({
      method: 'post',
      path: '/api/subscriptions/batch',
      operationId: 'batchSubscriptionActions',
      summary: 'One action on many subscriptions',
      description:
        "Cancel, turn auto-renew on or off, or delete (test mode only) up to 100 subscriptions. Every id is checked first (unknown: 404, another organisation: 403, nothing done); the answer tells each one's outcome.",
      scope: ['subscriptions', 'write'],
      body: batchBody,
      response: { status: 200, schema: objectOf(batchResultSchema) },
      handle: async ({ tenant, body }) => ({
        status: 200,
        body: objectEnvelope(
          await directory.batch(
            tenant,
            body.action,
            body.subscriptionIds.map((x) => x.toLowerCase()),
          ),
        ),
      }),
    }),
  ]);
}
