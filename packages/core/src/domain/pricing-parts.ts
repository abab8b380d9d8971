import { ErrorCodes, fail, invalid } from '../errors';
import type { LineItem, Plan, Price, Product } from '../model';
import { assertProductOpen } from './catalog';

/**
 * Rules of a plan's pricing parts as their own resources (the published catalog API's line items
 * and prices): what may be archived, deleted or changed. Pure: the use case loads and saves.
 */

/** A part may change (or go) only while its plan and product are not archived: 400 naming the part's `id`. */
function assertParentsOpen(plan: Plan, product: Product, what: string): void {
  assertProductOpen(product, 'id', `the ${what}'s product is archived`, `is a ${what} of an archived product`);
  if (plan.archivedAt)
    fail(ErrorCodes.PLAN_ARCHIVED, `the ${what}'s plan is archived`, [{ property: 'id', error: `is a ${what} of an archived plan` }]);
}

/** The plan with one line item replaced by what `change` makes of it. */
const withLineItem = (plan: Plan, id: string, change: (li: LineItem) => LineItem | null, now: Date): Plan => ({
  ...plan,
  lineItems: plan.lineItems.map((li) => (li.id === id ? change(li) : li)).filter((li): li is LineItem => li !== null),
  updatedAt: now,
});

export interface LineItemChange {
  name: string;
  slug: string;
  nickname?: string;
  priceType: LineItem['priceType'];
  intervalType: LineItem['intervalType'];
  billingScheme: LineItem['billingScheme'];
  tiersMode: LineItem['tiersMode'];
  minQuantity: number;
  maxQuantity: number;
  isActive?: boolean;
  allowChangingQuantity?: boolean;
  meterSlug?: string | null;
  unitLabel?: string | null;
}

/**
 * A line item's new description. Its price type and meter stay (subscriptions and usage are
 * recorded against them: a new line item is the way to another); an archived one cannot change.
 */
export function updateLineItem(plan: Plan, product: Product, id: string, c: LineItemChange, now: Date): Plan {
  assertParentsOpen(plan, product, 'line item');
  return withLineItem(
    plan,
    id,
    (li) => {
      if (li.archivedAt) fail(ErrorCodes.PLAN_ARCHIVED, 'the line item is archived');
      if (c.priceType !== li.priceType) invalid('priceType', `stays ${li.priceType}: save the plan with a new line item to change it`);
      if (c.meterSlug && c.meterSlug !== li.meter?.slug) invalid('meterSlug', 'the meter of a line item stays as it was saved');
      if (c.minQuantity > c.maxQuantity) invalid('minQuantity', 'must not exceed maxQuantity');
      if (plan.lineItems.some((o) => o.id !== id && o.slug === c.slug)) invalid('slug', `another line item of the plan is ${c.slug}`);
      return {
        ...li,
        name: c.name,
        slug: c.slug,
        nickname: c.nickname ?? li.nickname,
        intervalType: c.intervalType,
        billingScheme: c.billingScheme,
        tiersMode: c.billingScheme === 'tiered' ? c.tiersMode : null,
        minQuantity: c.minQuantity,
        maxQuantity: c.maxQuantity,
        isActive: c.isActive ?? li.isActive,
        allowChangingQuantity: c.allowChangingQuantity ?? li.allowChangingQuantity,
        unitLabel: c.unitLabel === undefined ? li.unitLabel : c.unitLabel,
        updatedAt: now,
      };
    },
    now,
  );
}

export function archiveLineItem(plan: Plan, product: Product, id: string, now: Date): Plan {
  assertParentsOpen(plan, product, 'line item');
  return withLineItem(
    plan,
    id,
    (li) => {
      if (li.archivedAt) fail(ErrorCodes.PLAN_ARCHIVED, 'the line item is already archived');
      return { ...li, archivedAt: now, isActive: false, updatedAt: now };
    },
    now,
  );
}

/**
 * Removes a line item no subscription was sold with (`sold`: the ids of the line items subscriptions
 * hold), of a plan and product not archived (they are read-only).
 */
export function deleteLineItem(plan: Plan, product: Product, id: string, sold: ReadonlySet<string>, now: Date): Plan {
  assertParentsOpen(plan, product, 'line item');
  if (sold.has(id)) fail(ErrorCodes.CONFLICT, 'subscriptions were sold with this line item: archive it instead');
  return withLineItem(plan, id, () => null, now);
}

const withPrice = (plan: Plan, lineItemId: string, priceId: string, change: (p: Price, li: LineItem) => Price | null, now: Date): Plan =>
  withLineItem(
    plan,
    lineItemId,
    (li) => ({
      ...li,
      prices: li.prices.map((p) => (p.id === priceId ? change(p, li) : p)).filter((p): p is Price => p !== null),
      updatedAt: now,
    }),
    now,
  );

/** Archives a price; never its line item's last active one (the line item would have nothing to sell). */
export function archivePrice(plan: Plan, product: Product, lineItemId: string, priceId: string, now: Date): Plan {
  assertParentsOpen(plan, product, 'price');
  return withPrice(
    plan,
    lineItemId,
    priceId,
    (p, li) => {
      if (p.archivedAt) fail(ErrorCodes.PLAN_ARCHIVED, 'the price is already archived');
      if (li.archivedAt) fail(ErrorCodes.PLAN_ARCHIVED, "the price's line item is archived");
      if (!li.prices.some((o) => o.id !== p.id && !o.archivedAt))
        fail(ErrorCodes.VALIDATION_FAILED, 'the last active price of its line item cannot be archived');
      return { ...p, archivedAt: now, updatedAt: now };
    },
    now,
  );
}

/** Removes a price of a line item no subscription was sold with, of a plan and product not archived. */
export function deletePrice(plan: Plan, product: Product, lineItemId: string, priceId: string, sold: ReadonlySet<string>, now: Date): Plan {
  assertParentsOpen(plan, product, 'price');
  if (sold.has(lineItemId)) fail(ErrorCodes.CONFLICT, "subscriptions were sold with this price's line item: archive the price instead");
  return withPrice(plan, lineItemId, priceId, () => null, now);
}
