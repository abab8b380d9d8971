import type { CurrencyOption, LineItem, Placed, Price, Tier } from '@tollgate/core';
import { bool, date, int, iso, ndate, nstr, num, str, uuid } from '@tollgate/http';
import { nestedListOf, object } from './response-schemas';
import { lineItemFields, nestedList, priceFields } from './views';

/**
 * The published catalog API's pricing parts as resources of their own (line items, prices,
 * currency options, tiers): their base shapes (a part without its children, unlike a plan's
 * expanded `lineItems`), shared by their route modules.
 */

const stamps = { createdAt: date, updatedAt: date };
const nullable = (s: object) => ({ anyOf: [s, { type: 'null' }] });

export const lineItemBaseProps = {
  id: uuid,
  organisation: uuid,
  name: str,
  slug: str,
  paymentProductId: str,
  meterId: nullable(uuid),
  nickname: str,
  priceType: { enum: ['metered', 'per_seat', 'flat_rate'] },
  intervalType: { enum: ['one_off', 'recurring'] },
  billingScheme: { enum: ['fixed', 'per_unit', 'tiered', 'flat_rate'] },
  tiersMode: { enum: [null, 'graduated', 'volume'] },
  minQuantity: int,
  maxQuantity: int,
  isActive: bool,
  planId: uuid,
  allowChangingQuantity: bool,
  archivedAt: ndate,
  unitLabel: nstr,
  ...stamps,
};
export const priceBaseProps = {
  id: uuid,
  organisation: uuid,
  paymentPriceId: str,
  interval: { enum: [null, 'day', 'week', 'month', 'year'] },
  intervalCount: { type: ['integer', 'null'] },
  lineItemId: uuid,
  archivedAt: ndate,
  ...stamps,
};
export const tierSchema = object({
  id: uuid,
  organisation: uuid,
  upTo: str,
  flatAmount: { type: ['number', 'null'] },
  unitAmount: num,
  currencyOptionId: uuid,
  ...stamps,
});
export const currencyOptionBaseProps = {
  id: uuid,
  organisation: uuid,
  currency: str,
  unitAmount: { type: ['number', 'null'] },
  priceId: uuid,
  isDefault: bool,
  ...stamps,
};
export const priceSchema = object(priceBaseProps);
export const lineItemSchema = object(lineItemBaseProps, { prices: nestedListOf(priceSchema) });
export const currencyOptionSchema = object(currencyOptionBaseProps, { tiers: nestedListOf(tierSchema) });

export const tierView = (organisation: string, currencyOptionId: string) => (t: Tier) => ({
  id: t.id,
  organisation,
  upTo: t.upTo,
  flatAmount: t.flatAmount,
  unitAmount: t.unitAmount,
  currencyOptionId,
  createdAt: iso(t.createdAt),
  updatedAt: iso(t.updatedAt),
});

export const priceView = (organisation: string, lineItemId: string) => (p: Price) => priceFields(organisation, lineItemId, p);

/** A line item; with `prices` when expanded. */
export const lineItemView = (x: Placed<LineItem>, expandPrices = false) => ({
  ...lineItemFields(x.plan.organisationId, x.plan.id, x.item),
  ...(expandPrices
    ? { prices: nestedList(x.item.prices, `/api/line-items/${x.item.id}?expand=prices`, priceView(x.plan.organisationId, x.item.id)) }
    : {}),
});

/** A currency option; with `tiers` when expanded. */
export const currencyOptionView = (x: Placed<CurrencyOption>, expandTiers = false) => ({
  id: x.item.id,
  organisation: x.plan.organisationId,
  currency: x.item.currency.toUpperCase(),
  unitAmount: x.item.unitAmount,
  priceId: x.priceId,
  isDefault: x.item.isDefault,
  createdAt: iso(x.item.createdAt),
  updatedAt: iso(x.item.updatedAt),
  ...(expandTiers
    ? { tiers: nestedList(x.item.tiers, `/api/currency-options/${x.item.id}?expand=tiers`, tierView(x.plan.organisationId, x.item.id)) }
    : {}),
});
