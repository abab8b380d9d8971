import { ErrorCodes, fail, invalid } from '../errors';
import type { BatchResult } from './subscriptions';
import type {
  Cart,
  CartItem,
  CartStatus,
  CheckoutSession,
  Customer,
  Id,
  Interval,
  LineItemQuantities,
  Page,
  Plan,
  Product,
  Tenant,
} from '../model';
import {
  abandonCart,
  addCartItem,
  assertItemInterval,
  assertPlanFitsCart,
  cartStatusOf,
  removeCartItem,
  replaceCart,
} from '../domain/cart';
import { groupSeats, quickCheckoutQuantity } from '../domain/quick-checkout';
import { GROUP_PREFIX } from '../domain/people';
import { assertCheckableGranteeId } from '../domain/grantee-ids';
import { purchaseFor } from './people/shared';
import { assertAccessible } from '../domain/tenancy';
import { isPerSeat, minimumSeats } from '../domain/catalog';
import { isUuid } from '../support/text';
import { isCurrencyCode } from '../support/money';
import type { Repositories } from '../ports';
import type { CheckoutService } from './checkout';
import type { CoreDeps } from './deps';

/** A cart as read: its status as paid checkouts make it, its owner, and (for a detail) its plans with their products. */
export interface CartView {
  cart: Cart;
  customer: Customer;
  plans: Map<Id, { plan: Plan; product: Product }>;
}

export interface CartCheckoutOptions {
  email?: string;
  successUrl?: string;
  cancelUrl?: string;
  allowPromoCodes?: boolean;
  automaticTax?: boolean;
}

/**
 * Carts (the published catalog API's): an owner's plans of one interval, checked out together
 * through the payment provider as one checkout session, paid into one subscription holding every
 * plan; the cart is complete once its items are paid (docs/decisions.md, "Commerce resources").
 */
export class Carts {
  constructor(
    private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'ids'>,
    private readonly checkout: CheckoutService,
  ) {}

  private async owner(r: Repositories, tenant: Tenant, value: string): Promise<Customer> {
    const now = this.deps.clock.now();
    return r.customers.findOrCreate({
      id: this.deps.ids.newId(),
      organisationId: tenant.organisationId,
      isTest: tenant.isTest,
      value,
      emailAddress: null,
      paymentCustomerId: null,
      createdAt: now,
      updatedAt: now,
    });
  }

  private async view(r: Repositories, cart: Cart, withPlans: boolean): Promise<CartView> {
    const sessions = new Map<Id, CheckoutSession>();
    for (const i of cart.items) {
      const s = i.checkoutSessionId ? await r.checkoutSessions.get(i.checkoutSessionId) : undefined;
      if (s) sessions.set(s.id, s);
    }
    const customer = (await r.customers.get(cart.customerId)) as Customer;
    const plans = new Map<Id, { plan: Plan; product: Product }>();
    if (withPlans)
      for (const id of new Set(cart.items.map((i) => i.planId))) {
        const plan = await r.plans.get(id);
        const product = plan && (await r.products.get(plan.productId));
        if (plan && product) plans.set(id, { plan, product });
      }
    return { cart: { ...cart, status: cartStatusOf(cart, sessions) }, customer, plans };
  }

  /** The tenant's cart, with the status its checkouts give it (a paid cart is complete). */
  private async load(r: Repositories, tenant: Tenant, id: Id, forUpdate = false): Promise<Cart> {
    const cart = assertAccessible(await (forUpdate ? r.carts.getForUpdate(id) : r.carts.get(id)), tenant, 'cart');
    return (await this.view(r, cart, false)).cart;
  }

  async create(
    tenant: Tenant,
    input: { owner: string; interval: Interval | null; intervalCount: number | null; currency?: string },
  ): Promise<Cart> {
    if (input.interval !== null && input.intervalCount === null) invalid('intervalCount', 'is required with an interval');
    return this.deps.uow.run(async (r) => {
      const customer = await this.owner(r, tenant, input.owner);
      const now = this.deps.clock.now();
      const cart: Cart = {
        id: this.deps.ids.newId(),
        ...tenant,
        customerId: customer.id,
        currency: input.currency?.toUpperCase() ?? null,
        interval: input.interval,
        intervalCount: input.interval === null ? null : input.intervalCount,
        status: 'active',
        items: [],
        createdAt: now,
        updatedAt: now,
      };
      await r.carts.save(cart);
      return cart;
    });
  }

