import { invalid, productCurrencies, type Core, type ProductCatalog } from '@tollgate/core';
import { arrayOf, nstr, object, querySchema, type Route } from '@tollgate/http';
import type { V1Services } from '@tollgate/app-v1';

/** The two generations this app serves: one domain, two route tables (v3 spells paths in kebab-case). */
export type Version = 'v2' | 'v3';
export const VERSIONS: readonly Version[] = ['v2', 'v3'];

/** What the v2 and v3 generations need: v1's services plus the use cases only they call. */
export interface V2Services extends Omit<V1Services, 'core'> {
  core: V1Services['core'] & Pick<Core, 'subscriptionAdmin' | 'granteeUsage' | 'coupons' | 'subscriptions' | 'licenses'>;
}

/** A resource module: its routes for one version. */
export type RouteModule = (s: V2Services, version: Version) => Route[];

/** The paged envelope: ids of the first and last item (null on an empty page) and the items. */
export const paged = <T extends { uuid: string }>(data: T[]) => ({
  first: data.length ? data[0].uuid : null,
  last: data.length ? data[data.length - 1].uuid : null,
  data,
});
export const pageSchema = (item: object) => object({ first: nstr, last: nstr, data: arrayOf(item) });

const take = { type: 'string', pattern: '^(100|[1-9][0-9]?)$' } as const;
const sort = { enum: ['asc', 'desc'] } as const;
const cursor = { type: 'string', format: 'uuid' } as const;

/** `cursor` (the id of the item the page starts after), `take` (1..100, default 20) and `sort`. */
export const pageProps = { cursor, take, sort } as const;
export const pageQuery = querySchema(pageProps);

export const takeOf = (q: { take?: string }) => (q.take === undefined ? 20 : Number(q.take));

/**
 * A page of an ordered list held in memory (a product's plans or features, an organisation's
 * products): after the item `cursor` names (exclusive), `take` items, in `sort` order.
 */
export function pageOfList<T>(items: T[], idOf: (t: T) => string, q: { cursor?: string; take?: string; sort?: string }): T[] {
  const ordered = q.sort === 'desc' ? [...items].reverse() : items;
  let start = 0;
  if (q.cursor !== undefined) {
    const at = ordered.findIndex((t) => idOf(t) === q.cursor);
    start = at < 0 ? ordered.length : at + 1;
  }
  return ordered.slice(start, start + takeOf(q));
}

/** `currency` of a pricing table: one the product is sold in (any case), upper-cased; or a 400 naming them. */
export function currencyOf(catalog: ProductCatalog, currency: string | undefined): string | undefined {
  if (currency === undefined) return undefined;
  const sold = productCurrencies(catalog).map((c) => c.currency.shortName.toUpperCase());
  const wanted = currency.toUpperCase();
  return sold.includes(wanted) ? wanted : invalid('currency', `the product is sold in ${sold.join(', ')}`);
}
