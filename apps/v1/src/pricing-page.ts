import fs from 'node:fs';
import path from 'node:path';
import express, { type Request, type Response } from 'express';
import { clientStatus, cspHash, loggableRequestPath, setPageSecurity } from '@tollgate/http';
import {
  BUSY_RETRY_AFTER_SECONDS,
  DATABASE_RETRY_AFTER_SECONDS,
  DomainError,
  ErrorCodes,
  isOutage,
  formatMoney,
  html,
  Html,
  planTerms,
  pricePeriod,
  productCurrencies,
  type CheckoutLinkRequest,
  type Core,
  type Id,
  type Logger,
  type Tenant,
} from '@tollgate/core';
import { deferredCheckoutLinks, type LinkServices } from './links';
import { v1PricingTable } from './views';

/**
 * The hosted pricing table (DESIGN section 13): `GET /pricing-tables/:uuid/page?token=...` renders a
 * pricing table as HTML for a customer, with no API key. The vendor's server asks for the link with
 * its key (`GET /pricing-tables/:uuid/page-link`, v1) for one customer (member, grantee, success and
 * cancel addresses, the checkout options), and gets a signed link that expires: the page can show
 * nothing the key could not read, and its buttons are the pricing table's deferred checkout links.
 * `format=fragment` answers the same markup without the document around it, for the
 * `<tollgate-pricing-table>` web component (`/embed/pricing-table.js`), which shows it in its
 * shadow root on the vendor's own site.
 */

/** What a pricing page link carries (signed); `kind` keeps it from being taken for another signed link. */
export interface PricingPageGrant {
  kind: 'pricing-page';
  organisationId: Id;
  isTest: boolean;
  pricingTableId: Id;
  request: CheckoutLinkRequest;
}

/** How long a pricing page link stays valid. */
export const PRICING_PAGE_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export interface PricingPageLinkServices extends LinkServices {
  queries: Pick<Core['queries'], 'getPricingTable'>;
}

export interface PricingPageServices extends PricingPageLinkServices {
  logger: Logger;
}

/** A signed, expiring link to the hosted page of a pricing table for one customer (checked now). */
export async function pricingPageLink(
  s: PricingPageLinkServices,
  tenant: Tenant,
  pricingTableId: Id,
  request: CheckoutLinkRequest,
): Promise<{ url: string; expiresAt: string }> {
  const view = await s.queries.getPricingTable(tenant, pricingTableId);
  // Every plan's checkout must be possible for this request before a link is handed out.
  await deferredCheckoutLinks(s, tenant, view.plans, view.catalog, request);
  const now = s.clock.now();
  const grant: PricingPageGrant = { kind: 'pricing-page', ...tenant, pricingTableId, request };
  const token = s.links.sign(grant, PRICING_PAGE_TTL_MS, now);
  return {
    url: `${s.config.publicUrl}/pricing-tables/${pricingTableId}/page?token=${token}`,
    expiresAt: new Date(now.getTime() + PRICING_PAGE_TTL_MS).toISOString(),
  };
}

type TableView = ReturnType<typeof v1PricingTable>;
type PlanView = TableView['plans'][number]['plan'];

/** A plan's value of a feature, as a customer reads it. */
function featureValue(plan: PlanView, featureId: Id): string {
  const v = plan.features?.find((f) => f.featureUuid === featureId);
  if (!v) return '—';
  if (v.isUnlimited) return 'Unlimited';
  const type = v.feature?.valueType;
  if (type === 'boolean') return v.value === 'true' ? 'Included' : 'Not included';
  if (type === 'enum') return v.enumValue?.name ?? v.value;
  return v.value === '' ? '—' : v.value;
}

function priceOf(plan: PlanView, currency: string): Html {
  if (plan.pricingType === 'free') return html`<span class="amount">Free</span>`;
  const price = plan.currencies?.find((c) => c.currency?.shortName === currency);
  if (!price) return html`<span class="amount">Not sold in ${currency}</span>`;
  return html`<span class="amount">${formatMoney(price.price, currency)}</span> <span class="per">${pricePeriod(plan)}</span>`;
}

/** Minimum seats and free days, beside the price (the checkout page shows the same). */
function termsOf(plan: PlanView): Html | string {
  const terms = planTerms(plan);
  return terms.length ? html`<p class="terms">${terms.join(' · ')}</p>` : '';
}

/**
 * The pricing table's markup (the page's body and the component's content). Without `currencyHref`
 * (the link pins a currency) there is no currency switch.
 */
