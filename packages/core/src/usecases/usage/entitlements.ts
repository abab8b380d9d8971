import { invalid } from '../../errors';
import { available, exactNumber } from '../../domain/usage';
import type { Tenant } from '../../model';
import type { Clock, UnitOfWork } from '../../ports';
import { capabilitiesByPlan } from '../licenses';
import type { SigningKeys } from '../signing';

/** How long a signed entitlement answer may be cached and trusted by a client. */
export const ENTITLEMENTS_TTL_SECONDS = 60;

const GRANTING = new Set(['ACTIVE', 'TRIALING', 'EVALUATION']);

export type EntitlementEntry =
  | { type: 'entitlement'; value: string; expiryDate: string | null }
  | { type: 'meter'; value: string; expiryDate: string | null; remaining: number | null; used: number; granted: number };

export interface SignedEntitlements {
  entitlements: EntitlementEntry[];
  /** Until when the answer may be used (`ENTITLEMENTS_TTL_SECONDS` from now). */
  expiresAt: string;
  /** The exact text signed: `JSON.stringify({granteeId, entitlements, expiresAt})`, with `owner` after `granteeId` when one was asked. */
  signed: string;
  signature: string;
  publicHash: string;
}

/**
 * `GET /api/entitlements/check?granteeId=`: what a grantee may use (capabilities of its granting
 * licenses) and what is left of each meter (the balances of the grantee and of the subscriptions
 * and ad hoc licenses it holds), signed with the signing key of the organisation and the caller's
 * mode, with an expiry, so a client may cache the answer until then and verify it offline.
 */
export class EntitlementsCheck {
  constructor(private readonly deps: { uow: UnitOfWork; clock: Clock; signing: Pick<SigningKeys, 'sign'> }) {}

  async check(tenant: Tenant, granteeId: string, owner?: string): Promise<SignedEntitlements> {
    if (!granteeId || granteeId.length > 255) invalid('granteeId', 'must be 1 to 255 characters');
    if (owner !== undefined && (!owner || owner.length > 255)) invalid('owner', 'must be 1 to 255 characters');
    const now = this.deps.clock.now();
    const entitlements = await this.deps.uow.read(async (r) => {
      const licenses = (await r.licenses.list(tenant, { granteeId })).filter(
        (l) => GRANTING.has(l.status) && l.startTime <= now && (!l.endTime || l.endTime > now),
      );
      const caps = await capabilitiesByPlan(
        r,
        licenses.map((l) => l.planId),
      );
      const byName = new Map<string, string | null>();
      for (const l of licenses)
        for (const c of caps.get(l.planId) ?? []) {
          const end = l.endTime?.toISOString() ?? null;
          const had = byName.get(c.name);
          // The latest end wins; a license without an end outlasts every other.
          byName.set(c.name, had === undefined ? end : had === null || end === null ? null : had > end ? had : end);
        }
      const owners = [...new Set([granteeId, ...(owner ? [owner] : []), ...licenses.map((l) => l.subscriptionId ?? l.id)])];
      const balances = (await Promise.all(owners.map((o) => r.usage.openBalances(tenant, o)))).flat();
      const meters = new Map((await r.usage.getMeters([...new Set(balances.map((b) => b.meterId))])).map((m) => [m.id, m]));
      const entries: EntitlementEntry[] = [...byName.entries()]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([value, expiryDate]) => ({ type: 'entitlement', value, expiryDate }));
      for (const b of balances) {
        const left = available(b);
        const meter = meters.get(b.meterId);
        const scale = meter?.scale;
        if (meter)
          entries.push({
            type: 'meter',
            value: meter.slug,
            expiryDate: b.periodEnd?.toISOString() ?? null,
            remaining: left === null ? null : exactNumber(left, scale),
            used: exactNumber(b.used, scale),
            granted: exactNumber(b.granted, scale),
          });
      }
      return entries;
    });
    const expiresAt = new Date(now.getTime() + ENTITLEMENTS_TTL_SECONDS * 1000).toISOString();
    // The signature covers whose meters these are: with an owner asked, `owner` is in the signed
    // text, so an answer with another owner's balances cannot pass for the grantee's own.
    const signed = JSON.stringify(owner ? { granteeId, owner, entitlements, expiresAt } : { granteeId, entitlements, expiresAt });
    const { signature, publicHash } = await this.deps.signing.sign(tenant, signed);
    return { entitlements, expiresAt, signed, signature, publicHash };
  }
}
