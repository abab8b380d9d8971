import { randomUUID } from 'node:crypto';
import type { LineItem } from '@tollgate/core';

/** The instant the fixtures are made at. */
export const T0 = new Date('2026-01-01T00:00:00Z');

/** The stand-in a catalog save gives a price of this id saved without a provider price id. */
export const standIn = (priceId: string) => `price_${priceId.replace(/-/g, '').slice(0, 14)}`;

/**
 * A metered line item on meter `slug` charging `unitAmount` cents a unit in EUR (2 by default), its
 * price's `paymentPriceId` as given, or made from the price's own id (`standIn`); `over` replaces members.
 */
export function metered(
  slug: string,
  paymentPriceId: string | ((priceId: string) => string),
  unitAmount = 2,
  over: Partial<LineItem> = {},
): LineItem {
  const priceId = randomUUID();
  return {
    id: randomUUID(),
    name: slug,
    slug: `${slug}-usage`,
    paymentProductId: 'prod_x',
    nickname: slug,
    priceType: 'metered',
    intervalType: 'recurring',
    billingScheme: 'per_unit',
    tiersMode: null,
    minQuantity: 1,
    maxQuantity: 1,
    isActive: true,
    allowChangingQuantity: false,
    unitLabel: null,
    meter: { id: randomUUID(), slug, name: slug, paymentMeterId: `mtr_${slug}`, createdAt: T0, updatedAt: T0 },
    usage: { allowance: 0n, maxUsage: null, minUsage: 0n, rollover: { kind: 'none' } },
    prices: [
      {
        id: priceId,
        paymentPriceId: typeof paymentPriceId === 'string' ? paymentPriceId : paymentPriceId(priceId),
        interval: 'month',
        intervalCount: 1,
        currencyOptions: [{ id: randomUUID(), currency: 'eur', unitAmount, isDefault: true, tiers: [], createdAt: T0, updatedAt: T0 }],
        archivedAt: null,
        createdAt: T0,
        updatedAt: T0,
      },
    ],
    archivedAt: null,
    createdAt: T0,
    updatedAt: T0,
    ...over,
  };
}