export function pricingTableMarkup(view: TableView, currency: string, currencyHref: ((code: string) => string) | undefined): Html {
  const currencies = currencyHref
    ? (view.product.currencies ?? [])
        .map((c) => c.currency?.shortName)
        .filter((c): c is string => !!c)
        .map((c) => ({ c, href: currencyHref(c) }))
    : [];
  const sellable = (p: PlanView) => p.pricingType === 'free' || !!p.currencies?.some((c) => c.currency?.shortName === currency);
  return html`<section class="tollgate-pricing" aria-labelledby="tollgate-pricing-title">
    <h1 id="tollgate-pricing-title">${view.title || view.name}</h1>
    ${view.text ? html`<p class="intro">${view.text}</p>` : ''}
    ${
      currencies.length > 1
        ? html`<nav class="currencies" aria-label="Currency">
            <span id="tollgate-currency-label">Currency:</span>
            <ul role="list">
              ${currencies.map(
                ({ c, href }) =>
                  html`<li>
                    <a href="${href}" data-currency="${c}" ${new Html(c === currency ? 'aria-current="true"' : '')}>${c}</a>
                  </li>`,
              )}
            </ul>
          </nav>`
        : ''
    }
    <ul class="plans" role="list">
      ${view.plans.map(({ plan }) => {
        const featured = plan.uuid === view.featuredPlanUuid;
        return html`<li class="plan${featured ? ' featured' : ''}" data-plan="${plan.uuid}">
          <article aria-labelledby="plan-${plan.uuid}">
            <h2 id="plan-${plan.uuid}">${plan.displayName || plan.name}</h2>
            ${featured ? html`<p class="badge">Recommended</p>` : ''} ${plan.description ? html`<p>${plan.description}</p>` : ''}
            <p class="price">${priceOf(plan, currency)}</p>
            ${termsOf(plan)}
            <dl class="features">
              ${view.features.map(
                (f) =>
                  html`<dt>${f.feature.displayName || f.feature.name}</dt>
                    <dd>${featureValue(plan, f.featureUuid)}</dd>`,
              )}
            </dl>
            ${
              plan.checkoutUrl && sellable(plan)
                ? html`<a class="buy" href="${plan.checkoutUrl}" target="_top">Choose ${plan.displayName || plan.name}</a>`
                : ''
            }
          </article>
        </li>`;
      })}
    </ul>
  </section>`;
}

/** The styles of the table (the page's and, inside its shadow root, the component's). */
export const PRICING_TABLE_STYLE = `
  .tollgate-pricing { font-family: system-ui, sans-serif; color: #1b1f24; }
  .tollgate-pricing h1 { font-size: 1.8rem; margin: 0 0 .5rem; text-align: center; }
  .tollgate-pricing .intro { text-align: center; }
  .tollgate-pricing .currencies { display: flex; gap: .5rem; justify-content: center; align-items: center; margin: 1rem 0; }
  .tollgate-pricing .currencies ul { display: flex; gap: .25rem; list-style: none; padding: 0; margin: 0; }
  .tollgate-pricing .currencies a { display: inline-block; padding: .3rem .7rem; border: 1px solid #0b5fff; border-radius: 999px; color: #0b5fff; text-decoration: none; }
  .tollgate-pricing .currencies a[aria-current="true"] { background: #0b5fff; color: #fff; }
  .tollgate-pricing .plans { display: grid; grid-template-columns: repeat(auto-fit, minmax(14rem, 1fr)); gap: 1rem; list-style: none; padding: 0; }
  .tollgate-pricing .plan article { background: #fff; border: 1px solid #d5d9e0; border-radius: 12px; padding: 1.5rem; height: 100%; box-sizing: border-box; display: flex; flex-direction: column; }
  .tollgate-pricing .plan.featured article { border: 2px solid #0b5fff; box-shadow: 0 4px 14px rgba(11,95,255,.15); }
  .tollgate-pricing .plan h2 { margin: 0; font-size: 1.3rem; }
  .tollgate-pricing .badge { display: inline-block; align-self: flex-start; background: #e8f0ff; color: #0b3fb0; padding: .15rem .6rem; border-radius: 999px; font-size: .85rem; margin: .4rem 0 0; }
  .tollgate-pricing .price .amount { font-size: 1.8rem; font-weight: 700; }
  .tollgate-pricing .terms { color: #4a5260; font-size: .9rem; margin-top: -.5rem; }
  .tollgate-pricing dl { display: grid; grid-template-columns: 1fr auto; gap: .3rem 1rem; margin: 0 0 1.5rem; }
  .tollgate-pricing dt { color: #4a5260; } .tollgate-pricing dd { margin: 0; font-weight: 600; text-align: right; }
  .tollgate-pricing .buy { margin-top: auto; display: block; text-align: center; padding: .7rem 1rem; border-radius: 8px; background: #0b5fff; color: #fff; text-decoration: none; font-weight: 600; }
  .tollgate-pricing a:focus-visible { outline: 3px solid #ffbf47; outline-offset: 2px; }
`;

const EMBED_SCRIPT = fs.readFileSync(path.join(__dirname, '..', 'assets', 'pricing-table.js'), 'utf8');

/** The hosted page's styles: its own and the table's (one inline style, allowed by its hash). */
const DOCUMENT_STYLE = `
  body { margin: 0; background: #f5f6f8; }
  main { max-width: 64rem; margin: 2rem auto; padding: 0 1rem; }
  ${PRICING_TABLE_STYLE}`;

/**
 * The page carries its signed link in its address (no referrer), loads nothing but its inline style
 * (by hash), runs no script and is never framed: the documented way to show the table on another
 * site is the web component, which fetches the fragment (no frame).
 */
