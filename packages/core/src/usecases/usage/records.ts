import type { Id, Page, Tenant, UsageMeter, UsageRecordRow, UsageRecordStatus } from '../../model';
import type { Repositories } from '../../ports';
import { compareKeys, encodeCursor, pageOf } from '../../support/pagination';

/** One source's page of rows, and whether rows lie beyond it on either side. */
interface SourcePage {
  items: UsageRecordRow[];
  /** Rows newer than the page (past its last). */
  hasMore: boolean;
  /** Rows older than the page (before its first). */
  hasPrevious: boolean;
}

const sourcePage = <T>(page: Page<T>, row: (x: T) => UsageRecordRow): SourcePage => ({
  items: page.items.map(row),
  hasMore: page.hasMore,
  hasPrevious: page.previousCursor !== null,
});

/**
 * One page of usage records as the published list shows them, oldest first: each status asked for
 * is read by keyset from the cursor (`recorded` ledger entries, `final` closed periods, `current` the
 * owner's open balances) and the pages are merged by (createdAt, id). `after` gives the rows
 * following the cursor, `before` those preceding it (what a newest-first list pages with).
 */
export async function pageUsageRecords(
  r: Repositories,
  tenant: Tenant,
  q: { limit: number; after?: string; before?: string; owner?: string; meterId?: Id; statuses: UsageRecordStatus[] },
): Promise<{ page: Page<UsageRecordRow>; meters: Map<Id, UsageMeter> }> {
  const backwards = q.after === undefined && q.before !== undefined;
  const cursor = backwards ? { before: q.before } : { after: q.after };
  const query = { limit: q.limit, ...cursor, owner: q.owner, meterId: q.meterId };
  const sources: SourcePage[] = [];
  if (q.statuses.includes('recorded'))
    sources.push(
      sourcePage(await r.usage.pageRecords(tenant, query), (e) => ({
        id: e.id,
        organisationId: e.organisationId,
        owner: e.owner,
        meterId: e.meterId,
        balanceId: e.balanceId,
        status: 'recorded',
        kind: e.kind as 'record' | 'consume' | 'commit',
        count: e.quantity,
        idempotencyKey: e.idempotencyKey,
        periodStart: null,
        periodEnd: null,
        createdAt: e.createdAt,
        updatedAt: e.createdAt,
      })),
    );
  if (q.statuses.includes('final'))
    sources.push(
      sourcePage(await r.usage.pageCloses(tenant, query), (c) => ({
        id: c.id,
        organisationId: c.organisationId,
        owner: c.owner,
        meterId: c.meterId,
        balanceId: c.balanceId,
        status: 'final',
        kind: 'close',
        count: c.finalUsage,
        idempotencyKey: null,
        periodStart: c.periodStart,
        periodEnd: c.periodEnd,
        createdAt: c.createdAt,
        updatedAt: c.createdAt,
      })),
    );
  if (q.statuses.includes('current')) {
    // An owner's open balances are few: paged in memory.
    const open = (await r.usage.openBalances(tenant, q.owner as string, q.meterId)).map((b): UsageRecordRow => ({
      id: b.id,
      organisationId: b.organisationId,
      owner: b.owner,
      meterId: b.meterId,
      balanceId: b.id,
      status: 'current',
      kind: 'current',
      count: b.used,
      idempotencyKey: null,
      periodStart: b.periodStart,
      periodEnd: b.periodEnd,
      createdAt: b.createdAt,
      updatedAt: b.updatedAt,
    }));
    sources.push(sourcePage(pageOf(open, { limit: q.limit, ...cursor }), (x) => x));
  }
  const rows = sources.flatMap((p) => p.items).sort(compareKeys);
  const cut = rows.length > q.limit;
  // Each source gave its `limit` rows nearest the cursor: the page is the nearest `limit` of them all.
  const items = backwards ? rows.slice(rows.length - Math.min(rows.length, q.limit)) : rows.slice(0, q.limit);
  const hasMore = sources.some((p) => p.hasMore) || (!backwards && cut);
  const hasPrevious = sources.some((p) => p.hasPrevious) || (backwards && cut);
  const page: Page<UsageRecordRow> = {
    items,
    hasMore,
    nextCursor: hasMore && items.length ? encodeCursor(items[items.length - 1]) : null,
    previousCursor: hasPrevious && items.length ? encodeCursor(items[0]) : null,
  };
  const meters = new Map((await r.usage.getMeters([...new Set(items.map((x) => x.meterId))])).map((m) => [m.id, m]));
  return { page, meters };
}