  async list(
    tenant: Tenant,
    query: { limit: number; after?: string; before?: string; statuses?: CartStatus[]; ownerIds?: Id[]; search?: string },
  ): Promise<Page<CartView>> {
    return this.deps.uow.read(async (r) => {
      // A paid cart is stored active: `complete` is read from its checkouts, so both are asked for and sorted out here.
      const stored = query.statuses?.includes('complete') ? [...new Set([...query.statuses, 'active' as const])] : query.statuses;
      // An owner id that is not a UUID names no owner: it matches nothing (not a 400).
      const customerIds = query.ownerIds?.filter(isUuid);
      const page = await r.carts.page(tenant, { ...query, statuses: stored, customerIds });
      const items: CartView[] = [];
      for (const c of page.items) items.push(await this.view(r, c, false));
      return { ...page, items: items.filter((v) => !query.statuses || query.statuses.includes(v.cart.status)) };
    });
  }

  async get(tenant: Tenant, id: Id): Promise<CartView> {
    return this.deps.uow.read(async (r) => this.view(r, await this.load(r, tenant, id), true));
  }

  async addItem(
    tenant: Tenant,
    input: {
      cartId: Id;
      planId: Id;
      grantee?: string;
      interval: Interval | null;
      intervalCount: number | null;
      metadata?: LineItemQuantities;
    },
  ): Promise<{ cart: Cart; item: CartItem }> {
    return this.deps.uow.run(async (r) => {
      const cart = await this.load(r, tenant, input.cartId, true);
      assertItemInterval(cart, input.interval, input.intervalCount);
      const plan = assertAccessible(await r.plans.get(input.planId), tenant, 'plan');
      const product = (await r.products.get(plan.productId)) ?? fail(ErrorCodes.PRODUCT_NOT_FOUND, 'product not found');
      assertPlanFitsCart(cart, plan, product, input.metadata ?? null);
      const who = await purchaseFor(r, tenant, input.grantee);
      if (who.group) groupSeats(plan, who.members.length, input.metadata);
      const now = this.deps.clock.now();
      const item: CartItem = {
        id: this.deps.ids.newId(),
        planId: plan.id,
        granteeId: who.granteeId,
        groupId: who.group?.id ?? null,
        metadata: input.metadata ?? null,
        checkoutSessionId: null,
        createdAt: now,
        updatedAt: now,
      };
      const next = addCartItem(cart, item, now);
      await r.carts.save(next);
      return { cart: next, item };
    });
  }

  async removeItem(tenant: Tenant, itemId: Id): Promise<void> {
    await this.deps.uow.run(async (r) => {
      const cartId = await r.carts.cartOfItem(itemId);
      if (!cartId) return fail(ErrorCodes.NOT_FOUND, 'cart item not found');
      const cart = await this.load(r, tenant, cartId, true);
      await r.carts.save(removeCartItem(cart, itemId, this.deps.clock.now()));
    });
  }

  async replace(
    tenant: Tenant,
    id: Id,
    input: { currency: string | null; owner: string; cartItems: { id: Id; granteeId?: string; metadata?: LineItemQuantities }[] },
  ): Promise<void> {
    await this.deps.uow.run(async (r) => {
      const cart = await this.load(r, tenant, id, true);
      // A currency of the published list, or the one the cart already has (stored before the list,
      // or by an older release), as plans/save keeps a plan's: a cart is re-saved as it reads back.
      if (input.currency !== null && !isCurrencyCode(input.currency) && input.currency.toUpperCase() !== cart.currency?.toUpperCase())
        invalid('currency', "must be a currency code of the published list (e.g. USD), or the cart's own");
      const customer = await this.owner(r, tenant, input.owner);
      const items = [];
      for (const [i, c] of input.cartItems.entries()) {
        const who = c.granteeId === undefined ? undefined : await purchaseFor(r, tenant, c.granteeId, `cartItems[${i}].granteeId`);
        items.push({ id: c.id, metadata: c.metadata, who: who && { granteeId: who.granteeId, groupId: who.group?.id ?? null } });
      }
      const next = replaceCart(
        cart,
        { currency: input.currency?.toUpperCase() ?? null, customerId: customer.id, items },
        this.deps.clock.now(),
      );
      for (const i of next.items) {
        const plan = await r.plans.get(i.planId);
        if (!plan) continue;
        quickCheckoutQuantity(plan, i.metadata ?? undefined);
        if (i.groupId)
          groupSeats(plan, (await purchaseFor(r, tenant, `${GROUP_PREFIX}${i.groupId}`)).members.length, i.metadata ?? undefined);
      }
      await r.carts.save(next);
    });
  }

  async abandon(tenant: Tenant, id: Id): Promise<void> {
    await this.deps.uow.run(async (r) => {
      await r.carts.save(abandonCart(await this.load(r, tenant, id, true), this.deps.clock.now()));
    });
  }

