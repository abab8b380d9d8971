import type { Id, Page, Tenant, UsageMeter, UsageRecordRow, UsageRecordStatus } from '../../model';
import type { Repositories } from '../../ports';
import { compareKeys, decodeCursor, encodeCursor } from '../../support/pagination';

/**
 * One page of usage records as the published list shows them: each status asked for is read from
 * the cursor on (`recorded` ledger entries and `final` closed periods by keyset, `current` the
 * owner's open balances) and the pages are merged by (createdAt, id).
 */
export async function pageUsageRecords(
  r: Repositories,
  tenant: Tenant,
  q: { limit: number; after?: string; owner?: string; meterId?: Id; statuses: UsageRecordStatus[] },
): Promise<{ page: Page<UsageRecordRow>; meters: Map<Id, UsageMeter> }> {
  const after = q.after === undefined ? undefined : decodeCursor(q.after, 'after');
  const query = { limit: q.limit, after: q.after, owner: q.owner, meterId: q.meterId };
  const rows: UsageRecordRow[] = [];
  let more = false;
  if (q.statuses.includes('recorded')) {
    const page = await r.usage.pageRecords(tenant, query);
    more ||= page.hasMore;
    for (const e of page.items)
      rows.push({
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
      });
  }
  if (q.statuses.includes('final')) {
    const page = await r.usage.pageCloses(tenant, query);
    more ||= page.hasMore;
    for (const c of page.items)
      rows.push({
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
      });
  }
  if (q.statuses.includes('current'))
    for (const b of await r.usage.openBalances(tenant, q.owner as string, q.meterId))
      if (!after || compareKeys(b, after) > 0)
        rows.push({
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
        });
  rows.sort(compareKeys);
  const items = rows.slice(0, q.limit);
  const hasMore = more || rows.length > q.limit;
  const page: Page<UsageRecordRow> = {
    items,
    hasMore,
    nextCursor: hasMore && items.length ? encodeCursor(items[items.length - 1]) : null,
    previousCursor: null,
  };
  const meters = new Map((await r.usage.getMeters([...new Set(items.map((x) => x.meterId))])).map((m) => [m.id, m]));
  return { page, meters };
}