const PAGE_POLICY = { styles: [cspHash(DOCUMENT_STYLE), cspHash(PRICING_TABLE_STYLE)], secretUrl: true };

function sendHtml(res: Response, status: number, text: string) {
  res.status(status);
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  setPageSecurity(res, PAGE_POLICY);
  res.end(text);
}

const document = (title: string, body: Html) =>
  html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title}</title>
        ${new Html(`<style>${DOCUMENT_STYLE}</style>`)}
      </head>
      <body>
        <main>${body}</main>
      </body>
    </html>`.text;

/** A pricing page (or its fragment) that only says why it cannot show plans. */
function sendAlert(res: Response, fragment: boolean, status: number, message: string): void {
  if (fragment) return sendHtml(res, status, html`<p role="alert">${message}</p>`.text);
  sendHtml(
    res,
    status,
    document(
      'Pricing',
      html`<h1>Pricing</h1>
        <p role="alert">${message}</p>`,
    ),
  );
}

/** The hosted page, its fragment for the web component, and the component's script. */
export function createPricingPageRouter(s: PricingPageServices): express.Router {
  const r = express.Router();
  r.get('/embed/pricing-table.js', (_req, res) => {
    res.setHeader('Content-Type', 'text/javascript; charset=utf-8');
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.end(EMBED_SCRIPT);
  });
  r.get('/pricing-tables/:pricingTableUuid/page', async (req: Request, res: Response) => {
    // The fragment is read by the component from the vendor's own site: any origin may fetch it
    // (it holds what the signed link grants, nothing more).
    res.setHeader('Access-Control-Allow-Origin', '*');
    const fragment = req.query.format === 'fragment';
    const notValid = (status: number, message: string) => sendAlert(res, fragment, status, message);
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    const grant = s.links.verify<PricingPageGrant>(token, s.clock.now());
    if (!grant || grant.kind !== 'pricing-page' || grant.pricingTableId !== req.params.pricingTableUuid)
      return notValid(404, 'This pricing link is not valid or has expired. Please go back and open it again.');
    const tenant: Tenant = { organisationId: grant.organisationId, isTest: grant.isTest };
    try {
      const view = await s.queries.getPricingTable(tenant, grant.pricingTableId);
      const offered = view.catalog.currencies;
      const codes = [...offered.values()].map((c) => c.shortName);
      // A currency the vendor pinned in the signed link is the page's: `?currency` (unsigned, the
      // switch's) is read only when the link leaves the choice to the customer.
      const pinned = grant.request.currency?.toUpperCase();
      const asked = !pinned && typeof req.query.currency === 'string' ? req.query.currency.toUpperCase() : undefined;
      const preset = productCurrencies(view.catalog).find((c) => c.link.isDefault)?.currency.shortName;
      const fallback = pinned ?? preset ?? codes[0] ?? 'USD';
      const currency = asked && codes.includes(asked) ? asked : fallback;
      const request = { ...grant.request, currency };
      const table = v1PricingTable(view, await deferredCheckoutLinks(s, tenant, view.plans, view.catalog, request));
      const href = pinned
        ? undefined
        : (code: string) =>
            `${s.config.publicUrl}/pricing-tables/${grant.pricingTableId}/page?token=${encodeURIComponent(token)}&currency=${code}${fragment ? '&format=fragment' : ''}`;
      const markup = pricingTableMarkup(table, currency, href);
      sendHtml(res, 200, fragment ? `<style>${PRICING_TABLE_STYLE}</style>${markup.text}` : document(table.title || table.name, markup));
    } catch (e) {
      // The table, a plan or the product changed since the link was made (archived, no longer sold).
      // An outage is not that: the error handler's 503.
      if (!(e instanceof DomainError) || isOutage(e)) throw e;
      notValid(409, 'These plans cannot be bought right now. Please go back and open the pricing page again.');
    }
  });
  // A request refused before the handler (a path that does not decode: express's 400): that status,
  // the page of a link that is not valid, nothing logged. The database down or every connection in
  // use: 503 with the APIs' Retry-After, "try again shortly", nothing logged (the outage is reported
  // where it is met). Anything unexpected: a plain page, logged with its request id, never a stack trace.
  r.use((err: unknown, req: Request, res: Response, _next: express.NextFunction) => {
    const refused = (status: number, message: string) => sendAlert(res, req.query.format === 'fragment', status, message);
    if (isOutage(err)) {
      const seconds = err.code === ErrorCodes.BUSY ? BUSY_RETRY_AFTER_SECONDS : DATABASE_RETRY_AFTER_SECONDS;
      res.setHeader('Retry-After', String(seconds));
      return refused(503, 'The pricing table cannot be shown right now. Please try again shortly.');
    }
    const status = clientStatus(err);
    if (status !== undefined) return refused(status, 'This pricing link is not valid. Please go back and open it again.');
    s.logger.error('pricing page failed', { requestId: res.locals.requestId, path: loggableRequestPath(req), error: String(err) });
    sendHtml(
      res,
      500,
      document(
        'Pricing',
        html`<h1>Pricing</h1>
          <p role="alert">Something went wrong. Please try again later.</p>`,
      ),
    );
  });
  return r;
}
