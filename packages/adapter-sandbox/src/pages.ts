import express, { type ErrorRequestHandler, type Request, type Response } from 'express';
import {
  assertCleanText,
  BUSY_RETRY_AFTER_SECONDS,
  DATABASE_RETRY_AFTER_SECONDS,
  DomainError,
  ErrorCodes,
  isDomainError,
  isOutage,
  MAY_HAVE_BEEN_APPLIED,
  formatMinorMoney,
  planTerms,
  pricePeriod,
  STATUS_WORDS,
  unitAmount,
  type CheckoutService,
  type SeatService,
  type Logger,
  type SubscriptionLifecycle,
} from '@tollgate/core';
import { html, page, PAGE_HEADERS } from './html';
import { FREE_CHECKOUT_NAME, type SandboxPage, type SandboxPaymentProvider } from './provider';

export interface SandboxPagesDeps {
  checkout: CheckoutService;
  subscriptions: SubscriptionLifecycle;
  /** Seat changes from the portal (applied by the event worker, as the API's are). */
  seats?: Pick<SeatService, 'requestQuantity'>;
  provider: SandboxPaymentProvider;
  logger: Logger;
}

const STATUS: Record<string, number> = {
  CHECKOUT_SESSION_NOT_FOUND: 404,
  SUBSCRIPTION_NOT_FOUND: 404,
  CHECKOUT_ALREADY_COMPLETED: 409,
  CHECKOUT_CANCELED: 409,
  NOT_FOUND: 404,
  // A write that met another at once (two checkouts making one new customer): reload and retry.
  CONFLICT: 409,
  // The database does not answer, or every connection stayed in use: nothing to fix, try again.
  DATABASE_UNAVAILABLE: 503,
  BUSY: 503,
};

/** Seconds to wait before trying again, as the APIs ask. */
const RETRY_AFTER: Record<string, number> = { DATABASE_UNAVAILABLE: DATABASE_RETRY_AFTER_SECONDS, BUSY: BUSY_RETRY_AFTER_SECONDS };

/**
 * An outage met while the change was being committed: it may have been applied (a payment taken,
 * a subscription canceled), so the page says so and links to where the buyer sees whether it was,
 * never "try again" (a second pay would be refused as already done, at best).
 */
const inDoubt = (err: DomainError): boolean => isOutage(err) && err.message.includes(MAY_HAVE_BEEN_APPLIED);

