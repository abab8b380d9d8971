import type { CartItem, CartView, Customer, Plan, Product } from '@tollgate/core';
import { date, iso, nstr, num, str, uuid } from '@tollgate/http';
import { currencyOptionBaseProps, lineItemBaseProps, priceBaseProps, priceView } from './pricing-views';
import { object, objectOf, planProps, productSchema } from './response-schemas';
import { ownerSchema, ownerView } from './routes/receipts';
import { currencyCode } from './schemas';
import { catalogPlan, catalogProduct, lineItemFields, objectEnvelope } from './views';

/**
 * The published catalog API's carts and cart items: their request pieces shared by the two route
 * modules, their response schemas and their presenters (the cart detail nests plans, products and
 * pricing in the published cart-only shapes).
 */
/** An ISO 4217 currency code (schemas.ts). */
export const CURRENCY = currencyCode;
export const INTERVAL = { enum: ['day', 'week', 'month', 'year', null] } as const;
export const quantities = {
  type: 'object',
  maxProperties: 50,
  additionalProperties: {
    type: 'object',
    properties: { quantity: { type: 'number', minimum: 1 } },
    required: ['quantity'],
    additionalProperties: false,
  },
} as const;
const uri = { type: 'string', minLength: 1, maxLength: 2048 } as const;
/** The hosted checkout page's options, as the quick checkout and a cart's checkout both take them. */
export const checkoutPageProps = {
  email: { type: 'string', format: 'email', maxLength: 320, example: 'billing@vendor.example.com' },
  cancelUrl: uri,
  successUrl: uri,
  allowPromoCodes: { type: 'boolean' },
  automaticTax: { type: 'boolean' },
  collectBillingAddress: { type: 'boolean' },
  collectShippingAddress: { type: 'boolean' },
  cardPrefillPreference: { enum: ['none', 'always', 'choice'] },
  trialPeriodDays: { type: 'number', minimum: 1, maximum: 730 },
} as const;

export const cartProps = {
  id: uuid,
  organisation: uuid,
  ownerId: uuid,
  currency: nstr,
  interval: INTERVAL,
  intervalCount: { type: ['integer', 'null'] },
  status: { enum: ['active', 'abandoned', 'complete'] },
  createdAt: date,
  updatedAt: date,
};
export const cartItemProps = {
  id: uuid,
  organisation: uuid,
  cartId: uuid,
  planId: uuid,
  metadata: {},
  granteeId: nstr,
  groupId: nstr,
  createdAt: date,
  updatedAt: date,
};
export const lite = (item: object) => object({ type: { const: 'list' }, data: { type: 'array', items: item } });
export const detailItemSchema = object({
  ...cartItemProps,
  plan: object({
    ...planProps,
    product: object({ type: { const: 'object' }, data: productSchema }),
    lineItems: lite(
      object({ ...lineItemBaseProps, prices: lite(object({ ...priceBaseProps, currencyOptions: lite(object(currencyOptionBaseProps)) })) }),
    ),
  }),
});
export const cartSchema = object(cartProps, { owner: ownerSchema });
export const cartDetailSchema = object({ ...cartProps, owner: ownerSchema, cartItems: lite(detailItemSchema) });
export const batchSchema = objectOf(
  object({
    total: num,
    succeeded: num,
    failed: num,
    skipped: num,
    results: { type: 'array', items: object({ id: uuid, status: { enum: ['succeeded', 'failed', 'skipped'] } }, { reason: str }) },
  }),
);

export const cartItemView = (organisation: string, cartId: string) => (i: CartItem) => ({
  id: i.id,
  organisation,
  cartId,
  planId: i.planId,
  metadata: i.metadata,
  granteeId: i.granteeId,
  groupId: i.groupId,
  createdAt: iso(i.createdAt),
  updatedAt: iso(i.updatedAt),
});

export const cartView = (v: Pick<CartView, 'cart' | 'customer'>, withOwner: boolean) => ({
  id: v.cart.id,
  organisation: v.cart.organisationId,
  ownerId: v.cart.customerId,
  currency: v.cart.currency,
  interval: v.cart.interval,
  intervalCount: v.cart.intervalCount,
  status: v.cart.status,
  createdAt: iso(v.cart.createdAt),
  updatedAt: iso(v.cart.updatedAt),
  ...(withOwner ? { owner: ownerView(v.customer as Customer) } : {}),
});

export const liteList = <T, V>(items: T[], view: (t: T) => V) => ({ type: 'list' as const, data: items.map(view) });

/** A plan in a cart's detail: its product (in an object envelope, as published) and its line items with prices and currency options. */
export const cartPlanView = ({ plan, product }: { plan: Plan; product: Product }) => {
  const org = plan.organisationId;
  return {
    ...catalogPlan(plan),
    product: objectEnvelope(catalogProduct(product)),
    lineItems: liteList(plan.lineItems, (li) => ({
      ...lineItemFields(org, plan.id, li),
      prices: liteList(li.prices, (p) => ({
        ...priceView(org, li.id)(p),
        currencyOptions: liteList(p.currencyOptions, (o) => ({
          id: o.id,
          organisation: org,
          currency: o.currency.toUpperCase(),
          unitAmount: o.unitAmount,
          priceId: p.id,
          isDefault: o.isDefault,
          createdAt: iso(o.createdAt),
          updatedAt: iso(o.updatedAt),
        })),
      })),
    })),
  };
};
