import { ErrorCodes, fail, invalid } from '../errors';
import type { Cart, CartItem, CartStatus, CheckoutSession, Interval, LineItemQuantities, Plan, Product } from '../model';
import { assertPlanOnSale } from './catalog';
import { assertPlanInterval, quickCheckoutQuantity } from './quick-checkout';

/**
 * Cart rules (the published catalog API's carts): an active cart takes plans of its interval;
 * abandoned and completed ones change no more. Pure: the use case loads, decides here, and saves.
 */

const STATUS: Record<CartStatus, { open: boolean }> = {
  active: { open: true },
  abandoned: { open: false },
  complete: { open: false },
};

export function assertCartOpen(cart: Cart): void {
  if (!STATUS[cart.status].open) fail(ErrorCodes.CART_NOT_ACTIVE, `the cart is ${cart.status}: it changes no more`);
}

/** The plan may go into the cart: on sale, of the cart's interval, its quantities naming its line items. */
export function assertPlanFitsCart(cart: Cart, plan: Plan, product: Product, metadata: LineItemQuantities | null): void {
  assertPlanOnSale(plan, product);
  assertPlanInterval(plan, cart.interval, cart.intervalCount);
  quickCheckoutQuantity(plan, metadata ?? undefined);
}

/** A cart item asked for with its own interval: it must be the cart's. */
export function assertItemInterval(cart: Cart, interval: Interval | null, intervalCount: number | null): void {
  if (interval !== cart.interval) invalid('interval', `the cart is for ${cart.interval ?? 'one-off'} prices`);
  if (intervalCount !== null && cart.intervalCount !== null && intervalCount !== cart.intervalCount)
    invalid('intervalCount', `the cart is for every ${cart.intervalCount} ${cart.interval}(s)`);
}

export function addCartItem(cart: Cart, item: CartItem, now: Date): Cart {
  assertCartOpen(cart);
  if (cart.items.length >= 50) invalid('cartId', 'a cart holds at most 50 items');
  return { ...cart, items: [...cart.items, item], updatedAt: now };
}

export function removeCartItem(cart: Cart, itemId: string, now: Date): Cart {
  assertCartOpen(cart);
  return { ...cart, items: cart.items.filter((i) => i.id !== itemId), updatedAt: now };
}

/** The published update: a full replace of the currency, the owner and the items kept (each named by id). */
export function replaceCart(
  cart: Cart,
  change: {
    currency: string | null;
    customerId: string;
    /** `who`: the grantee or group the item is now for (absent: as it was). */
    items: { id: string; who?: { granteeId: string | null; groupId: string | null }; metadata?: LineItemQuantities }[];
  },
  now: Date,
): Cart {
  assertCartOpen(cart);
  const items = change.items.map((c, i) => {
    const current = cart.items.find((x) => x.id === c.id) ?? invalid(`cartItems[${i}].id`, 'is not an item of this cart');
    return {
      ...current,
      granteeId: c.who ? c.who.granteeId : current.granteeId,
      groupId: c.who ? c.who.groupId : current.groupId,
      metadata: c.metadata ?? current.metadata,
      updatedAt: now,
    };
  });
  return { ...cart, currency: change.currency, customerId: change.customerId, items, updatedAt: now };
}

export function abandonCart(cart: Cart, now: Date): Cart {
  assertCartOpen(cart);
  return { ...cart, status: 'abandoned', updatedAt: now };
}

/** A cart whose every item's checkout was paid is complete (as its status shows it). */
export function cartStatusOf(cart: Cart, sessions: ReadonlyMap<string, CheckoutSession>): CartStatus {
  if (cart.status !== 'active' || cart.items.length === 0) return cart.status;
  const paid = cart.items.every((i) => i.checkoutSessionId && sessions.get(i.checkoutSessionId)?.status === 'completed');
  return paid ? 'complete' : 'active';
}