/** The heading of an error page: a retryable error is not "already done". */
function headingOf(code: string, status: number): string {
  if (code === ErrorCodes.CONFLICT) return 'Please try again';
  if (status === 503) return 'Please try again shortly';
  return status === 409 ? 'Already done' : status === 404 ? 'Not found' : 'Cannot do that';
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** Forms of the hosted pages are small: past this, 413. */
export const FORM_LIMIT = '10kb';

function sendPage(res: Response, status: number, title: string, body: ReturnType<typeof html>): void {
  const text = page(title, body);
  res.status(status);
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  for (const [name, value] of Object.entries(PAGE_HEADERS)) res.setHeader(name, value);
  res.end(text);
}

const redirect = (res: Response, url: string) => {
  res.status(303).setHeader('Location', url);
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.end();
};

/**
 * The sandbox's hosted pages: checkout (pay once, then 303 to successUrl), customer portal,
 * update-payment and cancel pages. Subscription pages need the signed token of their link.
 */
export function createSandboxRouter(deps: SandboxPagesDeps): express.Router {
  const r = express.Router();
  r.use(express.urlencoded({ extended: false, limit: FORM_LIMIT }));
  // Ids are parsed as UUIDs before any query; query strings and forms hold only text we can keep.
  r.param('sessionId', (_req, _res, next, id) =>
    next(UUID.test(String(id)) ? undefined : new DomainError(ErrorCodes.CHECKOUT_SESSION_NOT_FOUND, 'no such checkout session')),
  );
  r.param('subscriptionId', (_req, _res, next, id) =>
    next(UUID.test(String(id)) ? undefined : new DomainError(ErrorCodes.SUBSCRIPTION_NOT_FOUND, 'no such subscription')),
  );
  r.use((req, _res, next) => {
    assertCleanText(req.query, 'query');
    if (req.body) assertCleanText(req.body, 'form');
    next();
  });

  /**
   * A checkout session these pages may show, pay or cancel: the sandbox's own, or the free
   * checkout's. The pages are mounted beside Stripe too (free plans check out here), and a Stripe
   * session paid here would start a subscription nobody paid for: as if it did not exist.
   */
  const hosted = async (sessionId: string) => {
    const found = await deps.checkout.session(sessionId);
    if (found.session.provider !== deps.provider.name && found.session.provider !== FREE_CHECKOUT_NAME)
      throw new DomainError(ErrorCodes.CHECKOUT_SESSION_NOT_FOUND, 'no such checkout session');
    return found;
  };

  r.get('/checkout/:sessionId', async (req, res) => {
    const { session, plan, catalog } = await hosted(req.params.sessionId);
    const o = session.options;
    const price = unitAmount(plan, o.currency, catalog.currencies);
    const free = plan.pricingType === 'free';
    if (session.status === 'canceled') {
      return sendPage(
        res,
        409,
        'Checkout canceled',
        html`<h1>This checkout was canceled</h1>
          <p><a href="${session.cancelUrl}">Back</a></p>`,
      );
    }
    if (session.status === 'completed') {
      return sendPage(
        res,
        200,
        'Already paid',
        html`<h1>This checkout is complete</h1>
          <p>It has already been paid.</p>
          <p><a href="${session.successUrl}">Continue</a></p>`,
      );
    }
    const perSeat = plan.licenseType === 'perSeat';
    const action = `/sandbox/checkout/${session.id}`;
    const money = (minor: number) => formatMinorMoney(minor, o.currency);
    const terms = planTerms(plan);
    const chooseSeats = o.changeQuantity && perSeat;
    const every = plan.length > 1 ? `every ${plan.length} ${plan.interval}s` : `per ${plan.interval}`;
    const trial = plan.trialDays ? `${plan.trialDays}-day free trial` : '';
    sendPage(
      res,
      200,
      `Checkout: ${plan.displayName}`,
      html` <h1>Checkout</h1>
        <dl>
          <dt>Product</dt>
          <dd>${catalog.product.displayName}</dd>
          <dt>Plan</dt>
          <dd id="plan">${plan.displayName}</dd>
          <dt>Price</dt>
          <dd id="price">${free ? 'Free' : `${money(price)} ${pricePeriod(plan)}`}</dd>
          ${
            terms.length
              ? html`<dt>Terms</dt>
                  <dd id="terms">${terms.join(' · ')}</dd>`
              : ''
          }
          ${
            chooseSeats
              ? ''
              : html`<dt>Seats</dt>
                  <dd id="seats">${o.quantity}</dd>`
          }
          <dt>For</dt>
          <dd id="grantee">${session.granteeId}</dd>
          ${
            free
              ? ''
              : html`<dt>Total</dt>
                  <dd class="total" id="total" data-unit="${price}">
                    <span id="total-amount">${money(price * o.quantity)}</span>
                    ${every}${trial ? `, first charged after the ${trial}` : ', charged today'}
                  </dd>`
          }
        </dl>
        <form method="post" action="${action}/pay">
          ${chooseSeats ? html`<label for="quantity">Seats</label><input id="quantity" name="quantity" type="number" inputmode="numeric" min="${Math.max(1, plan.perSeatAmount)}" value="${o.quantity}" required />` : ''}
          <button type="submit" id="pay">${free ? 'Get it free' : trial ? `Start the ${trial}` : 'Pay'}</button>
        </form>
        <form method="post" action="${action}/cancel"><button type="submit" class="secondary">Cancel</button></form>`,
    );
  });

  r.post('/checkout/:sessionId/pay', async (req, res) => {
    await hosted(req.params.sessionId);
    const quantity = req.body?.quantity !== undefined && req.body.quantity !== '' ? Number(req.body.quantity) : undefined;
    // Checked again under the session's lock, with the provider its plans now go to.
    const done = await deps.checkout.completeCheckout(req.params.sessionId, { quantity, via: [deps.provider.name, FREE_CHECKOUT_NAME] });
    redirect(res, done.session.successUrl);
  });

  r.post('/checkout/:sessionId/cancel', async (req, res) => {
    await hosted(req.params.sessionId);
    const session = await deps.checkout.cancelCheckout(req.params.sessionId);
    redirect(res, session.cancelUrl);
  });

  // Where a purchase can land when the vendor has no page of its own yet (the demo's links).
  r.get('/thank-you', (_req, res) =>
    sendPage(
      res,
      200,
      'Thank you',
      html`<h1>Thank you!</h1>
        <p id="thanks">Your purchase is complete: the plan is yours from now on.</p>
        <p>You can close this page and go back to the app.</p>`,
    ),
  );

  /**
   * The subscription of a signed page link, with its tenant: a link to one of `kinds` (the portal's
   * link also opens the payment-method page, as the portal does everything that page does).
   */
  async function authorised(req: Request, ...kinds: SandboxPage[]) {
    const id = req.params.subscriptionId as string;
    const token = req.query.token ?? req.body?.token;
    if (!kinds.some((kind) => deps.provider.links.verify(kind, id, token))) return undefined;
    const tenant = await deps.subscriptions.tenantOf(id);
    return { id, tenant, token: token as string };
  }
  /**
   * After a form is sent: back to the page it came from with the same token, so the link keeps its
   * kind and its expiry (a freshly signed one would live another hour, and a cancel link would
   * become a portal link).
   */
  const back = (res: Response, kind: SandboxPage, a: { id: string; token: string }) => {
    const url = new URL(deps.provider.links.page(kind, a.id));
    url.searchParams.set('token', a.token);
    redirect(res, url.href);
  };
  const forbidden = (res: Response) =>
    sendPage(
      res,
      403,
      'Link not valid',
      html`<h1>This link is not valid</h1>
        <p>Ask for a new link from the app you subscribed in.</p>`,
    );

  r.get('/portal/:subscriptionId', async (req, res) => {
    const a = await authorised(req, 'portal');
    if (!a) return forbidden(res);
    const view = await deps.subscriptions.get(a.tenant, a.id);
    const invoices = await deps.subscriptions.invoices(a.tenant, a.id);
    const s = view.subscription;
    const running = s.status !== 'CANCELED';
    const switchable = running ? (await deps.subscriptions.switchablePlans(a.tenant, a.id)).plans : [];
    const perSeat = view.plan.licenseType === 'perSeat';
    const query = `?token=${encodeURIComponent(a.token)}`;
    const status = `${STATUS_WORDS[s.status] ?? s.status}${s.cancelAtPeriodEnd && running ? ', ends at the end of this period' : ''}`;
    sendPage(
      res,
      200,
      'Your subscription',
      html` <h1>Your subscription</h1>
        <dl>
          <dt>Product</dt>
          <dd>${view.product.displayName}</dd>
          <dt>Plan</dt>
          <dd id="plan">${view.plan.displayName}</dd>
          <dt>Status</dt>
          <dd id="status">${status}</dd>
          <dt>Seats</dt>
          <dd id="seats">${s.quantity}</dd>
          <dt>${s.cancelAtPeriodEnd ? 'Ends on' : 'Renews on'}</dt>
          <dd>${s.currentPeriodEnd.toISOString().slice(0, 10)}</dd>
        </dl>
        ${
          running && perSeat && deps.seats
            ? html`<h2>Seats</h2>
                <form method="post" action="/sandbox/portal/${a.id}/seats${query}">
                  <label for="seat-count">Seats (at least ${Math.max(1, view.plan.perSeatAmount)})</label>
                  <input
                    id="seat-count"
                    name="quantity"
                    type="number"
                    inputmode="numeric"
                    min="${Math.max(1, view.plan.perSeatAmount)}"
                    value="${s.quantity}"
                    required
                  />
                  <button type="submit" id="change-seats">Change seats</button>
                </form>`
            : ''
        }
        ${
          switchable.length
            ? html`<h2>Change plan</h2>
                <ul class="plans">
                  ${switchable.map(
                    (p) =>
                      html`<li>
                        <form method="post" action="/sandbox/portal/${a.id}/plan${query}">
                          <input type="hidden" name="planId" value="${p.id}" />
                          <button type="submit" class="secondary">Switch to ${p.displayName}</button>
                        </form>
                      </li>`,
                  )}
                </ul>`
            : ''
        }
        <h2>Invoices</h2>
        <table>
          <caption class="visually-hidden">
            Invoices, newest first
          </caption>
          <thead>
            <tr>
              <th scope="col">Number</th>
              <th scope="col">Date</th>
              <th scope="col">Amount</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            ${invoices.data.map(
              (i: Record<string, unknown>) =>
                html`<tr>
                  <td>${i.number}</td>
                  <td>${new Date(Number(i.created) * 1000).toISOString().slice(0, 10)}</td>
                  <td>${formatMinorMoney(Number(i.total), String(i.currency))}</td>
                  <td>${String(i.status).charAt(0).toUpperCase() + String(i.status).slice(1)}</td>
                </tr>`,
            )}
          </tbody>
        </table>
        ${running ? html`<p><a href="/sandbox/payment-method/${a.id}${query}">Update payment method</a></p>` : ''}
        ${running && s.cancelAtPeriodEnd ? html`<form method="post" action="/sandbox/portal/${a.id}/reactivate${query}"><button type="submit" id="reactivate">Keep my subscription</button></form>` : ''}
        ${
          running && !s.cancelAtPeriodEnd
            ? html`<details class="danger">
                <summary>Cancel subscription</summary>
                <p>${view.plan.displayName} stays yours until ${s.currentPeriodEnd.toISOString().slice(0, 10)}, then ends.</p>
                <form method="post" action="/sandbox/portal/${a.id}/cancel${query}">
                  <button type="submit" class="secondary" id="cancel-at-end">Cancel at period end</button>
                </form>
              </details>`
            : ''
        }`,
    );
  });

  r.post('/portal/:subscriptionId/seats', async (req, res) => {
    const a = await authorised(req, 'portal');
    if (!a) return forbidden(res);
    const wanted = Number(req.body?.quantity);
    if (!Number.isInteger(wanted) || wanted < 1)
      throw new DomainError(ErrorCodes.VALIDATION_FAILED, 'the seat count must be a whole number of at least 1');
    // The number asked for (a form sent twice is no second change).
    if (deps.seats) await deps.seats.requestQuantity(a.tenant, a.id, wanted, 'create_prorations');
    back(res, 'portal', a);
  });

  r.post('/portal/:subscriptionId/plan', async (req, res) => {
    const a = await authorised(req, 'portal');
    if (!a) return forbidden(res);
    const planId = String(req.body?.planId ?? '').toLowerCase();
    if (!UUID.test(planId)) throw new DomainError(ErrorCodes.PLAN_NOT_FOUND, 'no such plan');
    // Only a plan the page offers (the same list: public, on sale, of its interval, one change-plan
    // takes): a private or inactive plan's id sent by hand is refused like one of no plan.
    const { plans } = await deps.subscriptions.switchablePlans(a.tenant, a.id);
    if (!plans.some((p) => p.id === planId))
      throw new DomainError(ErrorCodes.VALIDATION_FAILED, 'that plan is not one this subscription can switch to', [
        { property: 'planId', error: 'is not one of the plans this subscription can switch to' },
      ]);
    await deps.subscriptions.changePlan(a.tenant, a.id, planId, 'create_prorations');
    back(res, 'portal', a);
  });

  r.post('/portal/:subscriptionId/cancel', async (req, res) => {
    const a = await authorised(req, 'portal');
    if (!a) return forbidden(res);
    await deps.subscriptions.cancel(a.tenant, a.id, 'end');
    back(res, 'portal', a);
  });

  r.post('/portal/:subscriptionId/reactivate', async (req, res) => {
    const a = await authorised(req, 'portal');
    if (!a) return forbidden(res);
    await deps.subscriptions.reactivate(a.tenant, a.id);
    back(res, 'portal', a);
  });

  r.get('/payment-method/:subscriptionId', async (req, res) => {
    const a = await authorised(req, 'payment-method', 'portal');
    if (!a) return forbidden(res);
    const pm = (await deps.subscriptions.paymentMethod(a.tenant, a.id).catch(() => null)) as {
      card?: { brand: string; last4: string };
    } | null;
    sendPage(
      res,
      200,
      'Payment method',
      html` <h1>Payment method</h1>
        <p id="current">${pm?.card ? `Current card: ${pm.card.brand} ending ${pm.card.last4}` : 'No card on file'}</p>
        <form method="post" action="/sandbox/payment-method/${a.id}?token=${encodeURIComponent(a.token)}">
          <label for="card">New test card</label>
          <select id="card" name="card">
            <option value="visa">Visa 4242</option>
            <option value="mastercard">Mastercard 4444</option>
          </select>
          <button type="submit">Save card</button>
        </form>`,
    );
  });

  r.post('/payment-method/:subscriptionId', async (req, res) => {
    const a = await authorised(req, 'payment-method', 'portal');
    if (!a) return forbidden(res);
    const view = await deps.subscriptions.get(a.tenant, a.id);
    const brand = req.body?.card === 'mastercard' ? 'mastercard' : 'visa';
    const card = deps.provider.replacementCard(view.subscription, view.subscription.email, view.customer?.value ?? '', brand);
    await deps.subscriptions.keepDocuments(a.tenant, a.id, [card]);
    back(res, 'payment-method', a);
  });

  r.get('/cancel/:subscriptionId', async (req, res) => {
    const a = await authorised(req, 'cancel');
    if (!a) return forbidden(res);
    const view = await deps.subscriptions.get(a.tenant, a.id);
    const s = view.subscription;
    const end = s.currentPeriodEnd.toISOString().slice(0, 10);
    // Once canceled (this link's own form answers here): what happens, and nothing more to do.
    if (s.status === 'CANCELED' || s.cancelAtPeriodEnd)
      return sendPage(
        res,
        200,
        'Subscription canceled',
        html` <h1>Your subscription is canceled</h1>
          <p id="canceled">
            ${s.status === 'CANCELED' ? `${view.plan.displayName} has ended.` : `${view.plan.displayName} stays active until ${end}, then ends.`}
          </p>`,
      );
    sendPage(
      res,
      200,
      'Cancel subscription',
      html` <h1>Cancel your subscription</h1>
        <p>${view.plan.displayName} stays active until ${end}, then ends.</p>
        <form method="post" action="/sandbox/cancel/${a.id}?token=${encodeURIComponent(a.token)}">
          <button type="submit" id="confirm-cancel">Cancel at period end</button>
        </form>`,
    );
  });

  r.post('/cancel/:subscriptionId', async (req, res) => {
    const a = await authorised(req, 'cancel');
    if (!a) return forbidden(res);
    await deps.subscriptions.cancel(a.tenant, a.id, 'end');
    back(res, 'cancel', a);
  });

  /**
   * The page a form of `req` was sent from (a checkout session's, or a subscription page's with the
   * same token), where the buyer sees what happened; undefined for any other path.
   */
  const pageOf = (req: Request): string | undefined => {
    const [kind, id] = req.path.split('/').filter(Boolean);
    if (!id || !UUID.test(id)) return undefined;
    if (kind === 'checkout') return deps.provider.links.checkout(id);
    const token = req.query.token ?? req.body?.token;
    if ((kind !== 'portal' && kind !== 'payment-method' && kind !== 'cancel') || typeof token !== 'string') return undefined;
    const url = new URL(deps.provider.links.page(kind, id));
    url.searchParams.set('token', token);
    return url.href;
  };

  const errors: ErrorRequestHandler = (err, req, res, _next) => {
    if (isDomainError(err) && inDoubt(err)) {
      const checkAt = pageOf(req);
      return sendPage(
        res,
        STATUS[err.code] ?? 503,
        'It may have gone through',
        html`<h1>It may have gone through</h1>
          <p>${err.message}</p>
          ${checkAt ? html`<p><a href="${checkAt}" id="check-back">See whether it did</a> before trying again.</p>` : ''}`,
      );
    }
    if (isDomainError(err)) {
      const status = STATUS[err.code] ?? 400;
      const retryAfter = RETRY_AFTER[err.code];
      if (retryAfter !== undefined) res.setHeader('Retry-After', String(retryAfter));
      return sendPage(
        res,
        status,
        'Something is not right',
        html`<h1>${headingOf(err.code, status)}</h1>
          <p>${err.message}</p>`,
      );
    }
    // The request's own fault (a body over the form limit, a path that does not decode): its status, no log.
    const status = requestFault(err);
    if (status !== undefined) {
      return sendPage(
        res,
        status,
        'Cannot do that',
        html`<h1>Cannot do that</h1>
          <p>${status === 413 ? 'The form is too large.' : 'The request is not valid.'}</p>`,
      );
    }
    deps.logger.error('sandbox page failed', { error: err instanceof Error ? err.stack : String(err) });
    sendPage(
      res,
      500,
      'Error',
      html`<h1>Something went wrong</h1>
        <p>Please try again.</p>`,
    );
  };
  r.use(errors);
  return r;
}

/**
 * The 4xx of a refusal of the request itself (the rule of http's `clientStatus`, which this adapter
 * does not import): an error that says its status may be shown (`expose: true`, as body-parser and
 * http-errors set it), or express's URIError (status 400) for a path that does not decode. Any other
 * error's `status`/`statusCode` (Stripe's 401, an upstream's answer) is a fault: logged, a 500.
 */
function requestFault(err: unknown): number | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const e = err as { status?: unknown; statusCode?: unknown; expose?: unknown };
  const pathNotDecoded = err instanceof URIError && e.status === 400;
  if (e.expose !== true && !pathNotDecoded) return undefined;
  const status = typeof e.status === 'number' ? e.status : e.statusCode;
  return typeof status === 'number' && Number.isInteger(status) && status >= 400 && status < 500 ? status : undefined;
}
