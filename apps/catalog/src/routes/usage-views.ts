import type { BalanceView, UsageAnswer, UsageMeter, UsageRecordRow } from '@tollgate/core';
import { available, exactNumber } from '@tollgate/core';
import { object } from '../response-schemas';

/**
 * Quantities leave as JSON numbers: every counter is bounded by 10^15 (MAX_COUNTER), well within
 * what a JSON number holds exactly; `exactNumber` refuses rather than rounds past 2^53 - 1.
 */
const n = exactNumber;

export const meterView = (m: UsageMeter) => ({
  id: m.id,
  organisation: m.organisationId,
  slug: m.slug,
  name: m.name,
  unitLabel: m.unitLabel,
  scale: m.scale ?? 0,
  paymentMeterId: m.paymentMeterId,
  // The published Meter's name for the payment provider's meter id.
  stripeMeterId: m.paymentMeterId,
  createdAt: m.createdAt.toISOString(),
  updatedAt: m.updatedAt.toISOString(),
});

export const answerView = (a: UsageAnswer) => ({
  allowed: a.allowed,
  owner: a.owner,
  meterSlug: a.meterSlug,
  granted: n(a.granted),
  used: n(a.used),
  reserved: n(a.reserved),
  remaining: a.remaining === null ? null : n(a.remaining),
  periodEnd: a.periodEnd,
});

export const balanceView = ({ balance: b, meter }: BalanceView) => {
  const left = available(b);
  const scale = meter.scale;
  return {
    owner: b.owner,
    meterSlug: meter.slug,
    granted: n(b.granted, scale),
    used: n(b.used, scale),
    reserved: n(b.reserved, scale),
    remaining: left === null ? null : n(left, scale),
    periodStart: b.periodStart.toISOString(),
    periodEnd: b.periodEnd?.toISOString() ?? null,
  };
};

/** A usage record as published (`UsageRecord`: ownerId, usageId, status, count...) with Tollgate's own members. */
export const usageRecordView = (meters: Map<string, UsageMeter>) => (r: UsageRecordRow) => ({
  id: r.id,
  organisation: r.organisationId,
  ownerId: r.owner,
  usageId: r.balanceId,
  status: r.status,
  count: n(r.count, meters.get(r.meterId)?.scale),
  recordedAt: r.status === 'current' ? null : r.createdAt.toISOString(),
  createdAt: r.createdAt.toISOString(),
  updatedAt: r.updatedAt.toISOString(),
  owner: r.owner,
  meterSlug: meters.get(r.meterId)?.slug ?? null,
  type: r.kind,
  idempotencyKey: r.idempotencyKey,
  periodStart: r.periodStart?.toISOString() ?? null,
  periodEnd: r.periodEnd?.toISOString() ?? null,
});

/** Counters: whole numbers on a whole-unit meter (scale 0), decimals on a meter with a scale. */
const num = { type: 'number' } as const;
const nnum = { type: ['number', 'null'] } as const;
const nstr = { type: ['string', 'null'] } as const;
const int = { type: 'integer' } as const;
const str = { type: 'string' } as const;

/** The balance after a usage operation (JSON Schema; the tests validate every answer against it). */
export const answerProps = {
  allowed: { type: 'boolean' },
  owner: str,
  meterSlug: str,
  granted: num,
  used: num,
  reserved: num,
  remaining: nnum,
  periodEnd: nstr,
};
export const answerSchema = object(answerProps);
export const meterSchema = object({
  id: str,
  organisation: str,
  slug: str,
  name: str,
  unitLabel: nstr,
  scale: int,
  paymentMeterId: str,
  stripeMeterId: str,
  createdAt: str,
  updatedAt: str,
});
export const balanceSchema = object({
  owner: str,
  meterSlug: str,
  granted: num,
  used: num,
  reserved: num,
  remaining: nnum,
  periodStart: str,
  periodEnd: nstr,
});
export const usageRecordSchema = object({
  id: str,
  organisation: str,
  ownerId: str,
  usageId: str,
  status: { enum: ['recorded', 'current', 'final'] },
  count: num,
  recordedAt: nstr,
  createdAt: str,
  updatedAt: str,
  owner: str,
  meterSlug: nstr,
  type: { enum: ['record', 'consume', 'commit', 'current', 'close'] },
  idempotencyKey: nstr,
  periodStart: nstr,
  periodEnd: nstr,
});

/** The `owner` + `meterSlug` of a usage body. */
export const targetProps = {
  owner: { type: 'string', minLength: 1, maxLength: 255 },
  meterSlug: { type: 'string', minLength: 1, maxLength: 64 },
};
/**
 * A quantity as a JSON number: whole on a whole-unit meter, with at most the meter's scale of
 * decimal places otherwise (core checks that, the digits and the bounds, and names the field).
 */
export const quantitySchema = { type: 'number' };

/** The usage resources' tags in /docs. */
export const USAGE_TAG = { name: 'usage', description: 'Usage: record, consume, reserve -> commit | release; exact and idempotent' };