  /**
   * Abandons each active cart named, in one transaction: a result per cart (skipped when not
   * active). Any cart that does not exist, or is another organisation's or mode's, refuses the
   * whole batch (404 / 403, as published), before anything changes.
   */
  async abandonMany(tenant: Tenant, ids: Id[]): Promise<BatchResult> {
    return this.deps.uow.run(async (r) => {
      const carts: Cart[] = [];
      for (const id of new Set(ids)) {
        const cart = isUuid(id) ? await r.carts.getForUpdate(id) : undefined;
        if (!cart) return fail(ErrorCodes.NOT_FOUND, 'some carts were not found');
        if (cart.organisationId !== tenant.organisationId)
          return fail(ErrorCodes.FORBIDDEN, 'some carts belong to a different organisation');
        // The other mode's cart: answered as any record of the other mode is.
        carts.push(assertAccessible(cart, tenant, 'cart'));
      }
      const now = this.deps.clock.now();
      const results: BatchResult['results'] = [];
      for (const cart of carts) {
        const { cart: current } = await this.view(r, cart, false);
        if (current.status !== 'active') {
          results.push({ id: cart.id, status: 'skipped', reason: `the cart is ${current.status}` });
          continue;
        }
        await r.carts.save(abandonCart(current, now));
        results.push({ id: cart.id, status: 'succeeded' });
      }
      const count = (s: string) => results.filter((x) => x.status === s).length;
      return { total: results.length, succeeded: count('succeeded'), failed: count('failed'), skipped: count('skipped'), results };
    });
  }

  /**
   * The cart's checkout link: one checkout session for every item not yet paid, so paying it starts
   * ONE subscription holding each plan (the first item's plan first, the others added to it),
   * through one provider session with a line per plan (docs/decisions.md, "Carts are checked out
   * as one subscription"). The owner is the buyer; each item's grantee (default: the owner), or its
   * group's members, get its seats.
   */
  async checkoutLink(tenant: Tenant, id: Id, options: CartCheckoutOptions): Promise<{ url: string }> {
    const { cart, customer } = await this.get(tenant, id);
    if (cart.status !== 'active') return fail(ErrorCodes.CART_NOT_ACTIVE, `the cart is ${cart.status}: it changes no more`);
    const due = await this.deps.uow.read(async (r) => {
      const out = [];
      for (const item of cart.items) {
        if (item.checkoutSessionId && (await r.checkoutSessions.get(item.checkoutSessionId))?.status === 'completed') continue;
        const plan = assertAccessible(await r.plans.get(item.planId), tenant, 'plan');
        const product = (await r.products.get(plan.productId)) ?? fail(ErrorCodes.PRODUCT_NOT_FOUND, 'product not found');
        // A group's members as they are now: each needs a seat of what is about to be sold.
        const members = item.groupId ? (await purchaseFor(r, tenant, `${GROUP_PREFIX}${item.groupId}`)).members.length : undefined;
        const quantity =
          members === undefined
            ? quickCheckoutQuantity(plan, item.metadata ?? undefined)
            : groupSeats(plan, members, item.metadata ?? undefined);
        out.push({ item, plan, product, quantity });
      }
      return out;
    });
    if (due.length === 0) return invalid('cartItems', 'the cart has no items to pay');
    // An item without a grantee gives its seat to the owner: its value must read back in the check too.
    if (due.some((d) => !d.item.groupId && d.item.granteeId === null))
      assertCheckableGranteeId('owner', customer.value, {
        because: 'gets the seat of an item without a grantee',
        fix: 'name a grantee for each item (PUT /api/carts/:id cartItems[i].granteeId)',
      });
    const [first, ...rest] = due;
    const who = (item: CartItem) => (item.groupId ? null : (item.granteeId ?? customer.value));
    // The session is written with its provider page (a call no transaction may wait on): a failure
    // leaves only an open session nobody is sent to, and the cart unchanged.
    const link = await this.checkout.sessionLink(tenant, first.item.planId, {
      successUrl: options.successUrl ?? first.product.settings.successUrl ?? undefined,
      cancelUrl: options.cancelUrl ?? first.product.settings.cancelUrl ?? undefined,
      granteeId: first.item.groupId ? `${GROUP_PREFIX}${first.item.groupId}` : (who(first.item) as string),
      ...(first.item.groupId ? { groupId: first.item.groupId } : {}),
      member: customer.value,
      customerEmail: options.email,
      currency: cart.currency ?? undefined,
      allowPromoCode: options.allowPromoCodes,
      automaticTax: options.automaticTax,
      ...(first.quantity !== undefined ? { quantity: first.quantity } : {}),
      extraItems: rest.map(({ item, plan, quantity }) => ({
        planId: plan.id,
        quantity: quantity ?? (isPerSeat(plan) ? minimumSeats(plan) : 1),
        granteeId: who(item),
        groupId: item.groupId,
      })),
    });
    const paying = new Set(due.map((d) => d.item.id));
    await this.deps.uow.run(async (r) => {
      const current = await this.load(r, tenant, id, true);
      const now = this.deps.clock.now();
      await r.carts.save({
        ...current,
        items: current.items.map((i) => (paying.has(i.id) ? { ...i, checkoutSessionId: link.sessionId, updatedAt: now } : i)),
        updatedAt: now,
      });
    });
    return { url: link.url };
  }
}
