import type { BalanceView, LedgerEntry, UsageAnswer, UsageMeter } from '@tollgate/core';
import { available } from '@tollgate/core';

/**
 * Quantities leave as JSON numbers: every counter is bounded by 10^15 (MAX_COUNTER), well within
 * what a JSON number holds exactly.
 */
const n = (v: string | bigint) => Number(v);

export const meterView = (m: UsageMeter) => ({
  id: m.id,
  organisation: m.organisationId,
  slug: m.slug,
  name: m.name,
  unitLabel: m.unitLabel,
  paymentMeterId: m.paymentMeterId,
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
  return {
    owner: b.owner,
    meterSlug: meter.slug,
    granted: n(b.granted),
    used: n(b.used),
    reserved: n(b.reserved),
    remaining: left === null ? null : n(left),
    periodStart: b.periodStart.toISOString(),
    periodEnd: b.periodEnd?.toISOString() ?? null,
  };
};

export const usageRecordView = (meters: Map<string, UsageMeter>) => (e: LedgerEntry) => ({
  id: e.id,
  organisation: e.organisationId,
  owner: e.owner,
  meterSlug: meters.get(e.meterId)?.slug ?? null,
  type: e.kind,
  count: n(e.quantity),
  idempotencyKey: e.idempotencyKey,
  recordedAt: e.createdAt.toISOString(),
  createdAt: e.createdAt.toISOString(),
});

const quantityProps = { type: 'object', required: ['granted', 'used', 'reserved', 'remaining'] };

/** JSON Schemas of the answers (the OpenAPI document and the tests validate against them). */
export const answerSchema = {
  type: 'object',
  properties: {
    allowed: { type: 'boolean' },
    owner: { type: 'string' },
    meterSlug: { type: 'string' },
    granted: { type: 'integer' },
    used: { type: 'integer' },
    reserved: { type: 'integer' },
    remaining: { type: ['integer', 'null'] },
    periodEnd: { type: ['string', 'null'] },
  },
  required: ['allowed', 'owner', 'meterSlug', 'granted', 'used', 'reserved', 'remaining', 'periodEnd'],
};
export const meterSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    organisation: { type: 'string' },
    slug: { type: 'string' },
    name: { type: 'string' },
    unitLabel: { type: ['string', 'null'] },
    paymentMeterId: { type: 'string' },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
  },
  required: ['id', 'organisation', 'slug', 'name', 'unitLabel', 'paymentMeterId', 'createdAt', 'updatedAt'],
};
export const balanceSchema = { ...quantityProps, properties: { owner: { type: 'string' }, meterSlug: { type: 'string' } } };
export const objectOf = (data: object) => ({ type: 'object', properties: { type: { const: 'object' }, data }, required: ['type', 'data'] });
export const listOf = (item: object) => ({
  type: 'object',
  properties: {
    type: { const: 'list' },
    data: { type: 'array', items: item },
    nextCursor: { type: ['string', 'null'] },
    previousCursor: { type: ['string', 'null'] },
    hasMore: { type: 'boolean' },
  },
  required: ['type', 'data', 'nextCursor', 'previousCursor', 'hasMore'],
});

/** The `owner` + `meterSlug` of a usage body. */
export const targetProps = {
  owner: { type: 'string', minLength: 1, maxLength: 255 },
  meterSlug: { type: 'string', minLength: 1, maxLength: 64 },
};
/** A quantity as a whole JSON number (core checks the bounds and names the field). */
export const quantitySchema = { type: 'integer' };
